"""The ``WatcherCounts`` port (ports.py) on Redis and in memory.

On Redis each process's counts are a hash, ``<prefix>:{watchers}:p:<process>`` (room ->
sockets), and the processes a sorted set, ``<prefix>:{watchers}:procs`` (process -> when its
counts expire, by the caller's clock): one hash tag, so on a Redis Cluster every key is on one
master and each write or read is one MULTI. A write replaces the process's hash whole; a read
drops the expired processes from the set and sums the hashes of the others. The hashes also
expire in Redis a minute after their time to live (only to collect what a dead process left:
the set is what counts).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from .records import check_room_id, text
from .redis_errors import translated

_COLLECT_MS = 60_000  # a hash outlives its time in Redis by this much (garbage collection)


def _check(process: str, counts: Mapping[str, int]) -> dict[str, int]:
    """The counts worth keeping (positive), after checking every name."""
    check_room_id(process)  # the same alphabet as a room id: it names a key
    kept = {}
    for room_id, count in counts.items():
        check_room_id(room_id)
        if count > 0:
            kept[room_id] = int(count)
    return kept


class RedisWatcherCounts:
    """``WatcherCounts`` on one Redis or a Cluster (see the module)."""

    def __init__(self, redis: Redis | RedisCluster, prefix: str) -> None:
        self.redis = redis
        self.procs = f"{prefix}:{{watchers}}:procs"
        self._hash = f"{prefix}:{{watchers}}:p:"

    @translated
    async def put(self, process: str, counts: Mapping[str, int], now_ms: int, ttl_ms: int) -> None:
        kept = _check(process, counts)
        key = self._hash + process
        pipe = self.redis.pipeline(transaction=True)  # one slot: one MULTI
        pipe.delete(key)
        if kept:
            pipe.hset(key, mapping=kept)  # type: ignore[arg-type]
            pipe.pexpire(key, ttl_ms + _COLLECT_MS)
            pipe.zadd(self.procs, {process: now_ms + ttl_ms})
        else:
            pipe.zrem(self.procs, process)
        await pipe.execute()

    @translated
    async def totals(self, now_ms: int) -> dict[str, int]:
        pipe = self.redis.pipeline(transaction=True)
        pipe.zremrangebyscore(self.procs, "-inf", f"({now_ms}")
        pipe.zrange(self.procs, 0, -1)
        _, processes = await pipe.execute()
        if not processes:
            return {}
        pipe = self.redis.pipeline(transaction=True)
        for process in processes:
            pipe.hgetall(self._hash + text(process))
        found: dict[str, int] = {}
        for counts in await pipe.execute():
            for room_id, count in counts.items():
                room = text(room_id)
                found[room] = found.get(room, 0) + int(count)
        return found


class MemoryWatcherCounts:
    """``WatcherCounts`` in this process's memory (memory.py: tests, ``--store memory``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, tuple[int, dict[str, int]]] = {}  # process -> (expires, counts)

    async def put(self, process: str, counts: Mapping[str, int], now_ms: int, ttl_ms: int) -> None:
        kept = _check(process, counts)
        with self._lock:
            if kept:
                self._counts[process] = (now_ms + ttl_ms, kept)
            else:
                self._counts.pop(process, None)

    async def totals(self, now_ms: int) -> dict[str, int]:
        found: dict[str, int] = {}
        with self._lock:
            for process, (expires_ms, counts) in list(self._counts.items()):
                if expires_ms < now_ms:
                    del self._counts[process]
                    continue
                for room_id, count in counts.items():
                    found[room_id] = found.get(room_id, 0) + count
        return found
