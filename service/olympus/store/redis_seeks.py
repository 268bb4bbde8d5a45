"""The ``SeekPool`` port on Redis (ports.py; the rule: seeks.py).

Every key of the pool shares the hash tag ``{seeks}`` (one slot: a pass pairs a whole pool in
one script, atomically): ``pools`` (the pools' names), ``pool:<pool>`` (seek -> rating),
``seek:<id>`` (its account, pool, rating, since and alive times), ``account:<id>`` (the
account's seek: one at a time), ``match:<id>`` (a paired seek's room, seat, pool and both
accounts, kept ``MATCH_TTL`` seconds).
"""

from __future__ import annotations

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from .records import text
from .redis_errors import translated
from .seeks import BASE_RANGE, MAX_RANGE, WIDENING, Match, Seek

MATCH_TTL = 600

# KEYS: the tag's prefix "<prefix>:{seeks}:". ARGV: id, account, pool, rating, since, alive.
_LUA_ADD = """
local p = KEYS[1]
local old = redis.call('GET', p .. 'account:' .. ARGV[2])
if old then
  local pool = redis.call('HGET', p .. 'seek:' .. old, 'pool')
  if pool then redis.call('ZREM', p .. 'pool:' .. pool, old) end
  redis.call('DEL', p .. 'seek:' .. old)
end
redis.call('HSET', p .. 'seek:' .. ARGV[1], 'account', ARGV[2], 'pool', ARGV[3],
  'rating', ARGV[4], 'since', ARGV[5], 'alive', ARGV[6])
redis.call('ZADD', p .. 'pool:' .. ARGV[3], ARGV[4], ARGV[1])
redis.call('SADD', p .. 'pools', ARGV[3])
redis.call('SET', p .. 'account:' .. ARGV[2], ARGV[1])
"""

# KEYS: the prefix. ARGV: id, alive (0: cancel). 1 if it waits (or was cancelled), else 0.
_LUA_KEEP = """
local p = KEYS[1]
local seek = p .. 'seek:' .. ARGV[1]
local pool = redis.call('HGET', seek, 'pool')
if not pool then return 0 end
if ARGV[2] ~= '0' then redis.call('HSET', seek, 'alive', ARGV[2]); return 1 end
local account = redis.call('HGET', seek, 'account')
redis.call('ZREM', p .. 'pool:' .. pool, ARGV[1])
redis.call('DEL', seek)
if redis.call('GET', p .. 'account:' .. account) == ARGV[1] then
  redis.call('DEL', p .. 'account:' .. account)
end
return 1
"""

# KEYS: the prefix. ARGV: pool, now, base range, widening per second, max range, match TTL.
# Returns the new pairs: {low id, high id, room, ...}. seeks.py states the rule.
_LUA_PAIR = """
local p, pool, now = KEYS[1], ARGV[1], tonumber(ARGV[2])
local base, widen, most = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local ids = redis.call('ZRANGE', p .. 'pool:' .. pool, 0, -1)
local live = {}
local function drop(id, account)
  redis.call('ZREM', p .. 'pool:' .. pool, id)
  redis.call('DEL', p .. 'seek:' .. id)
  if account and redis.call('GET', p .. 'account:' .. account) == id then
    redis.call('DEL', p .. 'account:' .. account)
  end
end
for _, id in ipairs(ids) do
  local f = redis.call('HMGET', p .. 'seek:' .. id, 'account', 'rating', 'since', 'alive')
  if not f[1] or tonumber(f[4]) < now then
    drop(id, f[1])
  else
    local waited = now - tonumber(f[3])
    if waited < 0 then waited = 0 end
    local range = math.min(most, base + math.floor(widen * waited / 1000))
    table.insert(live, {id = id, account = f[1], rating = tonumber(f[2]), range = range})
  end
end
if #live == 0 then redis.call('SREM', p .. 'pools', pool) end
local paired = {}
local i = 1
while i < #live do
  local a, b = live[i], live[i + 1]
  if a.account ~= b.account and b.rating - a.rating <= math.min(a.range, b.range) then
    local room = string.sub(redis.sha1hex(a.id .. '|' .. b.id), 1, 12)
    local low = (tonumber(string.sub(room, 12, 12), 16) % 2 == 0) and 'olympians' or 'chthonians'
    local high = (low == 'olympians') and 'chthonians' or 'olympians'
    local o = (low == 'olympians') and a.account or b.account
    local c = (low == 'olympians') and b.account or a.account
    local tail = '|' .. pool .. '|' .. o .. '|' .. c
    redis.call('SET', p .. 'match:' .. a.id, room .. '|' .. low .. tail, 'EX', ARGV[6])
    redis.call('SET', p .. 'match:' .. b.id, room .. '|' .. high .. tail, 'EX', ARGV[6])
    drop(a.id, a.account)
    drop(b.id, b.account)
    table.insert(paired, a.id)
    table.insert(paired, b.id)
    table.insert(paired, room)
    i = i + 2
  else
    i = i + 1
  end
end
return paired
"""


def _match(value: str) -> Match:
    room, seat, pool, olympians, chthonians = value.split("|")
    return Match(room, seat, pool, {"olympians": int(olympians), "chthonians": int(chthonians)})


class RedisSeeks:
    """The ``SeekPool`` port on Redis (ports.py)."""

    def __init__(self, redis: Redis | RedisCluster, prefix: str) -> None:
        self.redis = redis
        self.tag = f"{prefix}:{{seeks}}:"

    @translated
    async def add(self, seek: Seek) -> None:
        await self.redis.eval(
            _LUA_ADD,
            1,
            self.tag,
            seek.id,
            seek.account,
            seek.pool,
            repr(float(seek.rating)),
            seek.since_ms,
            seek.alive_ms,
        )

    @translated
    async def keep_alive(self, seek_id: str, alive_ms: int) -> bool:
        return bool(await self.redis.eval(_LUA_KEEP, 1, self.tag, seek_id, max(1, alive_ms)))

    @translated
    async def cancel(self, seek_id: str) -> bool:
        return bool(await self.redis.eval(_LUA_KEEP, 1, self.tag, seek_id, 0))

    @translated
    async def match(self, seek_id: str) -> Match | None:
        value = await self.redis.get(f"{self.tag}match:{seek_id}")
        return None if value is None else _match(text(value))

    @translated
    async def pair(self, pool: str, now_ms: int) -> list[tuple[str, str, str]]:
        found = await self.redis.eval(
            _LUA_PAIR, 1, self.tag, pool, now_ms, BASE_RANGE, WIDENING, MAX_RANGE, MATCH_TTL
        )
        flat = [text(x) for x in found]
        return [(flat[i], flat[i + 1], flat[i + 2]) for i in range(0, len(flat), 3)]

    @translated
    async def pools(self) -> list[str]:
        return sorted(text(x) for x in await self.redis.smembers(f"{self.tag}pools"))

    @translated
    async def waiting(self, pool: str) -> int:
        return int(await self.redis.zcard(f"{self.tag}pool:{pool}"))
