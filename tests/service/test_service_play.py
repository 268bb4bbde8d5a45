"""Whole games over real websockets, checked message by message against the log in Redis.

Two server processes share the Redis: one seat plays on each, so every event reaches the other
seat through the pub/sub fan-out. A random bot picks every command from ``legal_actions`` of
the true state, and the seat's last ``legal`` message must list exactly those actions.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable

import httpx
import pytest
from service_harness import (
    Oracle,
    ServerThread,
    WsClient,
    check_feed,
    create_game,
    drive,
    legal_wire,
    live_game,
    seat,
)

from olympus.bots_worker import SeatPlayer, WorkerConfig
from olympus.rules import Faction, Phase, legal_actions
from olympus.server import Settings
from olympus.server.computer import BotSeat
from olympus.store import EventStore

# The service's own logic: on the memory backend (tests/store shows both backends alike).
pytestmark = pytest.mark.memory_store


async def test_two_processes_play_a_game_to_the_end(
    http: httpx.AsyncClient,
    server: ServerThread,
    start_server: Callable[..., ServerThread],
    store: EventStore,
) -> None:
    other = start_server()
    game = await create_game(http)
    oracle = Oracle(store, game.room)
    # Resuming from 0 in the room's epoch: every message from the first one.
    start = {"last_seq": 0, "epoch": game.epoch}
    olympians = await seat(server.ws_url, game, Faction.OLYMPIANS, "olympus.json", **start)
    chthonians = await seat(other.ws_url, game, Faction.CHTHONIANS, "olympus.msgpack", **start)
    watch_json = await WsClient.open(other.ws_url, "olympus.json")
    watch_msgpack = await WsClient.open(server.ws_url, "olympus.msgpack")
    for spectator in (watch_json, watch_msgpack):
        welcome = await spectator.hello(spectate=game.room, **start)
        assert welcome["resumed"] is True
    watchers = [
        (Faction.OLYMPIANS, olympians),
        (Faction.CHTHONIANS, chthonians),
        (None, watch_json),
        (None, watch_msgpack),
    ]

    commands = await drive(game, oracle, random.Random(7), watchers)
    assert commands > 5
    assert any(e.TYPE == "combat_committed" for e in oracle.events)  # R8 was exercised

    for audience, client in watchers:
        check_feed(client, audience, oracle)
        await client.wait_for(lambda c=client: any(m["type"] == "game_over" for m in c.messages))
        [over] = [m for m in client.messages if m["type"] == "game_over"]
        assert over["result"] == oracle.state.result
        assert over["log"] == oracle.log()  # everything revealed at the end (R7)
        if audience is not None:  # a seat is told it has nothing more to do
            last = await client.latest_legal()
            assert (last["actions"], last["waiting"]) == ([], "game_over")
    assert isinstance(chthonians.frames[-1], bytes) and isinstance(olympians.frames[-1], str)
    # The same messages whichever the codec.
    assert watch_json.messages == watch_msgpack.messages

    log = (await http.get(f"/rooms/{game.room}/log")).json()
    assert log["over"] is True and log["events"] == oracle.log()
    finished = (await http.get("/rooms", params={"status": "finished"})).json()["rooms"]
    assert [r["room"] for r in finished] == [game.room]
    for client in (olympians, chthonians, watch_json, watch_msgpack):
        await client.close()


async def test_random_setup_is_drawn_when_both_seats_are_taken(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    created = (await http.post("/rooms", json={"random_setup": True})).json()
    oracle = Oracle(store, created["room"])
    assert (await oracle.sync()).phase is Phase.SETUP and oracle.state.version == 1
    await http.post(f"/rooms/{created['room']}/join", json={})
    state = await oracle.sync()
    assert state.phase is Phase.TURN
    types = [e.TYPE for e in oracle.events]
    assert types[:3] == ["game_created", "random_setup_drawn", "setup_submitted"]
    assert types.count("random_setup_drawn") == 1

    spectator = await WsClient.open(server.ws_url)
    await spectator.hello(spectate=created["room"])
    view = (await spectator.expect("view"))["view"]
    assert view["phase"] == "turn"
    assert all(unit["name"] is None for unit in view["units"])  # nobody revealed yet (R7)
    assert not any(m["event"]["t"] == "random_setup_drawn" for m in spectator.events())
    await spectator.close()


async def test_a_command_id_names_one_command(
    http: httpx.AsyncClient,
    server: ServerThread,
    start_server: Callable[..., ServerThread],
    store: EventStore,
) -> None:
    """The same command sent again under its id gets its old ``ack`` and does nothing; another
    command under an applied id gets ``id_reused`` and appends nothing, on any process,
    whether it would be legal now or not. The socket stays usable."""
    game, oracle = await live_game(http, server.ws_url, store)
    state = await oracle.sync()
    side = state.turn
    moves = [a["command"] for a in legal_wire(state, side) if a["command"]["type"] == "move"]
    ack = await game.seats[side].command("c1", moves[0])
    assert ack["type"] == "ack", ack
    version = await store.version(game.room)
    assert await game.seats[side].command("c1", moves[0]) == ack  # a retry: the same ack
    refused = await game.seats[side].command("c1", moves[-1])  # not its turn: illegal anyway
    assert (refused["type"], refused["code"], refused["id"]) == ("error", "id_reused", "c1")
    assert refused["sentence"] and await store.version(game.room) == version

    # The opponent plays; then, on another process, a command the rules would accept now is
    # still refused under the used id, and applied under a new one.
    state = await oracle.sync()
    reply = await game.seats[state.turn].command("o1", legal_wire(state, state.turn)[0]["command"])
    assert reply["type"] == "ack", reply
    state = await oracle.sync()
    assert state.turn is side
    other = await seat(start_server().ws_url, game, side, last_seq=0, epoch=game.epoch)
    await other.wait_seq(len(oracle.messages(side)))
    legal_now = legal_wire(state, side)[0]["command"]
    version = await store.version(game.room)
    assert (await other.command("c1", legal_now))["code"] == "id_reused"
    assert await store.version(game.room) == version  # nothing appended
    assert (await other.command("c2", legal_now))["type"] == "ack"


async def test_after_a_command_each_seat_gets_its_legal_after_the_events_and_the_ack(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    """The seat that moved gets its ``ack`` and then its ``legal`` (it waits: nothing listed);
    the seat to act gets the events and then its options, equal to the rules'. Each ``legal``
    is about the last event its seat was sent (room.py, ``push_due``)."""
    game, oracle = await live_game(http, server.ws_url, store)
    mover, other = game.seats[Faction.CHTHONIANS], game.seats[Faction.OLYMPIANS]
    options = await mover.latest_legal()
    await other.latest_legal()  # it waits: told so
    before = {mover: len(mover.messages), other: len(other.messages)}
    move = next(a for a in options["actions"] if a["command"]["type"] == "move")
    assert (await mover.command("m1", move["command"]))["type"] == "ack"
    await oracle.sync()
    for client, faction in ((mover, Faction.CHTHONIANS), (other, Faction.OLYMPIANS)):
        await client.wait_seq(len(oracle.messages(faction)))
    told = await mover.latest_legal()
    assert (told["actions"], told["waiting"]) == ([], "opponent_turn")
    kinds = [m["type"] for m in mover.messages[before[mover] :]]
    assert kinds.index("ack") < kinds.index("legal")  # ack, then legal
    assert kinds.index("legal") > max(i for i, kind in enumerate(kinds) if kind == "event")
    options = await other.latest_legal()
    assert len(options["actions"]) == len(legal_actions(oracle.state, Faction.OLYMPIANS)) > 0
    kinds = [m["type"] for m in other.messages[before[other] :]]
    assert kinds[-1] == "legal" and set(kinds[:-1]) == {"event"}


async def test_a_computer_seat_acts_on_options_that_came_while_its_command_was_pending(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore, settings: Settings
) -> None:
    """On a resume, the bot worker sends its pending command again at the ``welcome``; the
    seat's ``legal`` comes before that command's answer. When the answer is a refusal (the
    position moved on), the bot acts on those options rather than waiting for more that will
    not come (and likewise after an ``ack``)."""
    game, _ = await live_game(http, server.ws_url, store)
    mover = Faction.CHTHONIANS
    record = BotSeat(game.room, game.epoch, mover.value, "easy", game.tokens[mover], seed=1)
    config = WorkerConfig(server.ws_url, settings, min_reply_seconds=0.0, max_iterations=3)
    player = SeatPlayer(record, config)
    # not a command this position allows: refused by the rules, not retried
    stale = {"type": "commit", "maneuver": "attack", "energy": 0}
    player.pending = {"type": "command", "id": "stale", "command": stale}
    version = await store.version(game.room)
    playing = asyncio.get_running_loop().create_task(player.run())
    try:
        async with asyncio.timeout(30):
            while await store.version(game.room) == version:
                await game.seats[mover].next()  # (the test's own socket of that seat)
    finally:
        playing.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await playing
    assert await store.applied(game.room, f"{mover.value}:bot-{player.acted_seq}") is not None
