"""The small global ports on Redis: the deadline index, the bot seat records, the token key.

Each is spread over keys of their own hash slots, so that on a Redis Cluster they spread over
the masters instead of loading one (docs/scaling.md):

- the deadline index: ``DEADLINE_BUCKETS`` sorted sets ``<prefix>:{rooms:<n>}:deadlines``
  (room -> earliest due, ms), the room's bucket by the CRC-32 of its id; the unbucketed
  ``<prefix>:{rooms}:deadlines`` is still read, and each room found there moved to its bucket;
- the archive's queue (finished room -> when it is due to move), the same way under
  ``archive-due``, and the ratings' queue (finished rated room -> when to rate it) under
  ``rating-due``;
- the bot seat records: ``BOT_BUCKETS`` hashes ``<prefix>:{bots:<n>}`` (``<room>:<seat>`` ->
  record), the room's bucket by ``bot_hash`` (ports.py);
- the token key: ``<prefix>:secret``, set once (SET NX).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from .ports import BOT_BUCKETS, bot_hash
from .records import text
from .redis_errors import translated

# Buckets of the deadline index. Changing it strands the entries of the buckets that go: sweep
# them as the unbucketed key is swept before changing it.
DEADLINE_BUCKETS = 16


class RedisDeadlines:
    """The ``DeadlineIndex`` port on Redis (ports.py)."""

    def __init__(self, redis: Redis | RedisCluster, prefix: str, name: str = "deadlines") -> None:
        """``name``: ``deadlines`` (the clocks'), ``archive-due`` (the archive's queue) or
        ``rating-due`` (the ratings')."""
        self.redis = redis
        self._keys = [f"{prefix}:{{rooms:{n}}}:{name}" for n in range(DEADLINE_BUCKETS)]
        self._unbucketed = f"{prefix}:{{rooms}}:{name}"

    def key(self, room_id: str) -> str:
        """The bucket that holds ``room_id``'s entry."""
        return self._keys[zlib.crc32(room_id.encode()) % DEADLINE_BUCKETS]

    @translated
    async def set_due(self, room_id: str, due_ms: int | None) -> None:
        if due_ms is None:
            await self.redis.zrem(self.key(room_id), room_id)
        else:
            await self.redis.zadd(self.key(room_id), {room_id: due_ms})

    @translated
    async def overdue(self, until_ms: int, limit: int = 100) -> list[str]:
        keys = (*self._keys, self._unbucketed)
        pipe = self.redis.pipeline(transaction=False)  # one round trip for every bucket
        for key in keys:
            pipe.zrangebyscore(key, "-inf", until_ms, start=0, num=limit)
        found = dict(zip(keys, await pipe.execute(), strict=True))
        unbucketed = [text(room) for room in found.pop(self._unbucketed)]
        for room in unbucketed:  # to its bucket, where the caller's next set_due puts it
            await self.redis.zrem(self._unbucketed, room)
        return [text(room) for rooms in found.values() for room in rooms] + unbucketed


class RedisBotSeats:
    """The ``BotSeats`` port on Redis (ports.py)."""

    def __init__(self, redis: Redis | RedisCluster, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix

    def key(self, bucket: int) -> str:
        return f"{self.prefix}:{{bots:{bucket}}}"

    def _room_key(self, room_id: str) -> str:
        return self.key(bot_hash(room_id) % BOT_BUCKETS)

    @translated
    async def put(self, room_id: str, seat: str, record: str) -> None:
        await self.redis.hset(self._room_key(room_id), f"{room_id}:{seat}", record)

    @translated
    async def remove(self, room_id: str, seat: str) -> None:
        await self.redis.hdel(self._room_key(room_id), f"{room_id}:{seat}")

    @translated
    async def read(self, buckets: Iterable[int]) -> dict[str, str]:
        pipe = self.redis.pipeline(transaction=False)  # one round trip per node
        for bucket in buckets:
            pipe.hgetall(self.key(bucket))
        replies: list[dict[bytes, bytes]] = await pipe.execute()
        return {text(k): text(v) for reply in replies for k, v in reply.items()}


class RedisAnalyses:
    """The ``Analyses`` port on Redis (ports.py): a string beside the room's keys, in its hash
    slot, dropped with them (``EventStore.delete_room``)."""

    def __init__(self, redis: Redis | RedisCluster, key: Callable[[str], str]) -> None:
        self.redis = redis
        self.key = key

    @translated
    async def get(self, room_id: str) -> bytes | None:
        value = await self.redis.get(self.key(room_id))
        return value if value is None or isinstance(value, bytes) else value.encode()

    @translated
    async def put(self, room_id: str, data: bytes) -> bytes:
        key = self.key(room_id)
        await self.redis.set(key, data, nx=True)
        value = await self.redis.get(key)
        if value is None:  # the room was deleted between the two calls
            return data
        return value if isinstance(value, bytes) else value.encode()


class RedisSharedKeys:
    """The ``SharedKeys`` port on Redis (ports.py)."""

    def __init__(self, redis: Redis | RedisCluster, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix

    @translated
    async def shared_secret(self, fresh: str) -> bytes:
        key = f"{self.prefix}:secret"
        await self.redis.set(key, fresh, nx=True)
        value = await self.redis.get(key)
        if value is None:  # deleted between the two calls: extremely unlikely, never silent
            raise RuntimeError(f"the token secret {key!r} vanished from Redis")
        return value if isinstance(value, bytes) else value.encode()
