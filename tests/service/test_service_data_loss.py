"""A Redis that lost its last acknowledged writes (``everysec`` and a kill -9, operations.md).

The loss is made exactly as it happens: the newest stream entries and their command ids are
gone, the room and its epoch remain. A process whose cache is ahead of the store must notice,
rebuild the room and make its sockets reconnect (4409), and a resent command must land. It
notices at its next command, or as soon as its pub/sub connection comes back (a restarted
Redis drops every connection), whichever is first; a room restored from a snapshot also when
it reads its whole log again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import httpx
import pytest
from service_harness import (
    TIMEOUT,
    Oracle,
    ServerThread,
    WsClient,
    live_game,
    move_seats,
    played_game,
    room_loads,
    seat,
)

from olympus.rules import Faction, GameState, encode, execute, legal_actions
from olympus.rules.events import Event
from olympus.server.room import now_ms
from olympus.store import EventStore
from olympus.store.redis_indexes import RedisDeadlines

CHT = Faction.CHTHONIANS


async def lose_writes_after(store: EventStore, room: str, version: int) -> list[str]:
    """Redis as restarted from an AOF missing its tail: the stream as it was at ``version``, and
    the command ids of the lost events gone with them. Returns those ids."""
    keys = store.keys(room)
    kept = (await store.redis.xrange(keys.events, "-", "+"))[:version]
    await store.redis.delete(keys.events)  # XDEL would keep the stream's last id
    for entry_id, fields in kept:
        await store.redis.xadd(keys.events, fields, id=entry_id)
    applied = await store.redis.hgetall(keys.commands)  # id -> "<first>:<last>" versions
    lost = [i for i, span in applied.items() if int(span.split(b":")[1]) > version]
    if lost:
        await store.redis.hdel(keys.commands, *lost)
    assert await store.version(room) == version
    return [i.decode() for i in lost]


@pytest.mark.parametrize("noticed_at", ["next_command", "resubscription"])
async def test_a_cache_ahead_of_the_store_is_rebuilt(
    noticed_at: str, http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    game, _ = await live_game(http, server.ws_url, store)
    before = await store.version(game.room)
    chthonians = game.seats[CHT]
    assert (await chthonians.command("l1", {"type": "liturgy"}))["type"] == "ack"
    assert await store.version(game.room) > before
    assert await lose_writes_after(store, game.room, before) == ["chthonians:l1"]

    if noticed_at == "next_command":
        # The process still believes the liturgy happened (Olympians to move); the store says
        # the Chthonians are to move. Their next command must not be refused for that.
        await chthonians.send({"type": "command", "id": "l2", "command": {"type": "liturgy"}})
    else:
        # Redis "restarts": its connections drop. Nobody sends a command; the resubscription
        # alone must find the store behind the cache.
        assert await store.redis.client_kill_filter(_type="pubsub") >= 1
    assert await chthonians.wait_closed() == 4409
    assert await game.seats[Faction.OLYMPIANS].wait_closed() == 4409

    again = await seat(server.ws_url, game, CHT)  # no resume token: a fresh view
    # The lost liturgy is gone; so is a command that made the process notice: it was decided
    # on the lost position, and is refused rather than decided again for the player.
    assert (await again.expect("view"))["view"]["turn"] == "chthonians"
    reply = await again.command("l2", {"type": "liturgy"})  # resent after the reconnect
    assert reply["type"] == "ack"
    assert await store.version(game.room) == before + 4  # one liturgy: 4 events
    spectator = await WsClient.open(server.ws_url)
    await spectator.hello(spectate=game.room)
    view = (await spectator.expect("view"))["view"]
    assert view["turn"] == "olympians" and view["turn_number"] == 2
    for client in (again, spectator):
        await client.close()


async def test_a_rebuilt_room_re_arms_its_clock_for_the_deadline_it_now_has(
    start_server: Callable[..., ServerThread], store: EventStore
) -> None:
    """R12 after a loss: the rebuilt position is an older one, whose deadline comes before the
    one the process armed its timer for and wrote to the deadline index (the lost position's).
    The rebuild sets both again: the index holds the rebuilt deadline before it falls due, and
    the missed turn is fired (the time the service stamped on its ``Timeout``) after that
    deadline and before the lost one, which a timer armed for the lost deadline cannot do.
    The sweeper's grace outlasts the test, so only a timer can fire it. The time between the
    two deadlines (2 s) is the tolerance for the box's delays; a bug fails whatever they are."""
    server = start_server(deadline_grace_ms=60_000)
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        game, _ = await live_game(http, server.ws_url, store, move_seconds=4, commit_seconds=4)
    before = await store.version(game.room)
    chthonians = game.seats[CHT]
    await asyncio.sleep(2)  # so that the liturgy's deadline is well after the one before it
    assert (await chthonians.command("l1", {"type": "liturgy"}))["type"] == "ack"
    lost_due = (await Oracle(store, game.room).sync()).deadlines["olympians"]["due"]
    await lose_writes_after(store, game.room, before)
    truth = Oracle(store, game.room)
    due = (await truth.sync()).deadlines["chthonians"]["due"]
    assert lost_due - due >= 2000

    assert await store.redis.client_kill_filter(_type="pubsub") >= 1  # noticed: a rebuild
    assert await chthonians.wait_closed() == 4409
    # what others go by: the older deadline
    index = RedisDeadlines(store.redis, server.settings.prefix).key(game.room)
    while await store.redis.zscore(index, game.room) != due:
        assert now_ms() < due, "the index did not hold the rebuilt deadline before it fell due"
        await asyncio.sleep(0.02)

    def after_the_missed_turn() -> list[Event]:
        types = [e.TYPE for e in truth.events]
        return truth.events[types.index("deadline_missed") :] if "deadline_missed" in types else []

    async with asyncio.timeout(TIMEOUT + max(0, lost_due - now_ms()) / 1000):
        while not any(e.TYPE == "clock_set" for e in after_the_missed_turn()):
            await asyncio.sleep(0.02)
            await truth.sync()
    missed, *after = after_the_missed_turn()
    assert (missed.faction, missed.kind) == (CHT, "move")
    # The next deadline (the Olympians' turn after the liturgy it became) runs from the
    # Timeout's stamp: when the service fired.
    clock = next(e for e in after if e.TYPE == "clock_set")
    fired = clock.deadlines["olympians"]["since"]
    assert due <= fired < lost_due, (fired - due, lost_due - due)  # not at the lost deadline


async def test_a_restored_room_that_reads_its_whole_log_after_lost_writes_is_rebuilt(
    start_server: Callable[..., ServerThread], store: EventStore
) -> None:
    """A room restored from a snapshot reads its whole log again (here for the HTTP log); the
    store lost its newest events meanwhile, the snapshot's among them: what it folds is not
    what it holds, so it rebuilds the room from the store, sends its sockets to resync, and
    drops the snapshot of the lost history, instead of going on with a state and numbering the
    log does not back."""
    first, second = start_server(snapshot_every=10), start_server(snapshot_every=10)
    game, _ = await played_game(first, store, commands=12)
    await move_seats(game, second)  # the second process restores the room from the snapshot
    snapshot = await store.load_snapshot(game.room)
    assert snapshot is not None
    await lose_writes_after(store, game.room, snapshot.version - 1)

    async with httpx.AsyncClient(base_url=second.url, timeout=30) as http2:
        log = (await http2.get(f"/rooms/{game.room}/log")).json()
    for client in game.seats.values():
        assert await client.wait_closed() == 4409
    truth = Oracle(store, game.room)  # folded afresh: the first one still holds the lost events
    assert (await truth.sync()).version == snapshot.version - 1
    assert [m["event"] for m in log["messages"]] == truth.messages(None)
    assert await store.load_snapshot(game.room) is None


async def test_a_snapshot_of_lost_writes_is_dropped_not_restored(
    start_server: Callable[..., ServerThread], store: EventStore
) -> None:
    """Redis lost the events a snapshot was folded from: the snapshot is ahead of the log. A
    process loading the room replays the log instead, and drops that snapshot, so that it is
    never restored once the room has grown past its version again with another history."""
    game, _ = await played_game(start_server(snapshot_every=10), store, commands=12)
    stored = await store.load_snapshot(game.room)
    assert stored is not None
    await lose_writes_after(store, game.room, stored.version - 2)

    other = start_server(snapshot_every=10)
    spectator = await WsClient.open(other.ws_url)
    await spectator.hello(spectate=game.room)
    view = await spectator.expect("view")
    truth = Oracle(store, game.room)
    await truth.sync()
    assert view["seq"] == len(truth.messages(None))
    async with httpx.AsyncClient(base_url=other.url, timeout=30) as http2:
        metrics = (await http2.get("/metrics")).text
    assert (room_loads(metrics, "log"), room_loads(metrics, "snapshot")) == (1, 0)
    assert await store.load_snapshot(game.room) is None
    await spectator.close()


def grow_back(state: GameState, events: int) -> list[bytes]:
    """Events of another history from ``state``: one Chthonian move of exactly ``events``
    events, or (``events`` 0) a move of 3 and the Olympians' first option after it."""
    for action in legal_actions(state, CHT):
        first, after = execute(state, action.command)
        if action.command.type == "move" and len(first) == (events or 3):
            if events:
                return [encode(e) for e in first]
            second, _ = execute(after, legal_actions(after, after.turn)[0].command)
            return [encode(e) for e in first + second]
    raise AssertionError("no such move in this position")


@pytest.mark.parametrize("grown_back", ["same_length", "longer"])
async def test_a_stale_process_never_appends_onto_a_history_redis_lost(
    grown_back: str, http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    """Redis lost the liturgy the process folded, and another writer grew the room back with
    other events: to the same length (the version the process expects: its append must name
    its last event, and is refused) or longer (the process reads the tail: it must check that
    the tail follows its own last event). Either way the process rebuilds the room and tells
    its sockets to resync, and nothing is decided on the lost history."""
    game, _ = await live_game(http, server.ws_url, store)
    before = await store.version(game.room)
    chthonians, olympians = game.seats[CHT], game.seats[Faction.OLYMPIANS]
    assert (await chthonians.command("l1", {"type": "liturgy"}))["type"] == "ack"
    await olympians.wait_for(lambda: olympians.legal() != [])  # options after the liturgy
    stale = olympians.legal()[0]["command"]
    await lose_writes_after(store, game.room, before)
    truth = Oracle(store, game.room)
    other = grow_back(await truth.sync(), 4 if grown_back == "same_length" else 0)
    [at_loss] = await store.read(game.room, before - 1)
    await store.append(game.room, before, other, chain=at_loss.chain)  # as a process would
    assert (await store.version(game.room) == before + 4) is (grown_back == "same_length")

    if grown_back == "same_length":  # the hint of that append names a version the process
        # holds: it learns only when it appends, naming a chain the room does not have
        await olympians.send({"type": "command", "id": "s1", "command": stale})
    # Longer: the hint makes the process read the tail, which does not continue its chain.
    assert await olympians.wait_closed() == 4409
    assert await chthonians.wait_closed() == 4409
    assert not [m for m in olympians.messages if m.get("id") == "s1" and m["type"] == "ack"]
    assert [e.data for e in await store.read(game.room, before)] == other  # and nothing else
    assert await store.redis.hget(store.keys(game.room).commands, "olympians:s1") is None
