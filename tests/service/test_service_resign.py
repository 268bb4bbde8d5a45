"""Resignation and abort through the real service: real servers on the session's real Redis,
real websockets, both seats and a spectator checked against the log; a room against the
computer, whose bots worker (the real one, ``serve_bots``) stops playing once the person
resigns.
"""

from __future__ import annotations

import asyncio
import contextlib
import random

import httpx
import msgpack
from service_harness import (
    Game,
    Oracle,
    ServerThread,
    WsClient,
    check_feed,
    create_game,
    drive,
    live_game,
    seat,
    setup_command,
)

from olympus.bots_worker import WorkerConfig, serve_bots
from olympus.rules import Faction, Phase, legal_actions, may_abort
from olympus.rules import events as ev
from olympus.rules.events import encode
from olympus.server import Settings
from olympus.server.archiver import summarize
from olympus.store import BOT_BUCKETS, EventStore, open_backend

OLY, CHT = Faction.OLYMPIANS, Faction.CHTHONIANS


async def spectator(server: ServerThread, game: Game) -> WsClient:
    client = await WsClient.open(server.ws_url)
    welcome = await client.hello(spectate=game.room, last_seq=0, epoch=game.epoch)
    assert welcome["resumed"] is True
    return client


async def everyone_told(
    game: Game, oracle: Oracle, watcher: WsClient, result: str, reason: str
) -> None:
    """Each seat and the spectator got every event of the log as its audience sees it, the
    last one the ``game_ended`` of ``result`` and ``reason``, then ``game_over``; each seat's
    last ``legal`` offers nothing, not even to resign or abort."""
    state = await oracle.sync()
    assert state.phase is Phase.OVER and state.result == result
    # the end, then (in a game with clocks) the deadlines cleared
    ended = [e for e in oracle.events if e.TYPE == "game_ended"]
    assert ended == [ev.GameEnded(result=result, reason=reason)]
    assert oracle.events[-1] == ended[0] or oracle.events[-1] == ev.ClockSet({}, {})
    audiences: list[tuple[Faction | None, WsClient]] = [
        (OLY, game.seats[OLY]),
        (CHT, game.seats[CHT]),
        (None, watcher),
    ]
    for audience, client in audiences:
        await client.wait_for(lambda c=client: any(m["type"] == "game_over" for m in c.messages))
        check_feed(client, audience, oracle)
        ended = [m["event"] for m in client.events() if m["event"]["t"] == "game_ended"]
        assert ended == [{"t": "game_ended", "v": 1, "result": result, "reason": reason}]
        [over] = [m for m in client.messages if m["type"] == "game_over"]
        assert over["result"] == result and over["log"] == oracle.log()
        if audience is not None:
            last = await client.latest_legal()
            assert (last["actions"], last["waiting"]) == ([], "game_over")
            assert (last["can_resign"], last["can_abort"]) == (False, False)


async def test_a_player_resigns_in_the_middle_of_a_combat(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    """Random play until a combat; one seat commits, the other resigns before committing:
    the resigner's ``ack``; both seats and a spectator get ``game_ended`` (the enemy wins,
    ``resignation``) and ``game_over``; the clocks stop; a second resignation is refused."""
    game = await create_game(http, move_seconds=300, commit_seconds=300)
    for faction in Faction:
        await seat(server.ws_url, game, faction, last_seq=0, epoch=game.epoch)
    oracle = Oracle(store, game.room)
    watcher = await spectator(server, game)
    watchers = [(OLY, game.seats[OLY]), (CHT, game.seats[CHT]), (None, watcher)]
    rng = random.Random(3)
    await drive(game, oracle, rng, watchers, commands=0)  # the setups
    for _ in range(300):
        state = await oracle.sync()
        if state.combat is not None and not state.pending and not state.combat.commitments:
            break
        assert state.phase is not Phase.OVER, "the random game ended before a combat"
        await drive(game, oracle, rng, watchers, setup=False, commands=1)
    else:
        raise AssertionError("no combat")
    assert state.deadlines  # the commitments' clocks run
    # the side that may commit first commits; the other resigns before committing
    attacker = next(f for f in Faction if legal_actions(state, f))
    legal = await game.seats[attacker].latest_legal()
    commit = next(a["command"] for a in legal["actions"] if a["command"]["type"] == "commit")
    assert (await game.seats[attacker].command("commit", commit))["type"] == "ack"
    await oracle.sync()
    resigner = attacker.enemy
    await game.seats[resigner].wait_seq(len(oracle.messages(resigner)))
    options = await game.seats[resigner].latest_legal()
    assert options["can_resign"] is True and options["can_abort"] is may_abort(oracle.state)
    assert all(a["command"]["type"] not in ("resign", "abort") for a in options["actions"])

    ack = await game.seats[resigner].command("give-up", {"type": "resign"})
    assert ack["type"] == "ack", ack
    await everyone_told(game, oracle, watcher, attacker.value, "resignation")
    assert oracle.state.deadlines == {}
    again = await game.seats[attacker].command("me-too", {"type": "resign"})
    assert (again["type"], again["code"]) == ("error", "game_over") and again["sentence"]
    log = (await http.get(f"/rooms/{game.room}/log")).json()
    assert (log["over"], log["result"]) == (True, attacker.value)
    await watcher.close()


async def test_a_player_aborts_before_both_moved_and_not_after(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    """A room whose Chthonians made the first move: both seats' ``legal`` say ``can_abort``;
    the Olympians abort: every audience gets ``game_ended`` ``aborted``, and ``game_over``
    with no result to name a winner; the room is listed finished, its log's result
    ``aborted``. In another room where both sides moved, an abort is ``abort_too_late``."""
    game, oracle = await live_game(http, server.ws_url, store, seed=2)
    watcher = await spectator(server, game)
    liturgy = await game.seats[CHT].command("first", {"type": "liturgy"})
    assert liturgy["type"] == "ack", liturgy
    await oracle.sync()
    for faction in Faction:
        await game.seats[faction].wait_seq(len(oracle.messages(faction)))
        told = await game.seats[faction].latest_legal()
        assert (told["can_resign"], told["can_abort"]) == (True, True)
    ack = await game.seats[OLY].command("call-off", {"type": "abort"})
    assert ack["type"] == "ack", ack
    await everyone_told(game, oracle, watcher, "aborted", "abort")
    log = (await http.get(f"/rooms/{game.room}/log")).json()
    assert (log["over"], log["result"]) == (True, "aborted")
    finished = (await http.get("/rooms", params={"status": "finished"})).json()["rooms"]
    assert game.room in [r["room"] for r in finished]
    await watcher.close()

    late, late_oracle = await live_game(http, server.ws_url, store, seed=4)
    for faction, command_id in ((CHT, "m1"), (OLY, "m2")):
        assert (await late.seats[faction].command(command_id, {"type": "liturgy"}))["type"] == "ack"
    await late_oracle.sync()
    for faction in Faction:
        await late.seats[faction].wait_seq(len(late_oracle.messages(faction)))
        told = await late.seats[faction].latest_legal()
        assert (told["can_resign"], told["can_abort"]) == (True, False)
        refused = await late.seats[faction].command(f"abort-{faction.value}", {"type": "abort"})
        assert (refused["type"], refused["code"]) == ("error", "abort_too_late")
    assert (await late_oracle.sync()).phase is Phase.TURN


def test_the_archive_row_of_an_aborted_game_names_no_winner() -> None:
    """``summarize`` takes the result from the last ``game_ended`` as it is: ``aborted``, or
    the winner of a resignation, with its reason."""
    meta = msgpack.packb({"options": {}, "created_ms": 5})
    seats = {"name:olympians": "Ann", "name:chthonians": "Bo", "moved_ms": "9"}
    for ended in (ev.GameEnded("aborted", "abort"), ev.GameEnded("olympians", "resignation")):
        log = [encode(ev.GameCreated()), encode(ended)]
        summary = summarize("r", meta, seats, log)
        assert (summary.result, summary.reason) == (ended.result, ended.reason)
        assert (summary.started_ms, summary.ended_ms) == (5, 9)


async def test_a_person_resigns_against_the_computer_and_its_worker_stops(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore, settings: Settings
) -> None:
    """``POST /rooms/computer``; the real bots worker plays the computer's seat over the
    websocket. The person resigns once the computer has played: the computer wins, the worker
    stops playing the room and drops its seat record."""
    reply = await http.post("/rooms/computer", json={"side": "chthonians", "level": "easy"})
    assert reply.status_code == 201, reply.text
    room = reply.json()
    game = Game(room["room"], room["epoch"], {CHT: room["token"]})
    person = await seat(server.ws_url, game, CHT, last_seq=0, epoch=game.epoch)
    oracle = Oracle(store, game.room)
    backend = open_backend(settings.store_config())
    config = WorkerConfig(server.ws_url, settings, min_reply_seconds=0.0, max_iterations=3)
    stop = asyncio.Event()
    worker = asyncio.get_running_loop().create_task(serve_bots(config, stop))
    try:
        setup = setup_command(random.Random(1), CHT)
        assert (await person.command("setup", setup))["type"] == "ack"
        async with asyncio.timeout(60):  # the computer's setup
            while (await oracle.sync()).phase is Phase.SETUP:
                await asyncio.sleep(0.05)
        assert (await person.command("m1", {"type": "liturgy"}))["type"] == "ack"
        async with asyncio.timeout(60):  # the computer plays its first turn (which may
            # start a combat the person is now part of)
            while True:
                state = await oracle.sync()
                if state.turn_number >= 3 or state.phase is Phase.COMBAT or state.pending:
                    break
                await asyncio.sleep(0.05)
        await person.wait_seq(len(oracle.messages(CHT)))
        told = await person.latest_legal()
        assert (told["can_resign"], told["can_abort"]) == (True, False)
        ack = await person.command("resign", {"type": "resign"})
        assert ack["type"] == "ack", ack
        await person.wait_for(lambda: any(m["type"] == "game_over" for m in person.messages))
        state = await oracle.sync()
        assert (state.result, oracle.events[-1]) == (
            "olympians",
            ev.GameEnded(OLY.value, "resignation"),
        )
        check_feed(person, CHT, oracle)
        async with asyncio.timeout(30):  # the worker saw the end: the record goes
            while any(k.startswith(game.room) for k in await backend.bots.read(range(BOT_BUCKETS))):
                await asyncio.sleep(0.05)
        version = state.version
        await asyncio.sleep(0.5)
        assert await store.version(game.room) == version  # nobody plays on
    finally:
        stop.set()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(worker, 15)
        await backend.aclose()
        await person.close()
