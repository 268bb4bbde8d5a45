"""The ``Players`` port on Redis (ports.py): sessions' generations and ends, attempt counters.

An account's keys share its hash tag, ``<prefix>:{player:<id>}:…``, so its session is read
with one MGET on a Redis Cluster too: ``generation`` (a counter) and ``out:<session>`` (a
session signed out, kept as long as its cookie could live). Attempts are counted under
``<prefix>:attempts:{<key>}``, each key a window of its own that expires; players seen lately
in the sorted set ``<prefix>:{online}`` (name -> when).
"""

from __future__ import annotations

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from .records import text
from .redis_errors import translated

# KEYS: the counter. ARGV: the window (ms). The count so far and the window's time left.
_LUA_ATTEMPT = """
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local left = redis.call('PTTL', KEYS[1])
if left < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); left = tonumber(ARGV[1]) end
return {n, left}
"""


class RedisPlayers:
    """The ``Players`` port on Redis (ports.py)."""

    def __init__(self, redis: Redis | RedisCluster, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix

    def _key(self, account_id: int, name: str) -> str:
        return f"{self.prefix}:{{player:{int(account_id)}}}:{name}"

    @translated
    async def session(self, account_id: int, session_id: str) -> tuple[int, bool]:
        generation, out = await self.redis.mget(
            self._key(account_id, "generation"), self._key(account_id, f"out:{session_id}")
        )
        return (int(generation) if generation is not None else 0), out is not None

    @translated
    async def end_session(self, account_id: int, session_id: str, ttl_seconds: int) -> None:
        await self.redis.set(self._key(account_id, f"out:{session_id}"), 1, ex=ttl_seconds)

    @translated
    async def bump_generation(self, account_id: int) -> int:
        return int(await self.redis.incr(self._key(account_id, "generation")))

    @translated
    async def note_online(self, name: str, at_ms: int) -> None:
        await self.redis.zadd(f"{self.prefix}:{{online}}", {name: at_ms})

    @translated
    async def online(self, since_ms: int, limit: int) -> tuple[int, list[str]]:
        key = f"{self.prefix}:{{online}}"
        pipe = self.redis.pipeline(transaction=True)  # one slot: a MULTI of three
        pipe.zremrangebyscore(key, "-inf", f"({since_ms}")
        pipe.zcard(key)
        pipe.zrevrange(key, 0, max(0, limit - 1))
        _, count, names = await pipe.execute()
        return int(count), [text(n) for n in names][:limit]

    @translated
    async def attempt(self, key: str, window_seconds: int) -> tuple[int, int]:
        counter = f"{self.prefix}:attempts:{{{key}}}"
        count, left = await self.redis.eval(_LUA_ATTEMPT, 1, counter, window_seconds * 1000)
        return int(count), int(left)
