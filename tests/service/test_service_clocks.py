"""Clocks (R12): the service fires Timeout for missed deadlines, once, even after a restart."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable

import httpx
import pytest
from redis.crc import key_slot
from service_harness import Game, Oracle, ServerThread, create_game, seat, setup_command

from olympus.rules import Faction, Phase
from olympus.store import EventStore
from olympus.store.redis_indexes import DEADLINE_BUCKETS, RedisDeadlines


async def until(oracle: Oracle, predicate: Callable[[], bool], timeout: float = 8.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, [e.TYPE for e in oracle.events[-8:]]
        await asyncio.sleep(0.05)
        await oracle.sync()


def missed(oracle: Oracle) -> list[tuple[str, int]]:
    """(side, due) of every DeadlineMissed, from the deadline standing just before it."""
    found = []
    for k, event in enumerate(oracle.events):
        if event.TYPE == "deadline_missed":
            side = event.faction.value
            found.append((side, oracle.states[k].deadlines[side]["due"]))
    return found


def done_firing(server: ServerThread, room: str, version: int) -> bool:
    """Whether ``server`` can fire no more timeouts in ``room``, whose log ends at ``version``
    with the game over: it holds the room at that version (or not at all), has no timer armed
    for it and no firing under way (a firing counts itself before it ends)."""
    clocks = server.services.clocks
    held = server.services.registry.rooms.get(room)
    return (
        (held is None or held.version == version)
        and room not in clocks._timers
        and not clocks._tasks
    )


async def start_playing(http: httpx.AsyncClient, ws_url: str, **clocks: int) -> Game:
    game = await create_game(http, **clocks)
    rng = random.Random(3)
    for faction in Faction:
        client = await seat(ws_url, game, faction)
        assert (await client.command("setup", setup_command(rng, faction)))["type"] == "ack"
    return game


@pytest.mark.memory_store
async def test_a_missed_turn_becomes_a_liturgy(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    game = await start_playing(http, server.ws_url, move_seconds=1, commit_seconds=1)
    oracle = Oracle(store, game.room)
    await until(oracle, lambda: len(missed(oracle)) >= 1)
    types = [e.TYPE for e in oracle.events]
    k = types.index("deadline_missed")
    assert oracle.events[k].faction is Faction.CHTHONIANS and oracle.events[k].kind == "move"
    assert "liturgy_performed" in types[k:]  # R12: a missed turn is a Liturgy
    olympians = game.seats[Faction.OLYMPIANS]  # the opponent sees it happen
    await olympians.wait_for(
        lambda: any(m["event"]["t"] == "deadline_missed" for m in olympians.events())
    )
    # the counter moves just after the append the oracle saw: poll, don't race it
    await until(oracle, lambda: server.services.metrics.timeouts.get("fired") >= 1)


@pytest.mark.memory_store
async def test_two_processes_fire_each_deadline_once_until_forfeit(
    http: httpx.AsyncClient,
    server: ServerThread,
    start_server: Callable[..., ServerThread],
    store: EventStore,
) -> None:
    other = start_server()
    game = await start_playing(
        http, server.ws_url, move_seconds=1, commit_seconds=1, forfeit_seconds=2
    )
    watcher = await seat(other.ws_url, game, Faction.OLYMPIANS)  # the room is held by both
    oracle = Oracle(store, game.room)
    await until(oracle, lambda: oracle.state.phase is Phase.OVER)
    [over] = [e for e in oracle.events if e.TYPE == "game_ended"]
    assert over.reason == "forfeit"  # gone too long (R12)
    deadlines = missed(oracle)
    assert len(deadlines) >= 2 and len(set(deadlines)) == len(deadlines)  # each one once

    def fired() -> int:
        return sum(s.services.metrics.timeouts.get("fired") for s in (server, other))

    # Once neither process can fire again, each counted one firing per deadline of the log.
    final = oracle.state.version
    await until(oracle, lambda: all(done_firing(s, game.room, final) for s in (server, other)))
    assert fired() == len(deadlines)
    await watcher.wait_for(lambda: any(m["type"] == "game_over" for m in watcher.messages))


@pytest.mark.memory_store
async def test_deadlines_survive_a_restart_with_nobody_connected(
    http: httpx.AsyncClient,
    server: ServerThread,
    start_server: Callable[..., ServerThread],
    store: EventStore,
) -> None:
    game = await start_playing(http, server.ws_url, move_seconds=1)
    await server.aclose()  # before the deadline: its timers die with it, the sockets are closed
    for client in game.seats.values():
        await client.wait_closed()
    oracle = Oracle(store, game.room)
    await oracle.sync()
    # Usually none yet; on a slow box the closing server may have fired one: not the point.
    before = len(missed(oracle))

    fresh = start_server()  # holds nothing: it must find the room in the deadline index
    assert fresh.services.rooms == {}
    await until(oracle, lambda: len(missed(oracle)) > before)


async def test_a_deadline_in_the_unbucketed_index_still_fires(
    http: httpx.AsyncClient,
    server: ServerThread,
    start_server: Callable[..., ServerThread],
    store: EventStore,
) -> None:
    """The deadline index on Redis is in buckets (a hash slot each, for a Redis Cluster); an
    entry of the unbucketed key is swept all the same, and moves to its bucket."""
    game = await start_playing(http, server.ws_url, move_seconds=1)
    bucket = RedisDeadlines(store.redis, server.settings.prefix).key(game.room)
    due = await store.redis.zscore(bucket, game.room)
    assert due is not None
    await server.aclose()
    for client in game.seats.values():
        await client.wait_closed()
    unbucketed = f"{server.settings.prefix}:{{rooms}}:deadlines"
    await store.redis.zrem(bucket, game.room)  # only in the unbucketed key
    await store.redis.zadd(unbucketed, {game.room: due})
    oracle = Oracle(store, game.room)

    start_server()  # holds nothing: only the unbucketed entry can bring it the room
    await until(oracle, lambda: len(missed(oracle)) >= 1)
    assert await store.redis.zscore(unbucketed, game.room) is None


def test_the_deadline_index_spreads_over_hash_slots() -> None:
    index = RedisDeadlines(None, "p")  # type: ignore[arg-type]  # (naming only: no Redis)
    keys = {index.key(f"room-{n}") for n in range(1000)}
    assert len(keys) == DEADLINE_BUCKETS
    assert len({key_slot(k.encode()) for k in keys}) == DEADLINE_BUCKETS
