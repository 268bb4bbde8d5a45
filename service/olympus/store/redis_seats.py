"""The ``RoomSeats`` port on Redis: each room's seats in a hash beside the log's keys.

The hash is ``<prefix>:room:{<room>}:seats``, under the room's hash tag (the log's cluster
slot), so the join script reads the log's meta and writes the seats in one step. Its fields
are the port's (ports.py: ``RoomSeats``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .event_store import EventStore
from .ports import Join, JoinOutcome, RoomRecord
from .records import RoomNotFound, text
from .redis_errors import translated

# KEYS: seats hash, the log's meta. ARGV: side ('' = any free seat), challenge ('1'/'0'), the
# joiner's name ('' = none), set with the seat.
# Returns {code, side, full, epoch}: 1 joined; 0 taken/full; -1 no room; -2 a Challenge needs
# a side. The room's epoch comes with a seat, so that joining asks Redis nothing more.
_LUA_JOIN = """
local epoch = redis.call('HGET', KEYS[2], 'epoch')
if not epoch then return {-1, '', 0, ''} end
local side = ARGV[1]
if ARGV[2] == '1' then
  if redis.call('HEXISTS', KEYS[1], 'host_side') == 1 then return {0, '', 1, ''} end
  if side == '' then return {-2, '', 0, ''} end
  local other = (side == 'olympians') and 'chthonians' or 'olympians'
  redis.call('HSET', KEYS[1], side, 1, other, 1, 'host_side', other)
  if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'name:' .. side, ARGV[3]) end
  return {1, side, 1, epoch}
end
if side == '' then
  for _, s in ipairs({'olympians', 'chthonians'}) do
    if side == '' and redis.call('HEXISTS', KEYS[1], s) == 0 then side = s end
  end
  if side == '' then return {0, '', 1, ''} end
elseif redis.call('HEXISTS', KEYS[1], side) == 1 then
  return {0, '', 0, ''}
end
redis.call('HSET', KEYS[1], side, 1)
if ARGV[3] ~= '' then redis.call('HSET', KEYS[1], 'name:' .. side, ARGV[3]) end
local full = redis.call('HEXISTS', KEYS[1], 'olympians')
  + redis.call('HEXISTS', KEYS[1], 'chthonians')
return {1, side, full == 2 and 1 or 0, epoch}
"""

_OUTCOMES: dict[int, JoinOutcome] = {1: "joined", 0: "taken", -1: "no_room", -2: "side_required"}


def _fields(raw: Mapping[bytes, bytes] | list[bytes]) -> dict[str, str]:
    """A hash's fields as text: HGETALL's reply, a dict (redis-py's on a cluster) or a flat
    list (the store's own connection)."""
    if isinstance(raw, Mapping):
        return {text(k): text(v) for k, v in raw.items()}
    return {text(k): text(v) for k, v in zip(raw[::2], raw[1::2], strict=True)}


# Only on seats that exist: a room deleted, or moved to the archive, gets no new hash (as
# EVAL: Redis keeps a script after its first sending; these are rare, a rematch, a revoke).
_LUA_SET_ONCE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2])
return redis.call('HGET', KEYS[1], ARGV[1])
"""
_LUA_BUMP = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
return redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
"""
_LUA_MOVED = """
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('HSET', KEYS[1], 'moved_ms', ARGV[1]) end
"""


class RedisSeats:
    """The ``RoomSeats`` port on the log's Redis (ports.py)."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self._join = store.room_script(_LUA_JOIN)

    def key(self, room_id: str) -> str:
        """The room's seats hash."""
        self.store.keys(room_id)  # checks the id
        return self.store.seats_key(room_id)

    async def write(self, room_id: str, fields: Mapping[str, str | int]) -> None:
        if not fields:
            return
        key = self.key(room_id)
        await self.store.call(key, "HSET", key, *(x for pair in fields.items() for x in pair))

    async def join(self, room_id: str, side: str | None, challenge: bool, name: str) -> Join:
        code, taken, full, epoch = await self._join(
            keys=[self.key(room_id), self.store.keys(room_id).meta],
            args=[side or "", "1" if challenge else "0", name],
        )
        outcome = _OUTCOMES[int(code)]
        return Join(outcome, text(taken), bool(full), int(epoch) if outcome == "joined" else 0)

    async def fields(self, room_id: str) -> dict[str, str]:
        key = self.key(room_id)
        return _fields(await self.store.call(key, "HGETALL", key))

    async def field(self, room_id: str, name: str) -> str | None:
        key = self.key(room_id)
        value = await self.store.call(key, "HGET", key, name)
        return None if value is None else text(value)

    async def set_once(self, room_id: str, name: str, value: str) -> str | None:
        key = self.key(room_id)
        held = await self.store.call(key, "EVAL", _LUA_SET_ONCE, 1, key, name, value)
        return None if held is None else text(held)

    async def bump(self, room_id: str, name: str) -> int:
        key = self.key(room_id)
        total = await self.store.call(key, "EVAL", _LUA_BUMP, 1, key, name)
        if total is None:
            raise RoomNotFound(room_id)
        return int(total)

    async def note_moved(self, times: Mapping[str, int]) -> None:
        """As EVALs in one batch (Redis keeps the script after the first): a room whose seats
        are gone (deleted, or moved to the archive) is not given a hash of one field."""
        if times:
            await self.store.calls(
                [("EVAL", _LUA_MOVED, 1, self.key(room), ms) for room, ms in times.items()]
            )

    @translated
    async def records(self, room_ids: Sequence[str]) -> list[RoomRecord | None]:
        pipe = self.store.redis.pipeline(transaction=False)  # one round trip (per node)
        for room in room_ids:
            pipe.hget(self.store.keys(room).meta, "meta")
            pipe.hgetall(self.key(room))
        replies = await pipe.execute()
        found: list[RoomRecord | None] = []
        for i in range(len(room_ids)):
            meta, seats = replies[2 * i : 2 * i + 2]
            found.append(None if meta is None else RoomRecord(bytes(meta), _fields(seats)))
        return found
