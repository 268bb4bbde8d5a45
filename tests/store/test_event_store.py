"""Classic event-store tests (EventStoreDB, SQLStreamStore, Python eventsourcing): the log's
port (``EventLog``, with the lobby's ``RoomIndex``) on every backend, memory, one Redis and a
Redis Cluster (tests/store/conftest.py: ``backend``), then how the log lives in Redis."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.asyncio import ConnectionPool, Redis
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import UnixDomainSocketConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.crc import key_slot

from olympus.lifetime import die_with
from olympus.store import (
    AppendResult,
    Applied,
    EmbeddedRedis,
    EventLog,
    EventStore,
    EventsTrimmed,
    IdReused,
    LogDiverged,
    NotReplicated,
    Replicated,
    RoomExists,
    RoomIndex,
    RoomNotFound,
    Snapshot,
    SnapshotAhead,
    StoredEvent,
    StoreUnavailable,
    TrimBeyondSnapshot,
    VersionConflict,
    chain_next,
    command_digest,
)
from olympus.store.local_cluster import REDIS_CLI, REDIS_SERVER, LocalCluster


def ev(n: int) -> bytes:
    return f"event-{n}".encode()


async def new_room(events: EventLog, room_id: str, n_events: int = 0) -> None:
    await events.create_room(room_id, b"meta")
    if n_events:
        await events.append(room_id, 0, [ev(i) for i in range(1, n_events + 1)])


# -- rooms --------------------------------------------------------------------------------


async def test_create_room_epoch_and_meta(events: EventLog, room_id: str) -> None:
    epoch = await events.create_room(room_id, b"\x81\xa4mode\xa4duel")
    assert 0 < epoch < 2**63
    assert await events.epoch(room_id) == epoch
    assert await events.room_meta(room_id) == b"\x81\xa4mode\xa4duel"
    assert await events.room_exists(room_id)
    assert await events.version(room_id) == 0
    with pytest.raises(RoomExists):
        await events.create_room(room_id, b"other")
    assert await events.epoch(room_id) == epoch  # the failed create changed nothing
    assert await events.room_meta(room_id) == b"\x81\xa4mode\xa4duel"


async def test_unknown_room_is_refused(events: EventLog, room_id: str) -> None:
    with pytest.raises(RoomNotFound):
        await events.append(room_id, 0, [ev(1)])
    with pytest.raises(RoomNotFound):
        await events.version(room_id)
    with pytest.raises(RoomNotFound):
        await events.read(room_id)
    with pytest.raises(RoomNotFound):
        await events.epoch(room_id)
    with pytest.raises(RoomNotFound):
        await events.room_meta(room_id)
    with pytest.raises(RoomNotFound):
        await events.load(room_id)
    with pytest.raises(RoomNotFound):
        await events.save_snapshot(room_id, 1, b"s")
    with pytest.raises(RoomNotFound):
        await events.trim(room_id, 0)
    assert not await events.room_exists(room_id)  # nothing was written
    assert await events.load_snapshot(room_id) is None
    assert await events.applied(room_id, "c1") is None
    assert not await events.drop_snapshot_if_ahead(room_id)
    assert not await events.delete_room(room_id)


async def test_invalid_room_ids_are_rejected(events: EventLog) -> None:
    for bad in ["", "a{b}", "has space", "x" * 129]:
        with pytest.raises(ValueError):
            await events.create_room(bad, b"")
    for bad in ["a{b}", "x" * 129]:
        with pytest.raises(ValueError):
            await events.append(bad, 0, [ev(1)])
        with pytest.raises(ValueError):
            await events.read(bad)
    assert await events.room_exists("x" * 128) is False  # the longest id is an id


async def test_malformed_appends_and_reads_are_rejected(events: EventLog, room_id: str) -> None:
    """Refused before the room is looked at (``ValueError``, ``TypeError``), writing nothing."""
    await new_room(events, room_id, 1)
    bad_appends: list[tuple[type[Exception], dict[str, Any]]] = [
        (ValueError, {"expected_version": 1, "events": []}),
        (ValueError, {"expected_version": -1, "events": [ev(2)]}),
        (ValueError, {"expected_version": 1, "events": [ev(2)], "command_id": ""}),
        (ValueError, {"expected_version": 1, "events": [ev(2)], "chain": ""}),
        (TypeError, {"expected_version": 1, "events": ["text"]}),
        (ValueError, {"expected_version": 1, "events": [ev(2)], "digest": "XYZ"}),
        (ValueError, {"expected_version": 1, "events": [ev(2)], "digest": "a" * 65}),
    ]
    for error, arguments in bad_appends:
        with pytest.raises(error):
            await events.append(room_id, **arguments)
    for after, count in ((-1, None), (0, 0), (0, -2)):
        with pytest.raises(ValueError):
            await events.read(room_id, after, count)
    with pytest.raises(ValueError):
        await events.save_snapshot(room_id, 0, b"s")
    with pytest.raises(ValueError):
        await events.trim(room_id, -1)
    assert await events.version(room_id) == 1
    assert (await events.append(room_id, 1, [ev(2)], digest="a" * 64)).version == 2


# -- appends and versions -----------------------------------------------------------------


async def test_append_assigns_consecutive_versions(events: EventLog, room_id: str) -> None:
    await new_room(events, room_id)
    r1 = await events.append(room_id, 0, [ev(1), ev(2), ev(3)])
    r2 = await events.append(room_id, 3, [ev(4)])
    assert (r1.first_version, r1.version, r1.duplicate) == (1, 3, False)
    assert (r2.first_version, r2.version, r2.duplicate) == (4, 4, False)
    assert r1.chains == r2.chains == ()  # none given: none made
    assert await events.version(room_id) == 4
    assert await events.read(room_id) == [StoredEvent(i, ev(i)) for i in range(1, 5)]


async def test_each_event_keeps_the_time_it_was_applied_at(events: EventLog, room_id: str) -> None:
    """An append's ``at_ms`` is kept with each of its events and read back with them (0 for
    an append that gave none); a duplicate changes no time; a time that is not one is refused."""
    await new_room(events, room_id)
    await events.append(room_id, 0, [ev(1), ev(2)], command_id="a", chain="", at_ms=1_000)
    await events.append(room_id, 2, [ev(3)], at_ms=2_500)
    await events.append(room_id, 3, [ev(4)])
    again = await events.append(room_id, 4, [ev(9)], command_id="a", at_ms=9_000)
    assert again.duplicate
    stored = await events.read(room_id)
    assert [(e.version, e.at_ms) for e in stored] == [(1, 1_000), (2, 1_000), (3, 2_500), (4, 0)]
    assert [e.at_ms for e in (await events.load(room_id)).events] == [1_000, 1_000, 2_500, 0]
    for bad in (0, -5, 2**63, True):
        with pytest.raises(ValueError):
            await events.append(room_id, 4, [ev(5)], at_ms=bad)
    assert await events.version(room_id) == 4


async def test_wrong_expected_version_is_a_conflict_and_writes_nothing(
    events: EventLog, room_id: str
) -> None:
    await new_room(events, room_id, 2)
    for stale in (0, 1, 3, 99):
        with pytest.raises(VersionConflict) as info:
            await events.append(room_id, stale, [ev(100)], command_id=f"c{stale}")
        assert (info.value.expected, info.value.actual) == (stale, 2)
    assert await events.version(room_id) == 2
    # A rejected command id is not remembered: it can be applied later at the right version.
    assert await events.applied(room_id, "c0") is None
    assert not (await events.append(room_id, 2, [ev(3)], command_id="c0")).duplicate


async def test_concurrent_writers_same_expected_version_exactly_one_wins(
    events: EventLog, room_id: str
) -> None:
    await new_room(events, room_id, 1)
    n = 20

    async def writer(i: int) -> Any:
        return await events.append(room_id, 1, [f"w{i}-a".encode(), f"w{i}-b".encode()])

    results = await asyncio.gather(*(writer(i) for i in range(n)), return_exceptions=True)
    wins = [r for r in results if not isinstance(r, BaseException)]
    conflicts = [r for r in results if isinstance(r, VersionConflict)]
    assert len(wins) == 1 and len(conflicts) == n - 1, results
    assert all(c.actual == 3 for c in conflicts)
    assert wins[0].first_version == 2 and wins[0].version == 3
    stored = await events.read(room_id)
    assert [e.version for e in stored] == [1, 2, 3]
    assert stored[1].data[:-1] == stored[2].data[:-1]  # both from the single winner


async def test_appends_sent_together_each_get_their_own_outcome(
    events: EventLog, room_id: str
) -> None:
    """Appends of one turn of the event loop (on Redis one pipeline: store/batching.py) each
    still get their own result or error, and a refused one writes nothing and spoils nothing."""
    rooms = [f"{room_id}-{k}" for k in range(6)]
    for room in rooms:
        await new_room(events, room, 1)
    calls = [
        events.append(rooms[0], 1, [ev(2)], command_id="a"),
        events.append(rooms[1], 0, [ev(2)]),  # stale: a conflict
        events.append(rooms[2], 1, [ev(2), ev(3)]),
        events.append(f"{room_id}-missing", 0, [ev(1)]),  # no such room
        events.append(rooms[3], 1, [ev(2)], command_id="a"),  # same id, another room: applied
        events.append(rooms[4], 1, [ev(2)]),
    ]
    first, conflict, two, missing, other, last = await asyncio.gather(
        *calls, return_exceptions=True
    )
    assert (first.version, two.version, other.version, last.version) == (2, 3, 2, 2)
    assert isinstance(conflict, VersionConflict) and conflict.actual == 1
    assert isinstance(missing, RoomNotFound)
    assert [e.version for e in await events.read(rooms[1])] == [1]
    assert [e.data for e in await events.read(rooms[2], 1)] == [ev(2), ev(3)]
    for room in rooms:
        await events.delete_room(room)


async def test_concurrent_writers_retrying_on_conflict_never_interleave_or_gap(
    events: EventLog, room_id: str
) -> None:
    """Each writer reloads on conflict until it succeeds: all batches land, contiguously."""
    await new_room(events, room_id)
    n, batch = 20, 3

    async def writer(i: int) -> int:
        attempts = 0
        while True:
            attempts += 1
            current = await events.version(room_id)
            await asyncio.sleep(0)  # the others read it too (a backend may never yield)
            try:
                await events.append(
                    room_id, current, [f"w{i}-{j}".encode() for j in range(batch)], f"w{i}"
                )
                return attempts
            except VersionConflict:
                await asyncio.sleep(0)

    attempts = await asyncio.gather(*(writer(i) for i in range(n)))
    stored = await events.read(room_id)
    assert [e.version for e in stored] == list(range(1, n * batch + 1))
    for start in range(0, n * batch, batch):
        writers = {e.data.split(b"-")[0] for e in stored[start : start + batch]}
        assert len(writers) == 1, stored[start : start + batch]  # a batch is never split
    assert sum(attempts) > n  # there really was contention


async def test_retried_command_id_is_applied_once(events: EventLog, room_id: str) -> None:
    await new_room(events, room_id, 1)
    first = await events.append(room_id, 1, [ev(2), ev(3)], command_id="cmd-42")
    await events.append(room_id, 3, [ev(4)], command_id="cmd-43")
    # The client never saw the first reply and retries with the same (now stale) version.
    again = await events.append(room_id, 1, [ev(2), ev(3)], command_id="cmd-42")
    assert again.duplicate and not first.duplicate
    assert (again.first_version, again.version) == (first.first_version, first.version) == (2, 3)
    assert [e.version for e in await events.read(room_id)] == [1, 2, 3, 4]
    # A duplicate comes before the room's version, and even before a wrong chain.
    late = await events.append(room_id, 3, [ev(2), ev(3)], command_id="cmd-42", chain="0" * 40)
    assert (late.first_version, late.version, late.duplicate) == (2, 3, True)
    assert await events.applied(room_id, "cmd-42") == Applied(2, 3, "")


async def test_a_command_id_reused_for_another_command_is_refused(
    events: EventLog, room_id: str
) -> None:
    """The id names the command it was applied to (its digest): the same command again is a
    duplicate, another one under the id is refused, writing nothing, however stale."""
    await new_room(events, room_id, 1)
    moved, liturgy = command_digest(b"move Zeus 3"), command_digest(b"liturgy")
    first = await events.append(room_id, 1, [ev(2)], command_id="c1", digest=moved)
    again = await events.append(room_id, 1, [ev(2)], command_id="c1", digest=moved)
    assert again.duplicate and (again.first_version, again.version) == (2, 2)
    for expected in (1, 2):  # stale or current: the id check comes first
        with pytest.raises(IdReused):
            await events.append(room_id, expected, [ev(3)], command_id="c1", digest=liturgy)
    assert [e.version for e in await events.read(room_id)] == [1, 2]
    assert await events.applied(room_id, "c1") == Applied(2, 2, moved)
    assert await events.applied(room_id, "c9") is None
    # Without a digest (the service's own commands) an applied id is a duplicate.
    assert (await events.append(room_id, 2, [ev(3)], command_id="c1")).duplicate
    assert not first.duplicate
    # An id applied without a digest is the same command whatever digest comes with it later.
    await events.append(room_id, 2, [ev(3)], command_id="c2")
    reply = await events.append(room_id, 3, [ev(4)], command_id="c2", digest=liturgy)
    assert reply.duplicate and await events.applied(room_id, "c2") == Applied(3, 3, "")


async def test_racing_appends_of_two_commands_under_one_id(events: EventLog, room_id: str) -> None:
    """Two processes send different commands under the same id at the same version: exactly
    one is applied; the other is refused as a reused id (checked in the same step)."""
    await new_room(events, room_id, 1)
    outcomes = await asyncio.gather(
        *(
            events.append(room_id, 1, [ev(k)], command_id="c1", digest=command_digest(b"%d" % k))
            for k in (2, 3)
        ),
        return_exceptions=True,
    )
    assert sorted(type(o).__name__ for o in outcomes) == ["AppendResult", "IdReused"]
    assert len(await events.read(room_id)) == 2


async def test_confirm_vouches_only_for_the_record_as_it_is(events: EventLog, room_id: str) -> None:
    """``confirm`` returns what ``applied`` read while the room's record is that; None for an
    id never applied, a record other than the one seen, or a room deleted since."""
    await new_room(events, room_id, 1)
    await events.append(room_id, 1, [ev(2), ev(3)], command_id="c1", digest="ab")
    seen = await events.applied(room_id, "c1")
    assert seen == Applied(2, 3, "ab")
    assert await events.confirm(room_id, "c1", seen) == seen
    assert await events.confirm(room_id, "c9", seen) is None
    assert await events.confirm(room_id, "c1", Applied(2, 3, "cd")) is None
    await events.delete_room(room_id)
    assert await events.confirm(room_id, "c1", seen) is None


# -- reads --------------------------------------------------------------------------------


async def test_read_ranges(events: EventLog, room_id: str) -> None:
    await new_room(events, room_id, 10)
    assert await events.read(room_id) == [StoredEvent(i, ev(i)) for i in range(1, 11)]
    assert [e.version for e in await events.read(room_id, 3, count=4)] == [4, 5, 6, 7]
    assert [e.version for e in await events.read(room_id, 8)] == [9, 10]
    assert [e.version for e in await events.read(room_id, 9, count=5)] == [10]
    assert await events.read(room_id, 10) == []
    assert await events.read(room_id, 50) == []
    with pytest.raises(ValueError):
        await events.read(room_id, -1)
    paged: list[StoredEvent] = []
    while batch := await events.read(room_id, paged[-1].version if paged else 0, count=3):
        paged.extend(batch)
    assert paged == await events.read(room_id)


async def test_binary_payloads_round_trip(events: EventLog, room_id: str) -> None:
    await new_room(events, room_id)
    payloads = [b"", b"\x00\xff\x00", bytes(range(256)) * 40]
    await events.append(room_id, 0, payloads)
    assert [e.data for e in await events.read(room_id)] == payloads
    await events.create_room(f"{room_id}-b", bytes(range(256)))
    assert await events.room_meta(f"{room_id}-b") == bytes(range(256))


# -- snapshots, trimming, deletion ---------------------------------------------------------


def fold(snapshot: Snapshot | None, events: list[StoredEvent]) -> list[bytes]:
    """Toy projection: the state is the list of all event payloads."""
    state = snapshot.data.split(b"|") if snapshot else []
    return state + [e.data for e in events]


async def test_snapshot_plus_tail_equals_full_read(events: EventLog, room_id: str) -> None:
    await new_room(events, room_id, 8)
    full = await events.read(room_id)
    assert await events.load_snapshot(room_id) is None
    unsnapped = await events.load(room_id)
    assert (unsnapped.snapshot, unsnapped.events, unsnapped.version) == (None, full, 8)
    assert await events.save_snapshot(room_id, 5, b"|".join(e.data for e in full[:5]))
    loaded = await events.load(room_id)
    assert loaded.snapshot is not None and loaded.snapshot.version == 5
    assert [e.version for e in loaded.events] == [6, 7, 8]
    assert loaded.version == 8 and loaded.epoch == await events.epoch(room_id)
    assert fold(loaded.snapshot, loaded.events) == fold(None, full)


async def test_only_latest_snapshot_is_kept_and_never_ahead(events: EventLog, room_id: str) -> None:
    await new_room(events, room_id, 8)
    assert await events.save_snapshot(room_id, 6, b"six")
    assert not await events.save_snapshot(room_id, 4, b"four")  # late, older: ignored
    assert not await events.save_snapshot(room_id, 6, b"six again")
    assert await events.load_snapshot(room_id) == Snapshot(6, b"six")
    with pytest.raises(SnapshotAhead) as ahead:
        await events.save_snapshot(room_id, 9, b"from the future")
    assert (ahead.value.version, ahead.value.stream_version) == (9, 8)
    assert not await events.drop_snapshot_if_ahead(room_id)  # 6 <= 8: kept
    assert await events.load_snapshot(room_id) == Snapshot(6, b"six")
    assert await events.save_snapshot(room_id, 8, b"eight")
    assert await events.load_snapshot(room_id) == Snapshot(8, b"eight")
    assert (await events.load(room_id)).events == []


async def test_an_append_naming_another_history_is_refused(events: EventLog, room_id: str) -> None:
    """Each entry records its writer's chain. A writer that names a chain the room's last
    entry does not record (it folded other events: here events a storage lost, then the room
    grew back to the same version with others) is refused (``LogDiverged``), nothing written;
    with the room's chain the append goes through, and without a chain it is not checked
    (entries of writers that give none, which are not checked either)."""
    await events.create_room(room_id, b"meta")
    appended = await events.append(room_id, 0, [ev(1), ev(2)], chain="")
    [first, second] = await events.read(room_id)
    assert first.chain == chain_next("", ev(1))
    assert second.chain == chain_next(chain_next("", ev(1)), ev(2))
    assert appended.chains == (first.chain, second.chain)  # what the writer folds with
    stale = chain_next(chain_next(second.chain, b"lost-3"), b"4")
    await events.append(room_id, 2, [b"other-3", b"4"], chain=second.chain)  # another writer

    with pytest.raises(LogDiverged) as diverged:
        await events.append(room_id, 4, [b"stale-5"], chain=stale)
    assert diverged.value.version == 4
    assert [e.data for e in await events.read(room_id, 2)] == [b"other-3", b"4"]
    fourth = (await events.read(room_id, 3))[0]
    assert (await events.append(room_id, 4, [b"5"], chain=fourth.chain)).version == 5
    assert (await events.append(room_id, 5, [b"6"])).version == 6  # unchecked
    assert [e.chain for e in await events.read(room_id, 5)] == [""]  # and none recorded
    assert (await events.append(room_id, 6, [b"7"], chain=stale)).version == 7  # not checked


async def test_append_after_trim_uses_versions_not_length(events: EventLog, room_id: str) -> None:
    await new_room(events, room_id, 10)
    with pytest.raises(TrimBeyondSnapshot) as beyond:
        await events.trim(room_id, 6)  # no snapshot yet
    assert (beyond.value.keep_after_version, beyond.value.snapshot_version) == (6, 0)
    assert await events.trim(room_id, 0) == 0  # nothing to trim before the first event
    await events.save_snapshot(room_id, 6, b"state@6")
    assert await events.trim(room_id, 6) == 6
    assert await events.trim(room_id, 6) == 0  # gone already
    assert await events.version(room_id) == 10
    with pytest.raises(EventsTrimmed) as info:
        await events.read(room_id, 2)
    assert info.value.first_available == 7
    with pytest.raises(EventsTrimmed):
        await events.read(room_id, 5, count=1)
    assert [e.version for e in await events.read(room_id, 6)] == [7, 8, 9, 10]
    with pytest.raises(VersionConflict) as conflict:
        await events.append(room_id, 4, [ev(11)])  # 4 == events kept: must not be accepted
    assert conflict.value.actual == 10
    assert (await events.append(room_id, 10, [ev(11)])).version == 11
    loaded = await events.load(room_id)
    assert loaded.snapshot == Snapshot(6, b"state@6")
    assert [e.version for e in loaded.events] == [7, 8, 9, 10, 11]


async def test_append_after_trimming_every_event(events: EventLog, room_id: str) -> None:
    await new_room(events, room_id, 5)
    await events.save_snapshot(room_id, 5, b"state@5")
    assert await events.trim(room_id, 5) == 5
    assert await events.version(room_id) == 5
    assert await events.read(room_id, 5) == []
    with pytest.raises(EventsTrimmed) as info:
        await events.read(room_id, 0)
    assert info.value.first_available is None
    loaded = await events.load(room_id)
    assert (loaded.snapshot, loaded.events, loaded.version) == (Snapshot(5, b"state@5"), [], 5)
    with pytest.raises(VersionConflict):
        await events.append(room_id, 0, [ev(6)])
    assert (await events.append(room_id, 5, [ev(6)])).version == 6
    assert await events.read(room_id, 5) == [StoredEvent(6, ev(6))]
    # A chain is checked against the last entry's: once that is trimmed, against none.
    chain = chain_next("", b"another history")
    assert (await events.append(room_id, 6, [ev(7)], chain=chain)).chains == (
        chain_next(chain, ev(7)),
    )
    with pytest.raises(LogDiverged):
        await events.append(room_id, 7, [ev(8)], chain=chain)
    await events.save_snapshot(room_id, 7, b"state@7")
    assert await events.trim(room_id, 7) == 2
    assert (await events.append(room_id, 7, [ev(8)], chain=chain)).version == 8


async def test_delete_then_recreate_starts_a_new_incarnation(
    events: EventLog, rooms: RoomIndex, room_id: str
) -> None:
    first_epoch = await events.create_room(room_id, b"first")
    await events.append(room_id, 0, [ev(1), ev(2)], command_id="c1")
    await events.save_snapshot(room_id, 2, b"s")
    await rooms.set_room_status(room_id, "live")
    assert await events.delete_room(room_id)
    assert not await events.delete_room(room_id)
    with pytest.raises(RoomNotFound):
        await events.append(room_id, 2, [ev(3)])
    assert not await events.room_exists(room_id)
    assert await events.load_snapshot(room_id) is None
    assert await events.applied(room_id, "c1") is None
    assert await rooms.room_status(room_id) is None
    assert room_id not in await rooms.rooms_by_status("live")

    second_epoch = await events.create_room(room_id, b"second")
    assert second_epoch != first_epoch
    assert await events.version(room_id) == 0
    assert await events.read(room_id) == []
    assert await events.load_snapshot(room_id) is None
    with pytest.raises(VersionConflict):
        await events.append(room_id, 2, [ev(3)])
    # The first incarnation's command ids are forgotten.
    fresh = await events.append(room_id, 0, [ev(1)], command_id="c1")
    assert not fresh.duplicate and fresh.version == 1
    assert await events.room_meta(room_id) == b"second"
    assert await events.epoch(room_id) == second_epoch


# -- lobby index ----------------------------------------------------------------------------


async def test_room_status_index(events: EventLog, rooms: RoomIndex) -> None:
    ids = [f"r{i}" for i in range(5)]
    for r in ids:
        await events.create_room(r, b"")
        assert await rooms.set_room_status(r, "open") is None
    assert await rooms.set_room_status("r1", "live") == "open"
    assert await rooms.set_room_status("r3", "live") == "open"
    assert await rooms.set_room_status("r3", "finished") == "live"
    assert await rooms.rooms_by_status("open") == ["r0", "r2", "r4"]
    assert await rooms.rooms_by_status("live") == ["r1"]
    assert await rooms.rooms_by_status("finished") == ["r3"]
    assert await rooms.rooms_by_status("ope") == []  # prefix of a status is not a match
    assert await rooms.rooms_by_status("open", offset=1, limit=1) == ["r2"]
    assert await rooms.list_rooms() == {
        "r0": "open",
        "r1": "live",
        "r2": "open",
        "r3": "finished",
        "r4": "open",
    }
    with pytest.raises(RoomNotFound):
        await rooms.set_room_status("ghost", "open")
    for r in ids:
        await events.delete_room(r)
    assert await rooms.list_rooms() == {}
    assert await rooms.rooms_by_status("open") == []


# -- Redis itself -------------------------------------------------------------------------
# On Redis only: its keys and streams, forgotten scripts, lost replies and writes, channels, WAIT.


def vars_of(store: EventStore, room_id: str) -> list[str]:
    k = store.keys(room_id)
    return [k.meta, k.events, k.commands, k.snapshot]


async def test_keys_share_one_hash_slot(store: EventStore, room_id: str) -> None:
    slots = {key_slot(k.encode()) for k in vars_of(store, room_id)}
    assert slots == {key_slot(room_id.encode())}


async def test_an_unknown_room_gets_no_key(store: EventStore, room_id: str) -> None:
    with pytest.raises(RoomNotFound):
        await store.append(room_id, 0, [ev(1)])
    assert not await store.redis.exists(store.keys(room_id).events)  # nothing was written


async def test_event_k_is_the_stream_entry_k_0(store: EventStore, room_id: str) -> None:
    await new_room(store, room_id)
    await store.append(room_id, 0, [ev(1), ev(2), ev(3)])
    await store.append(room_id, 3, [ev(4)])
    entries = await store.redis.xrange(store.keys(room_id).events)
    assert [(eid, fields) for eid, fields in entries] == [
        (f"{i}-0".encode(), {b"e": ev(i)}) for i in range(1, 5)
    ]


async def test_trim_drops_the_stream_entries(store: EventStore, room_id: str) -> None:
    keys = store.keys(room_id)
    await new_room(store, room_id, 10)
    await store.save_snapshot(room_id, 6, b"state@6")
    assert await store.trim(room_id, 6) == 6
    assert await store.redis.xlen(keys.events) == 4
    assert await store.version(room_id) == 10  # from the entry ids, not XLEN


async def test_a_stream_trimmed_empty_keeps_its_last_id(store: EventStore, room_id: str) -> None:
    keys = store.keys(room_id)
    await new_room(store, room_id, 5)
    await store.save_snapshot(room_id, 5, b"state@5")
    assert await store.trim(room_id, 5) == 5
    assert await store.redis.xlen(keys.events) == 0  # empty stream, only its last id remains
    assert await store.version(room_id) == 5
    assert (await store.append(room_id, 5, [ev(6)])).version == 6
    assert await store.redis.xrange(keys.events) == [(b"6-0", {b"e": ev(6)})]


async def test_delete_room_drops_every_key(store: EventStore, room_id: str) -> None:
    await store.create_room(room_id, b"first")
    await store.append(room_id, 0, [ev(1), ev(2)], command_id="c1")
    await store.save_snapshot(room_id, 2, b"s")
    assert await store.delete_room(room_id)
    assert await store.redis.exists(*vars_of(store, room_id)) == 0


async def test_appends_after_redis_forgot_the_script(store: EventStore, room_id: str) -> None:
    """A restarted Redis has no scripts: the batched EVALSHAs are refused unrun, then sent again
    with the script loaded; each applies once. On one Redis the calls of a turn travel in one
    pipeline, in order; on a cluster they go one by one, each on a connection of its own, so
    which of them Redis runs first is open, but still exactly one writes version 2."""
    await new_room(store, room_id, 1)
    await store.redis.script_flush()
    results = await asyncio.gather(
        store.append(room_id, 1, [ev(2)], command_id="x"),
        store.append(room_id, 1, [ev(2)], command_id="x"),  # the same command, retried
        store.append(room_id, 1, [ev(9)]),  # a stale writer
        return_exceptions=True,
    )
    log = [e.data for e in await store.read(room_id)]
    commands = [(r.version, r.duplicate) for r in results[:2] if isinstance(r, AppendResult)]
    if not store.sharded:
        assert commands == [(2, False), (2, True)]
    if log == [ev(1), ev(2)]:  # the command ran first: its resend is a duplicate
        assert sorted(commands) == [(2, False), (2, True)]
        assert isinstance(results[2], VersionConflict)
    else:  # the stale writer ran first (a cluster only): the command found version 2 taken
        assert store.sharded and log == [ev(1), ev(9)]
        assert all(isinstance(r, VersionConflict) for r in results[:2])
        assert (results[2].version, results[2].duplicate) == (2, False)


async def test_the_stores_scripts_after_redis_forgot_them(store: EventStore, room_id: str) -> None:
    """Every script of the store, not only the append's, is refused unrun by a Redis that
    forgot it (a restart), then loaded and sent again: each call still does what it does,
    once. (The lobby's join script goes the same way: ``EventStore.room_script``.)"""
    await store.redis.script_flush()
    epoch = await store.create_room(room_id, b"meta")
    await store.redis.script_flush()
    await store.append(room_id, 0, [ev(1), ev(2)])
    await store.redis.script_flush()
    assert await store.set_room_status(room_id, "live") is None
    await store.redis.script_flush()
    assert await store.save_snapshot(room_id, 2, b"snap")
    await store.redis.script_flush()
    loaded = await store.load(room_id)
    assert (loaded.epoch, loaded.version, loaded.snapshot) == (epoch, 2, Snapshot(2, b"snap"))
    await store.redis.script_flush()
    assert not await store.drop_snapshot_if_ahead(room_id)
    await store.redis.script_flush()
    assert await store.trim(room_id, 1) == 1
    await store.redis.script_flush()
    assert [e.data for e in await store.read(room_id, 1)] == [ev(2)]
    assert await store.room_status(room_id) == "live"


async def test_records_from_before_digests_count_as_the_same_command(
    store: EventStore, room_id: str
) -> None:
    await new_room(store, room_id, 1)
    await store.redis.hset(store.keys(room_id).commands, "c0", "2:2")  # a record without one
    await store.append(room_id, 1, [ev(2)])
    reply = await store.append(room_id, 2, [ev(3)], command_id="c0", digest=command_digest(b"x"))
    assert reply.duplicate and await store.applied(room_id, "c0") == Applied(2, 2, "")


class LossyProxy:
    """A unix-socket proxy to Redis that loses the reply to the next ``lose`` requests with an
    EVALSHA in them: the request reaches Redis and runs, then the client's connection drops
    before the reply reaches it, as a network failure would. Real sockets both ways, whatever
    the client (redis-py's pool or the appends' own connection, resp_connection.py)."""

    def __init__(self, server: EmbeddedRedis, path: Path) -> None:
        self.upstream = str(server.socket_path)
        self.path = str(path)
        self.lose = 0
        self._server: asyncio.AbstractServer | None = None

    async def __aenter__(self) -> LossyProxy:
        self._server = await asyncio.start_unix_server(self._relay, self.path)
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    def client(self, retries: int) -> Redis:
        """A client through the proxy that tries a command ``retries`` more times after a
        lost connection (its pool's policy, which the appends' connection follows too)."""
        pool = ConnectionPool(
            connection_class=UnixDomainSocketConnection,
            path=self.path,
            retry=Retry(NoBackoff(), retries),
            retry_on_error=[redis.ConnectionError],
        )
        return Redis(connection_pool=pool)

    async def _relay(
        self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter
    ) -> None:
        redis_in, redis_out = await asyncio.open_unix_connection(self.upstream)
        losing = asyncio.Event()

        async def requests() -> None:
            while data := await client_in.read(65536):
                if b"EVALSHA" in data.upper() and self.lose > 0:
                    self.lose -= 1
                    losing.set()
                redis_out.write(data)
                await redis_out.drain()

        async def replies() -> None:
            while data := await redis_in.read(65536):
                if losing.is_set():  # it ran: drop the client before it hears so
                    return
                client_out.write(data)
                await client_out.drain()

        tasks = [asyncio.create_task(requests()), asyncio.create_task(replies())]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            task.cancel()
        client_out.close()
        redis_out.close()


async def wait_for_version(store: EventStore, room_id: str, version: int) -> None:
    deadline = time.monotonic() + 5
    while await store.version(room_id) != version:
        assert time.monotonic() < deadline, "the lost-reply append never reached Redis"
        await asyncio.sleep(0.01)


async def test_lost_reply_then_retry_with_same_command_id_applies_once(
    redis_server: EmbeddedRedis, room_id: str, short_tmp_path: Path
) -> None:
    async with LossyProxy(redis_server, short_tmp_path / "proxy.sock") as proxy:
        client = proxy.client(retries=0)
        store = EventStore(client, prefix="lossy")
        try:
            await new_room(store, room_id, 1)  # also loads the append script
            proxy.lose = 1
            with pytest.raises(StoreUnavailable) as lost:  # the store's error, not redis-py's
                await store.append(room_id, 1, [ev(2), ev(3)], command_id="move-7")
            assert isinstance(lost.value.__cause__, redis.ConnectionError)
            await wait_for_version(store, room_id, 3)  # it was applied despite the error
            retry = await store.append(room_id, 1, [ev(2), ev(3)], command_id="move-7")
            assert retry.duplicate
            assert (retry.first_version, retry.version) == (2, 3)
            assert [e.version for e in await store.read(room_id)] == [1, 2, 3]
        finally:
            await store.delete_room(room_id)
            await store.aclose()
            await client.aclose()


async def test_automatic_retry_after_lost_reply(
    redis_server: EmbeddedRedis, room_id: str, short_tmp_path: Path
) -> None:
    """An append is sent again after a lost connection, by the client's retry policy (the
    service's clients retry: redis_clients.py). With a command id that re-send is harmless;
    without one it surfaces as a VersionConflict even though the append succeeded. This is
    why the service must always pass command ids."""
    async with LossyProxy(redis_server, short_tmp_path / "proxy.sock") as proxy:
        client = proxy.client(retries=3)
        store = EventStore(client, prefix="lossy")
        try:
            await new_room(store, room_id, 1)
            proxy.lose = 1
            result = await store.append(room_id, 1, [ev(2)], command_id="move-8")
            assert result.duplicate and result.version == 2  # the re-send hit the dedupe table
            proxy.lose = 1
            with pytest.raises(VersionConflict) as info:
                await store.append(room_id, 2, [ev(3)])
            assert info.value.actual == 3  # ...yet the event is stored, exactly once
            assert [e.version for e in await store.read(room_id)] == [1, 2, 3]
        finally:
            await store.delete_room(room_id)
            await store.aclose()
            await client.aclose()


async def test_an_append_on_another_history_of_the_same_length_is_refused(
    store: EventStore, room_id: str
) -> None:
    """A writer that folded events Redis then lost, at a version the room grew back to with
    other events (here even with the same last event), names its chain: refused
    (``LogDiverged``), nothing written. With the room's chain the append goes through, and
    without a chain it is not checked (entries of writers that give none)."""
    keys = store.keys(room_id)
    await store.create_room(room_id, b"meta")
    appended = await store.append(room_id, 0, [ev(1), ev(2)], chain="")
    [first, second] = await store.read(room_id)
    assert second.chain == chain_next(chain_next("", ev(1)), ev(2))
    assert appended.chains == (first.chain, second.chain)  # what the writer folds with
    lost = [b"lost-3", b"4"]
    await store.append(room_id, 2, lost, chain=second.chain)
    stale = chain_next(chain_next(second.chain, lost[0]), lost[1])
    entries = await store.redis.xrange(keys.events, "-", "+")
    await store.redis.delete(keys.events)  # Redis comes back without events 3 and 4
    for entry_id, fields in entries[:2]:
        await store.redis.xadd(keys.events, fields, id=entry_id)
    await store.append(room_id, 2, [b"other-3", b"4"], chain=second.chain)  # another writer

    with pytest.raises(LogDiverged) as diverged:
        await store.append(room_id, 4, [b"stale-5"], chain=stale)
    assert diverged.value.version == 4
    assert [e.data for e in await store.read(room_id, 2)] == [b"other-3", b"4"]
    fourth = (await store.read(room_id, 3))[0]
    assert (await store.append(room_id, 4, [b"5"], chain=fourth.chain)).version == 5
    assert (await store.append(room_id, 5, [b"6"])).version == 6  # unchecked
    assert [e.chain for e in await store.read(room_id, 5)] == [""]  # and none recorded


async def test_a_snapshot_ahead_of_lost_writes_is_dropped(store: EventStore, room_id: str) -> None:
    """Redis came back without its last writes (the stream as it was at 4), the snapshot at 6
    survived: it is dropped, and only when it is ahead of the stream."""
    keys = store.keys(room_id)
    await new_room(store, room_id, 8)
    assert await store.save_snapshot(room_id, 6, b"six")
    assert not await store.drop_snapshot_if_ahead(room_id)  # 6 <= 8: kept
    kept = (await store.read(room_id))[:4]
    await store.redis.delete(keys.events)
    for event in kept:
        await store.redis.xadd(keys.events, {"e": event.data}, id=f"{event.version}-0")
    assert await store.drop_snapshot_if_ahead(room_id)
    assert await store.load_snapshot(room_id) is None
    assert not await store.drop_snapshot_if_ahead(room_id)  # none left


# -- hints ----------------------------------------------------------------------------------


async def next_messages(pubsub: PubSub, count: int) -> list[dict[str, Any]]:
    """The next ``count`` messages but (un)subscription confirmations, or fewer after 5 s."""
    messages: list[dict[str, Any]] = []
    deadline = time.monotonic() + 5
    while len(messages) < count and time.monotonic() < deadline:
        msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1)
        if msg is not None:
            messages.append(msg)
    return messages


async def test_append_publishes_version_hint(store: EventStore, room_id: str) -> None:
    """On one Redis a classic PUBLISH; on a cluster an SPUBLISH on a channel of the room's
    slot, heard by SSUBSCRIBE on that slot's master."""
    await new_room(store, room_id)
    channel = store.hint_channel(room_id)
    if store.sharded:
        assert channel == f"{store.prefix}:room:{{{room_id}}}:hint"
        assert key_slot(channel.encode()) == key_slot(store.keys(room_id).events.encode())
        owner = store.redis.get_node_from_key(channel)
        client = Redis(host=owner.host, port=owner.port)
        pubsub = client.pubsub()
        await pubsub.ssubscribe(channel)
    else:
        assert channel == f"{store.prefix}:room:{room_id}:hint"
        client = None
        pubsub = store.redis.pubsub()
        await pubsub.subscribe(channel)
    try:
        await store.append(room_id, 0, [ev(1), ev(2)])
        with pytest.raises(VersionConflict):
            await store.append(room_id, 0, [ev(1)])  # conflicts publish nothing
        await store.append(room_id, 2, [ev(3)])
        hints = await next_messages(pubsub, 2)
        assert [m["data"] for m in hints] == [b"2", b"3"]
    finally:
        await pubsub.aclose()
        if client is not None:
            await client.aclose()


async def test_on_a_cluster_a_hint_reaches_only_the_master_of_the_rooms_slot(
    redis_cluster: LocalCluster, room_id: str
) -> None:
    """The hint is sharded (SPUBLISH): the room's master delivers it to its SSUBSCRIBErs, and
    no other master hears of it. A classic PUBLISH would reach every node: each other master's
    classic subscriber would get the hint before a marker published after it on the room's
    master (the cluster bus carries both, in order)."""
    cluster = RedisCluster.from_url(f"redis://{redis_cluster.nodes[0].address}")
    store = EventStore(cluster, prefix=f"test-{room_id}")
    await new_room(store, room_id)
    channel, marker = store.hint_channel(room_id), f"marker-{room_id}"
    owner = cluster.get_node_from_key(channel)
    masters = {n.name: Redis(host=n.host, port=n.port) for n in cluster.get_primaries()}
    subscriptions = {name: master.pubsub() for name, master in masters.items()}
    others = [pubsub for name, pubsub in subscriptions.items() if name != owner.name]
    try:
        assert len(masters) == 3 and owner.name in masters
        await subscriptions[owner.name].ssubscribe(channel)
        for pubsub in others:
            await pubsub.subscribe(channel, marker)
        await store.append(room_id, 0, [ev(1)])
        [hint] = await next_messages(subscriptions[owner.name], 1)
        assert (hint["type"], hint["data"]) == ("smessage", b"1")
        await masters[owner.name].publish(marker, b"after")
        for pubsub in others:
            [first] = await next_messages(pubsub, 1)
            assert (first["channel"], first["data"]) == (marker.encode(), b"after")
    finally:
        for pubsub in subscriptions.values():
            await pubsub.aclose()
        for master in masters.values():
            await master.aclose()
        await cluster.aclose()


async def test_appends_can_wait_for_replicas(redis_client: Any, room_id: str) -> None:
    """``Replicated(n)``: an append is confirmed once n replicas have it (WAIT on its own
    connection), else it fails with ``NotReplicated`` though it is applied on the master, and
    sending it again finds it applied. The test cluster has one replica per master; the single
    Redis none."""
    replicas = 0 if isinstance(redis_client, Redis) else 1
    confirmed = EventStore(redis_client, prefix="w", replicated=Replicated(replicas or 1, 200))
    greedy = EventStore(redis_client, prefix="w", replicated=Replicated(replicas + 1, 100))
    plain = EventStore(redis_client, prefix="w")
    try:
        await confirmed.create_room(room_id, b"meta")
        if replicas:
            result = await confirmed.append(room_id, 0, [ev(1)], command_id="c1")
            assert (result.version, result.duplicate) == (1, False)
        else:
            with pytest.raises(NotReplicated):
                await confirmed.append(room_id, 0, [ev(1)], command_id="c1")
        assert await confirmed.version(room_id) == 1  # applied either way
        # More replicas than there are: applied on the master, never confirmed.
        with pytest.raises(NotReplicated) as refused:
            await greedy.append(room_id, 1, [ev(2)], command_id="c2")
        assert refused.value.required == replicas + 1
        assert await greedy.version(room_id) == 2
        # Sent again, or its record confirmed: no more confirmed than the first time.
        with pytest.raises(NotReplicated):
            await greedy.append(room_id, 1, [ev(2)], command_id="c2")
        seen = await greedy.applied(room_id, "c2")
        assert seen is not None
        with pytest.raises(NotReplicated):
            await greedy.confirm(room_id, "c2", seen)
        again = await plain.append(room_id, 1, [ev(2)], "c2")
        assert again.duplicate and again.version == 2
        assert await plain.confirm(room_id, "c2", seen) == seen
    finally:
        for store in (confirmed, greedy, plain):
            await store.aclose()


# -- a duplicate under Replicated -----------------------------------------------------------


class HeldReplica:
    """A master and its one replica, which a test holds back: ``SIGSTOP``, so that the master
    still counts it online (until ``repl-timeout``, 60 s) while it acknowledges nothing more.
    A WAIT then confirms exactly the writes the replica had before it stopped."""

    def __init__(self, master: int, replica: subprocess.Popen[bytes]) -> None:
        self.master = master  # its port
        self.replica = replica

    def hold(self) -> None:
        self.replica.send_signal(signal.SIGSTOP)

    def release(self) -> None:
        self.replica.send_signal(signal.SIGCONT)

    def online(self) -> bool:
        """The master counts its replica online (a link up, its initial sync done)."""
        info = subprocess.run(
            [REDIS_CLI, "-p", str(self.master), "info", "replication"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
        return "connected_slaves:1" in info and "state=online" in info


def _redis_on_loopback(directory: Path, *options: str) -> tuple[int, subprocess.Popen[bytes]]:
    """A plain redis-server (no cluster, no persistence) on a free loopback port."""
    directory.mkdir(parents=True, exist_ok=True)
    for _ in range(3):
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = int(probe.getsockname()[1])
        settings = ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        settings += ["--repl-diskless-sync-delay", "0"]  # a replica in sync at once
        proc = subprocess.Popen(
            [REDIS_SERVER, "--port", str(port), *settings, "--dir", str(directory), *options],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=die_with(os.getpid()),
        )
        for _ in range(600):
            ping = [REDIS_CLI, "-p", str(port), "ping"]
            if subprocess.run(ping, capture_output=True, text=True).stdout.strip() == "PONG":
                return port, proc
            if proc.poll() is not None:  # its port was taken meanwhile: another one
                break
            time.sleep(0.05)
        else:
            proc.kill()
            raise TimeoutError("redis-server did not start")
    raise RuntimeError("no free port for redis-server")


@pytest.fixture(params=["redis", "cluster"])
def held_replica(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[Callable[[], Redis | RedisCluster], Callable[[str], HeldReplica]]]:
    """A client factory (each call a client of its own: fresh connections, as another process
    has) and, for a key, its master and that master's replica: on one Redis a master and a
    replica of Debian's redis-server started here; on the session's cluster, the key's master
    and its replica."""
    procs: list[subprocess.Popen[bytes]] = []
    replicas: list[HeldReplica] = []
    url: str
    if request.param == "cluster":
        cluster: LocalCluster = request.getfixturevalue("redis_cluster")
        url = f"redis://{cluster.nodes[0].address}"

        def held(key: str) -> HeldReplica:
            master = cluster.master_of(key)
            info = master.cli("info", "replication")
            port = int(info.split("slave0:", 1)[1].split("port=", 1)[1].split(",", 1)[0])
            [node] = [n for n in cluster.nodes if n.port == port]
            assert node.proc is not None
            replicas.append(HeldReplica(master.port, node.proc))
            return replicas[-1]
    else:
        master, master_proc = _redis_on_loopback(tmp_path / "master")
        procs.append(master_proc)
        _, replica_proc = _redis_on_loopback(
            tmp_path / "replica", "--replicaof", "127.0.0.1", str(master)
        )
        procs.append(replica_proc)
        url = f"redis://127.0.0.1:{master}"

        def held(key: str) -> HeldReplica:
            replicas.append(HeldReplica(master, replica_proc))
            return replicas[-1]

    def client() -> Redis | RedisCluster:
        if request.param == "cluster":
            return RedisCluster.from_url(url, socket_timeout=10)
        return Redis.from_url(url, decode_responses=False, socket_timeout=10)

    try:
        yield client, held
    finally:
        for replica in replicas:  # never leave a node of the session's cluster stopped
            replica.release()
        for proc in procs:
            proc.kill()
            proc.wait(10)


async def until(condition: Callable[[], Awaitable[bool]], what: str, timeout: float = 60) -> None:
    """Until ``condition()`` holds (a positive signal, not a pause), at most ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not await condition():
        assert time.monotonic() < deadline, f"no {what} in {timeout} s"
        await asyncio.sleep(0.05)


async def test_a_duplicate_is_confirmed_as_a_first_append_is(
    held_replica: tuple[Callable[[], Redis | RedisCluster], Callable[[str], HeldReplica]],
    room_id: str,
) -> None:
    """Under ``Replicated`` a duplicate's result, and ``confirm``'s, promise what a first
    append's does: a replica has the events. Here a replica that its master still counts
    online (stopped after it had the room's first event) misses the command's events, and a
    store on connections of its own (another process: they never wrote) sends the command
    again, or confirms its record: neither is confirmed until the replica has the events;
    then both are, and the log holds the command once. Without ``Replicated``, ``confirm``
    vouches for the master's record as it is."""
    new_client, held = held_replica
    clients = [new_client(), new_client()]
    prefix = f"dup-{uuid.uuid4().hex[:8]}"
    writer, resender = (EventStore(c, prefix, Replicated(1, 1000)) for c in clients)
    plain = EventStore(clients[1], prefix)
    replica = held(writer.keys(room_id).commands)

    async def confirmed(store: EventStore, version: int) -> bool:
        """Event ``version`` appended under the id ``c<version>`` (or found: a duplicate),
        and confirmed."""
        try:
            await store.append(room_id, version - 1, [ev(version)], command_id=f"c{version}")
        except NotReplicated:
            return False
        return True

    try:
        await until(lambda: asyncio.to_thread(replica.online), "replica online")
        await writer.create_room(room_id, b"meta")
        await until(lambda: confirmed(writer, 1), "first event confirmed")
        replica.hold()
        try:
            with pytest.raises(NotReplicated):
                await writer.append(room_id, 1, [ev(2)], command_id="c2")
            assert await writer.version(room_id) == 2  # on the master, on no replica
            # The same command from connections that never wrote: a duplicate, unconfirmed.
            with pytest.raises(NotReplicated):
                await resender.append(room_id, 1, [ev(2)], command_id="c2")
            seen = await resender.applied(room_id, "c2")
            assert seen == Applied(2, 2, "")
            with pytest.raises(NotReplicated):
                await resender.confirm(room_id, "c2", seen)
            assert await plain.confirm(room_id, "c2", seen) == seen  # promises the master only
        finally:
            replica.release()
        await until(lambda: confirmed(resender, 2), "the duplicate confirmed")  # caught up
        again = await resender.append(room_id, 1, [ev(2)], command_id="c2")
        assert (again.version, again.first_version, again.duplicate) == (2, 2, True)
        assert await resender.confirm(room_id, "c2", seen) == seen
        assert await resender.confirm(room_id, "c9", seen) is None  # no such id
        assert [e.data for e in await plain.read(room_id)] == [ev(1), ev(2)]
    finally:
        for store in (writer, resender, plain):
            await store.aclose()
        for client in clients:
            await client.aclose()
