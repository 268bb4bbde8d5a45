"""The ports beside the log (ports.py: RoomIndex, RoomSeats, DeadlineIndex, BotSeats,
SharedKeys, Hints) on every backend: memory, one Redis and a Redis Cluster (conftest.py:
``backend``). What one backend does, the others must."""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from olympus.store import (
    BOT_BUCKETS,
    Backend,
    BotSeats,
    DeadlineIndex,
    EventLog,
    Hints,
    Join,
    RoomIndex,
    RoomNotFound,
    RoomRecord,
    RoomSeats,
    SharedKeys,
    StoreConfig,
    WatcherCounts,
    bot_hash,
    open_backend,
)
from olympus.store.memory import MemoryBackend

WAIT = 10.0  # seconds a positive signal may take to arrive (it comes at once when all is well)


# -- RoomIndex ------------------------------------------------------------------------------


async def test_a_rooms_status_is_recorded_and_replaced(
    events: EventLog, rooms: RoomIndex, room_id: str
) -> None:
    assert await rooms.room_status(room_id) is None
    with pytest.raises(RoomNotFound):
        await rooms.set_room_status(room_id, "open")  # no such room, and not seen
    assert await rooms.room_status(room_id) is None and await rooms.list_rooms() == {}
    assert await rooms.set_room_status(room_id, "open", seen=True) is None  # seen: trusted
    assert await rooms.room_status(room_id) == "open"
    await events.create_room(room_id, b"meta")
    assert await rooms.set_room_status(room_id, "live") == "open"
    assert await rooms.room_status(room_id) == "live"
    assert await rooms.rooms_by_status("open") == []
    assert await rooms.rooms_by_status("live") == [room_id]
    assert await rooms.list_rooms() == {room_id: "live"}


async def test_rooms_by_status_are_sorted_and_paged(events: EventLog, rooms: RoomIndex) -> None:
    ids = [f"room-{k:02d}" for k in range(12)]
    for k, room in enumerate(reversed(ids)):  # listed sorted, whatever the order of writes
        await events.create_room(room, b"")
        await rooms.set_room_status(room, "open" if k % 3 else "live")
    opened = sorted(r for k, r in enumerate(reversed(ids)) if k % 3)
    assert await rooms.rooms_by_status("open") == opened
    assert len(opened) == 8
    assert await rooms.rooms_by_status("open", limit=3) == opened[:3]
    assert await rooms.rooms_by_status("open", offset=3, limit=3) == opened[3:6]
    assert await rooms.rooms_by_status("open", offset=6, limit=3) == opened[6:]
    assert await rooms.rooms_by_status("open", offset=5) == opened[5:]
    assert await rooms.rooms_by_status("open", offset=8) == []
    assert await rooms.rooms_by_status("finished") == []
    assert len(await rooms.list_rooms()) == 12
    counts = [await rooms.count_by_status(s) for s in ("open", "live", "finished")]
    assert counts == [8, 4, 0]


async def test_malformed_statuses_are_refused(
    events: EventLog, rooms: RoomIndex, room_id: str
) -> None:
    await events.create_room(room_id, b"")
    for bad in ["", "has space", "a\x00b", "x" * 65, "ünïcode"]:
        with pytest.raises(ValueError):
            await rooms.set_room_status(room_id, bad)
        with pytest.raises(ValueError):
            await rooms.rooms_by_status(bad)
    assert await rooms.room_status(room_id) is None
    assert await rooms.set_room_status(room_id, "x" * 64) is None  # the longest is a status


# -- RoomSeats ------------------------------------------------------------------------------


async def test_fields_are_written_and_read_as_text(seats: RoomSeats, room_id: str) -> None:
    assert await seats.fields(room_id) == {}
    assert await seats.field(room_id, "olympians") is None
    await seats.write(room_id, {"olympians": 1, "name:olympians": "Ann"})
    await seats.write(room_id, {"olympians": 2})
    assert await seats.fields(room_id) == {"olympians": "2", "name:olympians": "Ann"}
    assert await seats.field(room_id, "name:olympians") == "Ann"
    assert await seats.field(room_id, "chthonians") is None
    assert await seats.fields(f"{room_id}-other") == {}


async def test_joining_takes_the_first_free_seat_then_none(
    events: EventLog, seats: RoomSeats, room_id: str
) -> None:
    epoch = await events.create_room(room_id, b"meta")
    await seats.write(room_id, {"olympians": 1})
    assert await seats.join(room_id, None, False, "Bo") == Join("joined", "chthonians", True, epoch)
    assert await seats.join(room_id, None, False, "Cy") == Join("taken", "", True, 0)
    assert await seats.fields(room_id) == {
        "olympians": "1",
        "chthonians": "1",
        "name:chthonians": "Bo",
    }


async def test_joining_a_given_side(events: EventLog, seats: RoomSeats, room_id: str) -> None:
    epoch = await events.create_room(room_id, b"meta")
    first = await seats.join(room_id, "chthonians", False, "Bo")
    assert first == Join("joined", "chthonians", False, epoch)  # one seat is taken: not full
    assert await seats.join(room_id, "chthonians", False, "Cy") == Join("taken", "", False, 0)
    assert await seats.join(room_id, "olympians", False, "") == Join(
        "joined", "olympians", True, epoch
    )
    assert await seats.join(room_id, "olympians", False, "Di") == Join("taken", "", False, 0)
    # No name: none recorded. The refused joiners changed nothing.
    assert await seats.fields(room_id) == {
        "chthonians": "1",
        "olympians": "1",
        "name:chthonians": "Bo",
    }


async def test_joining_a_room_without_a_log(seats: RoomSeats, room_id: str) -> None:
    assert await seats.join(room_id, None, False, "Bo") == Join("no_room", "", False, 0)
    assert await seats.join(room_id, "olympians", True, "Bo") == Join("no_room", "", False, 0)
    assert await seats.fields(room_id) == {}  # nothing written


async def test_joining_a_challenge(events: EventLog, seats: RoomSeats, room_id: str) -> None:
    """The joiner picks the side (one is required) and the creator gets the other."""
    epoch = await events.create_room(room_id, b"meta")
    await seats.write(room_id, {"host": 1, "name:host": "Ann"})
    assert await seats.join(room_id, None, True, "Bo") == Join("side_required", "", False, 0)
    assert await seats.fields(room_id) == {"host": "1", "name:host": "Ann"}
    assert await seats.join(room_id, "olympians", True, "Bo") == Join(
        "joined", "olympians", True, epoch
    )
    assert await seats.fields(room_id) == {
        "host": "1",
        "name:host": "Ann",
        "olympians": "1",
        "chthonians": "1",
        "host_side": "chthonians",
        "name:olympians": "Bo",
    }
    assert await seats.join(room_id, "chthonians", True, "Cy") == Join("taken", "", True, 0)
    assert await seats.join(room_id, None, True, "Cy") == Join("taken", "", True, 0)
    other = f"{room_id}-2"
    await events.create_room(other, b"meta")
    joined = await seats.join(other, "chthonians", True, "")
    assert (joined.outcome, joined.side) == ("joined", "chthonians")
    assert await seats.field(other, "host_side") == "olympians"


async def test_joiners_racing_for_the_last_seat_never_share_it(
    events: EventLog, seats: RoomSeats, room_id: str
) -> None:
    await events.create_room(room_id, b"meta")
    await seats.write(room_id, {"olympians": 1})
    joins = await asyncio.gather(
        seats.join(room_id, None, False, "Bo"), seats.join(room_id, "chthonians", False, "Cy")
    )
    assert sorted(j.outcome for j in joins) == ["joined", "taken"], joins
    [winner] = [j for j in joins if j.outcome == "joined"]
    name = "Bo" if joins[0] is winner else "Cy"
    assert (winner.side, winner.full) == ("chthonians", True)
    assert await seats.field(room_id, "name:chthonians") == name


async def test_set_once_keeps_the_first_value(seats: RoomSeats, room_id: str) -> None:
    await seats.write(room_id, {"olympians": 1})
    assert await seats.set_once(room_id, "rematch", "room-a") == "room-a"
    assert await seats.set_once(room_id, "rematch", "room-b") == "room-a"
    assert await seats.set_once(room_id, "rematch", "room-a") == "room-a"  # sent again
    assert await seats.field(room_id, "rematch") == "room-a"
    assert await seats.set_once(f"{room_id}-2", "rematch", "room-c") is None  # no seats
    assert await seats.fields(f"{room_id}-2") == {}


async def test_bump_counts_from_what_the_field_holds(seats: RoomSeats, room_id: str) -> None:
    await seats.write(room_id, {"olympians": 1})
    assert await seats.bump(room_id, "olympians") == 2
    assert await seats.bump(room_id, "olympians") == 3
    assert await seats.bump(room_id, "chthonians") == 1  # unset: from 0
    assert await seats.fields(room_id) == {"olympians": "3", "chthonians": "1"}
    with pytest.raises(RoomNotFound):  # no seats: none are made
        await seats.bump(f"{room_id}-2", "olympians")
    assert await seats.fields(f"{room_id}-2") == {}


async def test_note_moved_sets_each_rooms_time(seats: RoomSeats, room_id: str) -> None:
    rooms = [f"{room_id}-{k}" for k in range(3)]
    await seats.write(rooms[0], {"olympians": 1})
    await seats.write(rooms[1], {"olympians": 1})
    await seats.note_moved({rooms[0]: 1_700_000_000_123, rooms[1]: 1_700_000_000_456})
    await seats.note_moved({})
    assert await seats.fields(rooms[0]) == {"olympians": "1", "moved_ms": "1700000000123"}
    assert await seats.field(rooms[1], "moved_ms") == "1700000000456"
    assert await seats.field(rooms[2], "moved_ms") is None
    await seats.note_moved({rooms[0]: 1_700_000_000_789})
    assert await seats.field(rooms[0], "moved_ms") == "1700000000789"


async def test_note_moved_gives_no_room_without_seats_a_time(
    events: EventLog, seats: RoomSeats, room_id: str
) -> None:
    """A room deleted (or moved to the archive) between a command and the write of its time
    is not given seats of one field, which would hide its archived seats."""
    await events.create_room(room_id, b"m")
    await seats.write(room_id, {"olympians": 1})
    await events.delete_room(room_id)
    assert await seats.fields(room_id) == {}  # the seats went with the log
    await seats.note_moved({room_id: 1_700_000_000_123})
    assert await seats.fields(room_id) == {}


async def test_records_are_meta_and_seats_or_none(
    events: EventLog, seats: RoomSeats, room_id: str
) -> None:
    seated, bare, gone = (f"{room_id}-{k}" for k in range(3))
    await events.create_room(seated, b"\x81\xa1v\x01")
    await seats.write(seated, {"olympians": 1, "name:olympians": "Ann"})
    await events.create_room(bare, b"bare")
    await seats.write(gone, {"olympians": 1})  # seats, but no log
    found = await seats.records([seated, gone, bare, seated])
    record = RoomRecord(b"\x81\xa1v\x01", {"olympians": "1", "name:olympians": "Ann"})
    assert found == [record, None, RoomRecord(b"bare", {}), record]
    assert await seats.records([]) == []


# -- DeadlineIndex --------------------------------------------------------------------------


async def test_overdue_rooms_up_to_a_time(deadlines: DeadlineIndex, room_id: str) -> None:
    base = 1_700_000_000_000
    rooms = [f"{room_id}-{k}" for k in range(4)]
    for k, room in enumerate(rooms):
        await deadlines.set_due(room, base + 1000 * k)
    assert await deadlines.overdue(base - 1) == []
    assert sorted(await deadlines.overdue(base)) == rooms[:1]
    assert sorted(await deadlines.overdue(base + 2500)) == rooms[:3]
    await deadlines.set_due(rooms[1], None)  # no deadline any more: forgotten
    await deadlines.set_due(rooms[0], base + 5000)  # a later one
    await deadlines.set_due(f"{room_id}-never", None)  # never had one
    assert sorted(await deadlines.overdue(base + 3000)) == rooms[2:]
    assert sorted(await deadlines.overdue(base + 9000)) == [rooms[0], *rooms[2:]]
    few = await deadlines.overdue(base + 9000, limit=1)
    assert few and set(few) <= {rooms[0], *rooms[2:]}


# -- BotSeats -------------------------------------------------------------------------------


async def test_bot_seats_are_read_by_bucket(bots: BotSeats, room_id: str) -> None:
    rooms = [f"{room_id}-{k}" for k in range(8)]
    for room in rooms:
        await bots.put(room, "olympians", f'{{"room": "{room}"}}')
    await bots.put(rooms[0], "chthonians", "second seat")
    everything = await bots.read(range(BOT_BUCKETS))
    assert everything == {
        **{f"{room}:olympians": f'{{"room": "{room}"}}' for room in rooms},
        f"{rooms[0]}:chthonians": "second seat",
    }
    bucket = bot_hash(rooms[0]) % BOT_BUCKETS
    mine = await bots.read([bucket])
    assert mine == {
        k: v for k, v in everything.items() if bot_hash(k.rsplit(":", 1)[0]) % BOT_BUCKETS == bucket
    }
    assert f"{rooms[0]}:chthonians" in mine
    others = [b for b in range(BOT_BUCKETS) if b != bucket]
    assert f"{rooms[0]}:olympians" not in await bots.read(others)
    await bots.remove(rooms[0], "chthonians")
    await bots.remove(rooms[0], "chthonians")  # gone already: nothing happens
    assert f"{rooms[0]}:chthonians" not in await bots.read([bucket])
    assert f"{rooms[0]}:olympians" in await bots.read([bucket])
    assert await bots.read([]) == {}


# -- SharedKeys -----------------------------------------------------------------------------


async def test_the_first_fresh_key_is_everyones(keys: SharedKeys) -> None:
    first = await keys.shared_secret("a" * 64)
    assert first == b"a" * 64
    assert await keys.shared_secret("b" * 64) == first


# -- Hints ----------------------------------------------------------------------------------


@dataclass
class Heard:
    """What one ``Hints`` delivered, in order."""

    hints: Hints
    hinted: asyncio.Queue[tuple[str, int | None]] = field(default_factory=asyncio.Queue)
    control: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)

    async def next_hint(self) -> tuple[str, int | None]:
        return await asyncio.wait_for(self.hinted.get(), WAIT)

    async def next_control(self) -> dict[str, Any]:
        return await asyncio.wait_for(self.control.get(), WAIT)

    async def watch(self, room_id: str) -> None:
        """Watch ``room_id`` until its watch is confirmed."""
        await self.hints.watch(room_id)
        assert await self.next_hint() == (room_id, None)


def listener(backend: Backend) -> Heard:
    hinted: asyncio.Queue[tuple[str, int | None]] = asyncio.Queue()
    control: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    hints = backend.hints(lambda r, v: hinted.put_nowait((r, v)), control.put_nowait, lambda: None)
    return Heard(hints, hinted, control)


@contextlib.asynccontextmanager
async def listening(backend: Backend) -> AsyncIterator[Heard]:
    heard = listener(backend)
    await heard.hints.start()
    try:
        yield heard
    finally:
        await heard.hints.stop()


async def test_a_watcher_hears_each_append(
    backend: Backend, events: EventLog, room_id: str
) -> None:
    await events.create_room(room_id, b"meta")
    async with listening(backend) as heard:
        assert heard.hints.connected
        await heard.watch(room_id)  # confirmed: None
        await events.append(room_id, 0, [b"1", b"2"])
        assert await heard.next_hint() == (room_id, 2)
        await events.append(room_id, 2, [b"3"])
        assert await heard.next_hint() == (room_id, 3)


async def test_a_room_watched_before_the_start_is_confirmed_by_it(
    backend: Backend, events: EventLog, room_id: str
) -> None:
    await events.create_room(room_id, b"meta")
    heard = listener(backend)
    await heard.hints.watch(room_id)
    await heard.hints.start()
    try:
        assert await heard.next_hint() == (room_id, None)
        await events.append(room_id, 0, [b"1"])
        # (a watch may be confirmed more than once, here on a Cluster: each time a None)
        while (hint := await heard.next_hint()) == (room_id, None):
            pass
        assert hint == (room_id, 1)
    finally:
        await heard.hints.stop()


def drained(queue: asyncio.Queue[Any]) -> list[Any]:
    """What ``queue`` holds now, taken out."""
    items = []
    while not queue.empty():
        items.append(queue.get_nowait())
    return items


async def test_an_unwatched_room_is_not_heard(
    backend: Backend, events: EventLog, room_id: str
) -> None:
    """Nothing of a room not watched; nothing of a room after ``unwatch`` returned, not even
    of an append made before it."""
    watched, unwatched = f"{room_id}-a", f"{room_id}-b"
    for room in (watched, unwatched):
        await events.create_room(room, b"meta")
    async with listening(backend) as heard:
        await heard.watch(watched)
        await events.append(unwatched, 0, [b"1"])
        await events.append(watched, 0, [b"1"])
        assert await heard.next_hint() == (watched, 1)  # and nothing of the other room first
        await heard.watch(unwatched)
        await events.append(watched, 1, [b"2"])
        await heard.hints.unwatch(watched)
        assert set(drained(heard.hinted)) <= {(watched, 2)}  # (heard before the unwatch)
        await events.append(watched, 2, [b"3"])
        await events.append(unwatched, 1, [b"2"])
        assert await heard.next_hint() == (unwatched, 2)
        assert heard.hinted.empty()


async def test_a_broadcast_reaches_every_hints_the_sender_too(backend: Backend) -> None:
    async with listening(backend) as sender, listening(backend) as other:
        message = {"kind": "revoked", "room": "r1", "seat": "olympians", "generation": 2}
        await sender.hints.broadcast(message)
        for heard in (sender, other):
            received = await heard.next_control()
            assert received == message
            assert received is not message  # a copy: nothing of the sender's is shared
        assert sender.control.empty() and other.control.empty()


async def test_stop_ends_delivery(backend: Backend, events: EventLog, room_id: str) -> None:
    """Once ``stop`` returned a hints hears nothing more, not even of what was sent before;
    another one, still started, hears it all."""
    await events.create_room(room_id, b"meta")
    stopped = listener(backend)
    await stopped.hints.start()
    await stopped.watch(room_id)
    async with listening(backend) as heard:
        await heard.watch(room_id)
        await events.append(room_id, 0, [b"1"])
        await heard.hints.broadcast({"kind": "before"})
        await stopped.hints.stop()
        assert not stopped.hints.connected
        assert set(drained(stopped.hinted)) <= {(room_id, 1)}  # (heard before the stop)
        assert drained(stopped.control) in ([], [{"kind": "before"}])
        await events.append(room_id, 1, [b"2"])
        await heard.hints.broadcast({"kind": "after"})
        assert [await heard.next_hint() for _ in range(2)] == [(room_id, 1), (room_id, 2)]
        assert [await heard.next_control() for _ in range(2)] == [
            {"kind": "before"},
            {"kind": "after"},
        ]
    assert stopped.hinted.empty() and stopped.control.empty()


async def test_a_started_hints_is_ready(backend: Backend) -> None:
    async with listening(backend) as heard:
        readiness = await heard.hints.readiness(WAIT)
        assert readiness.ready and readiness.down is None and readiness.shards_down == []
        assert heard.hints.connected


# -- the memory backend's own ----------------------------------------------------------------
# What only memory promises: its sharing by prefix, and delivery on each watcher's loop, which
# may run in another thread (the servers of one test), and never inside the call that caused it.


def test_memory_backends_are_shared_by_prefix() -> None:
    config = StoreConfig("memory://", prefix=f"t-{uuid.uuid4().hex}")
    shared = MemoryBackend.shared(config)
    assert MemoryBackend.shared(StoreConfig("memory://", prefix=config.prefix)) is shared
    assert open_backend(config) is shared
    assert MemoryBackend.shared(StoreConfig("memory://", prefix=f"{config.prefix}-2")) is not shared
    assert MemoryBackend(config) is not shared


async def test_memory_hints_are_never_delivered_inline(room_id: str) -> None:
    backend = MemoryBackend(StoreConfig("memory://"))
    await backend.events.create_room(room_id, b"meta")
    async with listening(backend) as heard:
        await heard.hints.watch(room_id)
        assert heard.hinted.empty()  # the confirmation is scheduled, not made inside watch
        assert await heard.next_hint() == (room_id, None)
        await backend.events.append(room_id, 0, [b"1"])
        await heard.hints.broadcast({"kind": "x"})
        assert heard.hinted.empty() and heard.control.empty()
        assert await heard.next_hint() == (room_id, 1)
        assert await heard.next_control() == {"kind": "x"}


async def test_memory_hints_reach_a_loop_in_another_thread(room_id: str) -> None:
    backend = MemoryBackend(StoreConfig("memory://"))
    await backend.events.create_room(room_id, b"meta")
    heard: queue.Queue[tuple[str, int | None, int]] = queue.Queue()
    release = threading.Event()

    async def watcher() -> None:
        def on_hint(room: str, version: int | None) -> None:
            heard.put((room, version, threading.get_ident()))

        hints = backend.hints(on_hint, lambda message: None, lambda: None)
        await hints.start()
        await hints.watch(room_id)
        await asyncio.to_thread(release.wait, WAIT)
        await hints.stop()

    elsewhere = asyncio.ensure_future(asyncio.to_thread(asyncio.run, watcher()))
    try:
        room, version, thread = await asyncio.to_thread(heard.get, timeout=WAIT)
        assert (room, version) == (room_id, None) and thread != threading.get_ident()
        await backend.events.append(room_id, 0, [b"1"])
        assert await asyncio.to_thread(heard.get, timeout=WAIT) == (room_id, 1, thread)
    finally:
        release.set()
        await elsewhere


async def test_an_analysis_is_kept_once_and_dropped_with_its_room(backend: Backend) -> None:
    room = f"an-{uuid.uuid4().hex[:8]}"
    await backend.events.create_room(room, b"")
    assert await backend.analyses.get(room) is None
    assert await backend.analyses.put(room, b"first") == b"first"
    assert await backend.analyses.put(room, b"second") == b"first"
    assert await backend.analyses.get(room) == b"first"
    await backend.events.delete_room(room)
    assert await backend.analyses.get(room) is None


# -- WatcherCounts --------------------------------------------------------------------------


async def test_watcher_counts_are_summed_over_the_processes_alive(backend: Backend) -> None:
    """Each process's write replaces its own counts; a read sums the processes whose counts
    have not expired at the reader's time; counts of 0 are not kept; an empty write forgets the
    process at once."""
    watchers: WatcherCounts = backend.watchers
    assert await watchers.totals(1_000) == {}
    await watchers.put("proc-a", {"room-1": 2, "room-2": 1, "room-3": 0}, 1_000, ttl_ms=4_000)
    await watchers.put("proc-b", {"room-1": 3}, 1_000, ttl_ms=7_000)
    assert await watchers.totals(1_000) == {"room-1": 5, "room-2": 1}
    await watchers.put("proc-a", {"room-2": 4}, 2_000, ttl_ms=4_000)  # replaces a's counts
    assert await watchers.totals(2_000) == {"room-1": 3, "room-2": 4}
    assert await watchers.totals(6_000) == {"room-1": 3, "room-2": 4}  # due at 6,000: still
    assert await watchers.totals(6_001) == {"room-1": 3}  # a stopped writing: its counts go
    await watchers.put("proc-b", {}, 6_001, ttl_ms=4_000)  # a process that stops says so
    assert await watchers.totals(6_001) == {}
    with pytest.raises(ValueError):
        await watchers.put("proc {a}", {"room-1": 1}, 6_001, ttl_ms=4_000)
    with pytest.raises(ValueError):
        await watchers.put("proc-a", {"room {1}": 1}, 6_001, ttl_ms=4_000)
