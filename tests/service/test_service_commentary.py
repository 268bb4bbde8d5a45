"""The delayed commentary stream (server/commentary.py), checked differentially: no message
of it, on the websocket live, resumed, over HTTP, on two processes and after a restart, carries
a fact earlier than the room's delay after that fact's event, with every identity revealed;
a room without the option refuses it and its spectators' stream is as it was.

Times are compared on one machine, one clock: a command's sending time (the test's), the
event's recorded time (``at_ms``, the server's), and each message's arrival (the test's). The
assertions are orderings (arrival ≥ event time + delay ≥ sending time + delay), never upper
bounds, so a slow machine cannot fail them. The release rule itself is checked with a fake
clock.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable
from typing import Any

import httpx
from service_harness import (
    Game,
    Oracle,
    ServerThread,
    WsClient,
    check_feed,
    create_game,
    jsonable,
    seat,
    setup_command,
)

from olympus.bots import choose
from olympus.rules import Faction, Phase, encode
from olympus.rules.events import GameCreated, TurnStarted, to_dict
from olympus.server.commentary import Commentary, message
from olympus.server.protocol import JSON
from olympus.server.room_log import HeldLog
from olympus.store import EventStore

DELAY = 1  # seconds
COMMANDS = 8


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


class Arrivals:
    """When each message of a commentary socket arrived (the test's clock, ms)."""

    def __init__(self, client: WsClient) -> None:
        self.client = client
        self.at: dict[int, int] = {}
        self._task = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        """Notes each message as soon as the client's reader has it (a later note could only
        hide an early message, never fault a punctual one)."""
        seen = 0
        while not self.client.closed:
            try:
                await self.client.wait_for(
                    lambda n=seen: len(self.client.messages) > n, timeout=3600
                )
            except AssertionError:  # closed
                return
            now = wall_ms()
            for m in self.client.messages[seen:]:
                if m["type"] == "event":
                    self.at.setdefault(m["seq"], now)
            seen = len(self.client.messages)

    def stop(self) -> None:
        self._task.cancel()


def expected(oracle: Oracle) -> list[dict[str, Any]]:
    """The commentary's events: the unredacted log without its secret seeds."""
    return [message(jsonable(to_dict(e)), k + 1, 0)["event"] for k, e in enumerate(oracle.events)]


async def play(game: Game, oracle: Oracle, rng: random.Random, sent: dict[int, int]) -> None:
    """The setups, then ``COMMANDS`` random commands; ``sent``: version -> when the command
    that made it was sent (the test's clock)."""
    await oracle.sync()
    for faction in Faction:
        before, at = oracle.state.version, wall_ms()
        reply = await game.seats[faction].command("setup", setup_command(rng, faction))
        assert reply["type"] == "ack", reply
        await oracle.sync()
        sent.update({v: at for v in range(before + 1, oracle.state.version + 1)})
    for n in range(COMMANDS):
        state = await oracle.sync()
        if state.phase is Phase.OVER:
            return
        action = choose(rng, state)
        assert action is not None
        client = game.seats[action.command.side]
        await client.wait_for(lambda c=client: c.legal() != [])
        command = action.command.model_dump(mode="json", exclude={"side", "at_ms"})
        before, at = state.version, wall_ms()
        reply = await client.command(f"c{n}", command)
        assert reply["type"] == "ack", reply
        await oracle.sync()
        sent.update({v: at for v in range(before + 1, oracle.state.version + 1)})


async def stored_times(store: EventStore, room: str) -> dict[int, int]:
    return {e.version: e.at_ms for e in await store.read(room)}


def check_delays(
    arrivals: dict[int, int], times: dict[int, int], sent: dict[int, int], what: str
) -> None:
    """Each message arrived no sooner than its event's time plus the delay, and that time is
    no sooner than its command was sent (the server cannot date an event back)."""
    for seq, arrived in arrivals.items():
        assert times[seq] > 0, (what, seq)
        assert arrived >= times[seq] + DELAY * 1000, (what, seq, arrived - times[seq])
        if seq in sent:
            assert times[seq] >= sent[seq], (what, seq)


async def test_commentary_is_never_early_live_resumed_over_http_and_after_a_restart(
    start_server: Callable[..., ServerThread], store: EventStore
) -> None:
    a, b = start_server(), start_server()
    async with httpx.AsyncClient(base_url=a.url, timeout=30) as http:
        game = await create_game(http, broadcast_delay_seconds=DELAY)
        summary = (await http.get(f"/rooms/{game.room}")).json()
        assert summary["options"]["broadcast_delay_seconds"] == DELAY
    oracle = Oracle(store, game.room)
    for faction in Faction:
        await seat(a.ws_url, game, faction)
    spectator = await WsClient.open(b.ws_url)
    await spectator.hello(spectate=game.room, last_seq=0, epoch=game.epoch)
    live = await WsClient.open(b.ws_url)
    welcome = await live.hello(spectate=game.room, commentary=True)
    assert welcome["type"] == "welcome" and welcome["commentary"] == {"delay_seconds": DELAY}
    arrivals = Arrivals(live)
    sent: dict[int, int] = {}
    half = asyncio.get_running_loop().create_task(play(game, oracle, random.Random(5), sent))
    # Midway, a second follower leaves and resumes on the other process.
    second = await WsClient.open(a.ws_url)
    await second.hello(spectate=game.room, commentary=True, last_seq=0, epoch=game.epoch)
    second_arrivals = Arrivals(second)
    await second.wait_for(lambda: second.seq >= 3)
    resume_at = second.seq
    await second.close()
    second_arrivals.stop()
    await half
    version = oracle.state.version
    resumed = await WsClient.open(a.ws_url)
    welcome = await resumed.hello(
        spectate=game.room, commentary=True, last_seq=resume_at, epoch=game.epoch
    )
    assert welcome["resumed"] is True
    resumed_arrivals = Arrivals(resumed)
    for client in (live, resumed):
        await client.wait_seq(version)
    times = await stored_times(store, game.room)
    assert sorted(arrivals.at) == list(range(1, version + 1))
    assert second_arrivals.at and resumed_arrivals.at
    check_delays(arrivals.at, times, sent, "live")
    check_delays(second_arrivals.at, times, sent, "before the resume")
    check_delays(resumed_arrivals.at, times, sent, "resumed")
    assert min(resumed_arrivals.at) == resume_at + 1  # no gap, nothing twice
    full = expected(oracle)
    assert [m["event"] for m in live.events()] == full
    assert [m["seq"] for m in live.events()] == list(range(1, version + 1))
    assert [m["at_ms"] for m in live.events()] == [times[v] for v in range(1, version + 1)]
    assert "token_seed" not in live.events()[0]["event"]  # it tells of tokens to come
    assert any(
        m["event"]["t"] == "setup_submitted" and "placements" in m["event"]
        for m in live.events()[:version]
    )
    check_feed(spectator, None, oracle)  # the spectators' stream: neutral, as ever

    # Over HTTP, from either process, then from a process started after the others stopped:
    # what a read answers was due when it answered.
    async def read(server: ServerThread, after: int) -> tuple[dict[str, Any], int]:
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            body = await client.get(f"/rooms/{game.room}/commentary", params={"after": after})
            return body.json(), wall_ms()

    for server in (a, b):
        body, answered = await read(server, 0)
        assert body["seq"] == version and body["delay_seconds"] == DELAY
        assert [m["event"] for m in body["messages"]] == full
        check_delays({m["seq"]: answered for m in body["messages"]}, times, sent, "http")
    for client in (live, resumed, spectator, *game.seats.values()):
        await client.close()
    await a.aclose()
    await b.aclose()
    c = start_server()
    body, answered = await read(c, 2)
    assert [m["seq"] for m in body["messages"]] == list(range(3, version + 1))
    check_delays({m["seq"]: answered for m in body["messages"]}, times, sent, "restart")
    # A move after the restart is held back its delay on the new process too.
    for faction in Faction:
        await seat(c.ws_url, game, faction)
    follower = await WsClient.open(c.ws_url)
    await follower.hello(spectate=game.room, commentary=True, last_seq=version, epoch=game.epoch)
    after_restart = Arrivals(follower)
    await play_more(game, oracle, sent)
    await follower.wait_seq(oracle.state.version)
    times = await stored_times(store, game.room)
    assert after_restart.at
    check_delays(after_restart.at, times, sent, "after the restart")
    assert min(after_restart.at) == version + 1


async def play_more(game: Game, oracle: Oracle, sent: dict[int, int]) -> None:
    """One more command, by the side to play."""
    state = await oracle.sync()
    action = choose(random.Random(9), state)
    assert action is not None
    client = game.seats[action.command.side]
    await client.wait_for(lambda: client.legal() != [])
    command = action.command.model_dump(mode="json", exclude={"side", "at_ms"})
    before, at = state.version, wall_ms()
    assert (await client.command("more", command))["type"] == "ack"
    await oracle.sync()
    sent.update({v: at for v in range(before + 1, oracle.state.version + 1)})


async def test_without_the_option_nobody_gets_a_commentary(
    start_server: Callable[..., ServerThread], store: EventStore
) -> None:
    """A room without a broadcast delay refuses the commentary (the socket stays open: it may
    spectate instead), over HTTP too; its spectators get the neutral stream, unchanged."""
    server = start_server()
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        game = await create_game(http)
        assert (await http.get(f"/rooms/{game.room}")).json()["options"][
            "broadcast_delay_seconds"
        ] is None
        refused = await http.get(f"/rooms/{game.room}/commentary")
        assert refused.status_code == 403 and refused.json()["code"] == "no_commentary"
        client = await WsClient.open(server.ws_url)
        reply = await client.hello(spectate=game.room, commentary=True)
        assert reply["type"] == "error" and reply["code"] == "no_commentary"
        welcome = await client.hello(spectate=game.room, last_seq=0, epoch=game.epoch)
        assert welcome["type"] == "welcome" and "commentary" not in welcome
        bad = await WsClient.open(server.ws_url)
        reply = await bad.hello(token=game.tokens[Faction.OLYMPIANS], commentary=True)
        assert reply["type"] == "error" and reply["code"] == "bad_hello"
        oracle = Oracle(store, game.room)
        for faction in Faction:
            await seat(server.ws_url, game, faction)
        await play(game, oracle, random.Random(3), {})
        await client.wait_seq(len(oracle.messages(None)))
        check_feed(client, None, oracle)
        # Joining with the delay one was shown: a room with another is not joined.
        other = await create_game(http, broadcast_delay_seconds=5)
        fresh = (await http.post("/rooms", json={"broadcast_delay_seconds": 5})).json()
        wrong = await http.post(
            f"/rooms/{fresh['room']}/join", json={"broadcast_delay_seconds": None}
        )
        assert wrong.status_code == 409 and wrong.json()["code"] == "broadcast_delay_differs"
        right = await http.post(f"/rooms/{fresh['room']}/join", json={"broadcast_delay_seconds": 5})
        assert right.status_code == 200, right.text
        too_long = await http.post("/rooms", json={"broadcast_delay_seconds": 3601})
        assert too_long.status_code == 422 and too_long.json()["code"] == "bad_request"
        assert other.room


# -- the release rule, on a fake clock ---------------------------------------------------------


class FakeRoom:
    room_id = "room-fake"
    epoch = 7
    base = 0

    def __init__(self) -> None:
        self.log = HeldLog()
        self.over = False

    def over_frame(self, codec: Any) -> str:
        return codec.encode({"type": "game_over", "result": None, "log": []})


class Listener:
    codec = JSON

    def __init__(self) -> None:
        self.frames: list[str] = []

    def push(self, frame: Any) -> None:
        self.frames.append(frame)

    def close(self, code: int, reason: str) -> None:
        self.frames.append(f"closed {code}")


async def test_messages_are_released_in_order_each_a_delay_after_its_time() -> None:
    """Released at its time plus the delay and not a millisecond sooner, in order (a later
    event dated earlier waits for the one before it); an event without a time waits for the
    game's end; the secret seed is never in a message."""
    room, now = FakeRoom(), [10_000]
    stream = Commentary(room, 1_000, clock=lambda: now[0])
    room.log.append(encode(GameCreated(token_seed=123)), False, 10_000)
    room.log.append(encode(TurnStarted(faction=Faction.OLYMPIANS, number=1)), False, 10_500)
    room.log.append(encode(TurnStarted(faction=Faction.CHTHONIANS, number=2)), False, 10_400)
    room.log.append(encode(TurnStarted(faction=Faction.OLYMPIANS, number=3)), False, 0)
    listener = Listener()
    stream.attach(listener, None, None)
    assert stream.released == 0
    now[0] = 10_999
    stream.release()
    assert stream.released == 0
    now[0] = 11_000
    stream.release()
    assert stream.released == 1
    now[0] = 11_499
    stream.release()
    assert stream.released == 1  # the third is due, but the second is not
    now[0] = 11_500
    stream.release()
    assert stream.released == 3
    now[0] = 99_000
    stream.release()
    assert stream.released == 3  # no time: held until the end
    room.over = True
    stream.release()
    assert stream.released == 4
    assert stream.next_due_ms(1) == 11_500
    assert listener.frames[-1].startswith('{"type":"game_over"')
    first = stream.messages(0, 1)[0]
    assert first["at_ms"] == 10_000 and "token_seed" not in first["event"]
    resumed = Listener()
    assert stream.attach(resumed, 2, 7) is True
    assert [f for f in resumed.frames if '"event"' in f and '"seq":3' in f]
    stream.close_all(4409, "resync")
    assert listener.frames[-1] == "closed 4409" and stream.released == 0
