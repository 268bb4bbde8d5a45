"""A live room's slot resharded while the room is used (Redis Cluster only).

``LocalCluster.migrate_slot`` does what ``redis-cli --cluster reshard`` does, one key at a time:
meanwhile the room's keys are split between the two masters (Redis answers ``TRYAGAIN``), then
all on the new one before it owns the slot (``ASK``), then the slot is given away (``MOVED``
for a client that has not noticed). Two appenders race on the room and a reader follows it all
along; after each key moved the migration waits until they met the new state. Every call must
get through (store/cluster_calls.py), and the log must be exactly the acknowledged appends.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable

import pytest
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot

from olympus.store import EventStore, Replicated, StoredEvent, VersionConflict, chain_next
from olympus.store.local_cluster import LocalCluster, Node

TIMEOUT = 60.0  # seconds for any one step: generous, the steps take milliseconds


@pytest.fixture(params=[None, Replicated(1)], ids=["plain", "wait"])
async def cluster_store(
    request: pytest.FixtureRequest, redis_cluster: LocalCluster
) -> AsyncIterator[EventStore]:
    """A store on the cluster whose appends are acknowledged at once, or once a replica has
    them (``WAIT``, sent behind the script on its connection: after ``ASKING`` too)."""
    client = RedisCluster.from_url(f"redis://{redis_cluster.nodes[0].address}", socket_timeout=10)
    yield EventStore(client, f"migrating-{uuid.uuid4().hex[:8]}", replicated=request.param)
    await client.aclose()


def refusals(*nodes: Node) -> Counter[str]:
    """How many replies of each error (``TRYAGAIN``, ``ASK``, ``MOVED``…) the nodes sent since
    they started (``INFO errorstats``)."""
    counts: Counter[str] = Counter()
    for node in nodes:
        for line in node.cli("info", "errorstats").splitlines():
            if line.startswith("errorstat_"):
                name, _, count = line.removeprefix("errorstat_").partition(":count=")
                counts[name] += int(count)
    return counts


def check_chain(events: list[StoredEvent], chain: str = "") -> str:
    """Each event records the chain of the events before it and itself: no fork, no gap."""
    for event in events:
        chain = chain_next(chain, event.data)
        assert event.chain == chain, f"event {event.version} does not continue the chain"
    return chain


async def wait_for(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


async def test_a_live_rooms_slot_migrates_key_by_key_under_appends_and_reads(
    redis_cluster: LocalCluster, cluster_store: EventStore
) -> None:
    store = cluster_store
    room = redis_cluster.room_in_an_empty_slot(lambda room: store.keys(room).events)
    keys = store.keys(room)
    slot = key_slot(keys.events.encode())
    await store.create_room(room, b"meta")
    acked: list[tuple[int, bytes]] = []  # (version, data) of every append that returned
    chain = ""
    for n in range(3):
        data = f"first-{n}".encode()
        await store.append(room, n, [data], command_id=data.decode(), chain=chain)
        acked.append((n + 1, data))
        chain = chain_next(chain, data)
    source = redis_cluster.master_of_slot(slot)
    target = next(m for m in redis_cluster.live_masters if m is not source)
    stop = asyncio.Event()
    reads = [0]

    async def appender(name: str) -> None:
        """Appends its own events (each its own command id) onto what it knows of the room;
        beaten to a version, it reads what the other appended, checks it, and tries again."""
        version, known = 3, chain
        n = 0
        while not stop.is_set():
            data = f"{name}-{n}".encode()
            try:
                result = await store.append(room, version, [data], data.decode(), known)
            except VersionConflict:
                tail = await store.read(room, version)
                known = check_chain(tail, known)
                version = tail[-1].version
                continue
            assert not result.duplicate and result.version == version + 1
            acked.append((result.version, data))
            version, known, n = result.version, chain_next(known, data), n + 1

    async def reader() -> None:
        """Follows the room's tail: it only ever grows, and continues the chain."""
        version, known = 0, ""
        while not stop.is_set():
            tail = await store.read(room, version)
            known = check_chain(tail, known)
            version = tail[-1].version if tail else version
            reads[0] += 1

    tasks = [asyncio.create_task(t) for t in (appender("a"), appender("b"), reader())]
    before = refusals(source, target)
    moved: list[str] = []

    def between(key: str) -> None:
        """After each key moved (in the migration's thread), until the room's calls met the
        new state. Once two of its four keys moved, every script of the room is split whatever
        their order: until Redis refused the three tasks' calls more than three times 16, the
        tries redis-py makes before it fails a call (TTL exhausted). Once all four moved, the
        new master must serve them (ASK): until an append and a read returned. Otherwise:
        until both returned, or a call was refused (TRYAGAIN)."""
        moved.append(key)
        acks, done, tries = len(acked), reads[0], refusals(source, target)["TRYAGAIN"]
        deadline = time.monotonic() + TIMEOUT
        while not any(t.done() for t in tasks):  # a failed task: the test raises it below
            refused = refusals(source, target)["TRYAGAIN"] - tries
            served = len(acked) > acks and reads[0] > done
            if len(moved) == 2 and refused > 3 * 16:
                return
            if len(moved) == 4 and served:
                return
            if len(moved) in (1, 3) and (served or refused):
                return
            assert time.monotonic() < deadline, f"no append nor read after {key} moved"
            time.sleep(0.01)

    try:
        count = await asyncio.to_thread(redis_cluster.migrate_slot, slot, target, between)
        assert sorted(moved) == sorted([keys.meta, keys.events, keys.commands, keys.snapshot])
        assert count == 4
        assert redis_cluster.master_of(keys.events) is target
        after = len(acked), reads[0]
        await wait_for(
            lambda: (
                (len(acked) > after[0] + 10 and reads[0] > after[1]) or any(t.done() for t in tasks)
            ),
            "appends and reads on the new master",
        )
    finally:
        stop.set()
        await asyncio.gather(*tasks)  # raises what failed in them

    seen = refusals(source, target) - before
    assert seen["TRYAGAIN"] > 0, "no call met the room's keys split between the masters"
    assert seen["ASK"] > 0, "no call was sent to the new master before it owned the slot"
    assert seen["MOVED"] > 0, "no call was sent to the old master after the migration"

    log = await store.read(room)
    assert [(e.version, e.data) for e in log] == sorted(acked)  # each once, nothing else
    check_chain(log)
    assert (await store.load(room)).events == log
    assert await store.version(room) == len(log)
    # No append half-applied: each event has its command's record, and each record its event.
    applied = await store.redis.hgetall(keys.commands)
    assert applied == {e.data: f"{e.version}:{e.version}:".encode() for e in log}

    await store.delete_room(room)
    redis_cluster.move_slot(slot, source)  # empty again: back where it was
