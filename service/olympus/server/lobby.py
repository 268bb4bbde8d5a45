"""Room records beside the event log: options, seats, token generations, lobby status.

The log is the game; this is who sits where. A room's seats live in a hash next to the
store's keys and under the same ``{room}`` hash tag (one cluster slot): field ``olympians`` /
``chthonians`` exists once the seat is taken and holds its token generation (revoking bumps
it); ``host`` is the Challenge creator's generation and ``host_side`` the seat the creator got
once the opponent picked. Options are also in the store's room meta (msgpack), so listing
rooms needs no replay. Seats are taken by one Lua script, so two joiners never share a seat.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any, Literal

import msgpack
from pydantic import BaseModel, ConfigDict, Field, model_validator
from redis.asyncio import Redis

from olympus.rules import Faction, Options, create, encode
from olympus.store import EventStore

from . import tokens
from .tokens import SeatClaim

SEATS = tuple(f.value for f in Faction)
STATUSES = ("open", "live", "finished")
CLOCK_LIMIT = 7 * 24 * 3600

# KEYS: seats hash, store meta.  ARGV: side ('' = any free seat), challenge ('1'/'0').
# Returns {code, side, full}: 1 joined; 0 taken/full; -1 no room; -2 a Challenge needs a side.
_LUA_JOIN = """
if redis.call('EXISTS', KEYS[2]) == 0 then return {-1, '', 0} end
local side = ARGV[1]
if ARGV[2] == '1' then
  if redis.call('HEXISTS', KEYS[1], 'host_side') == 1 then return {0, '', 1} end
  if side == '' then return {-2, '', 0} end
  local other = (side == 'olympians') and 'chthonians' or 'olympians'
  redis.call('HSET', KEYS[1], side, 1, other, 1, 'host_side', other)
  return {1, side, 1}
end
if side == '' then
  for _, s in ipairs({'olympians', 'chthonians'}) do
    if side == '' and redis.call('HEXISTS', KEYS[1], s) == 0 then side = s end
  end
  if side == '' then return {0, '', 1} end
elseif redis.call('HEXISTS', KEYS[1], side) == 1 then
  return {0, '', 0}
end
redis.call('HSET', KEYS[1], side, 1)
local full = redis.call('HEXISTS', KEYS[1], 'olympians')
  + redis.call('HEXISTS', KEYS[1], 'chthonians')
return {1, side, full == 2 and 1 or 0}
"""

ClockSeconds = Field(default=None, ge=1, le=CLOCK_LIMIT)


class CreateRoom(BaseModel):
    """The body of ``POST /rooms`` (api.md)."""

    model_config = ConfigDict(extra="forbid")
    side: Literal["olympians", "chthonians", "random"] | None = None
    open_combat: bool = False
    random_setup: bool = False
    challenge: int | None = Field(default=None, ge=-5, le=5)
    move_seconds: int | None = ClockSeconds
    commit_seconds: int | None = ClockSeconds
    forfeit_seconds: int | None = ClockSeconds

    @model_validator(mode="after")
    def _challenge_side(self) -> CreateRoom:
        if self.challenge is not None and self.side is not None:
            raise ValueError("In a Challenge the other player picks the side: leave 'side' out.")
        return self

    def options(self) -> Options:
        return Options(
            open_combat=self.open_combat,
            random_setup=self.random_setup,
            chthonian_honor=self.challenge or 0,
            move_seconds=self.move_seconds,
            commit_seconds=self.commit_seconds,
            forfeit_seconds=self.forfeit_seconds,
        )


class JoinRoom(BaseModel):
    model_config = ConfigDict(extra="forbid")
    side: Literal["olympians", "chthonians"] | None = None


class LobbyError(Exception):
    def __init__(self, status: int, code: str, sentence: str) -> None:
        super().__init__(sentence)
        self.status = status
        self.code = code
        self.sentence = sentence


@dataclass(frozen=True, slots=True)
class Seated:
    room: str
    epoch: int
    seat: str  # a faction, or "host" for a Challenge creator before the opponent joined
    token: str
    full: bool = False  # both seats are now taken
    generation: int = 1


class Lobby:
    def __init__(self, redis: Redis, store: EventStore, secret: bytes, seed_source) -> None:
        self.redis = redis
        self.store = store
        self.secret = secret
        self.seed_source = seed_source
        self._join = redis.register_script(_LUA_JOIN)

    def seats_key(self, room: str) -> str:
        return f"{self.store.prefix}:room:{{{room}}}:seats"

    def _token(self, room: str, seat: str, generation: int) -> str:
        return tokens.sign(self.secret, SeatClaim(room, seat, generation))

    async def create(self, request: CreateRoom, computer: dict[str, str] | None = None) -> Seated:
        """Create the room, append GameCreated with a secret token seed, seat the creator.
        ``computer``: the seats the computer plays, with their levels (computer.py)."""
        options = request.options()
        first_events = create(options, token_seed=self.seed_source())  # R7: a secret seed
        room = secrets.token_urlsafe(9)
        meta = {
            "v": 1,
            "challenge": request.challenge is not None,
            "options": request.model_dump(exclude={"side"}),
            "created_ms": time.time_ns() // 1_000_000,
            "computer": computer or {},
        }
        epoch = await self.store.create_room(room, msgpack.packb(meta))
        if request.challenge is not None:
            seat = "host"
        elif request.side in (None, "random"):
            seat = secrets.choice(SEATS)
        else:
            seat = request.side
        await self.redis.hset(self.seats_key(room), seat, 1)
        await self.store.append(room, 0, [encode(e) for e in first_events], "sys:create", "")
        await self.store.set_room_status(room, "open")
        return Seated(room, epoch, seat, self._token(room, seat, 1))

    async def meta(self, room: str) -> dict[str, Any]:
        return msgpack.unpackb(await self.store.room_meta(room))

    async def join(self, room: str, side: str | None) -> Seated:
        """Take a seat (``side`` None: any free one; a Challenge needs a side)."""
        meta = await self._meta_or_404(room)
        code, taken, full = await self._join(
            keys=[self.seats_key(room), self.store.keys(room).meta],
            args=[side or "", "1" if meta["challenge"] else "0"],
        )
        if code == -1:
            raise LobbyError(404, "room_not_found", "There is no such room.")
        if code == -2:
            raise LobbyError(422, "side_required", "In a Challenge, the joiner picks the side.")
        if code == 0:
            raise LobbyError(409, "seat_taken", "That seat is taken.")
        seat = taken.decode()
        if full:
            await self.store.set_room_status(room, "live")
        return Seated(room, await self.store.epoch(room), seat, self._token(room, seat, 1), full)

    async def host_seat(self, claim: SeatClaim) -> Seated:
        """A Challenge creator's seat, once the opponent has picked the other one."""
        await self.check_generation(claim)
        side = await self.redis.hget(self.seats_key(claim.room), "host_side")
        if side is None:
            raise LobbyError(409, "no_opponent_yet", "The opponent has not picked a side yet.")
        seat = side.decode()
        generation = await self.generation(claim.room, seat)
        token = self._token(claim.room, seat, generation or 1)
        return Seated(claim.room, await self.store.epoch(claim.room), seat, token, True)

    async def generation(self, room: str, seat: str) -> int | None:
        value = await self.redis.hget(self.seats_key(room), seat)
        return None if value is None else int(value)

    async def check_generation(self, claim: SeatClaim) -> None:
        if await self.generation(claim.room, claim.seat) != claim.generation:
            raise LobbyError(401, "token_revoked", "This seat token was revoked.")

    async def revoke(self, claim: SeatClaim) -> Seated:
        """Invalidate every token of the seat and hand out the one new token."""
        await self.check_generation(claim)
        generation = await self.redis.hincrby(self.seats_key(claim.room), claim.seat, 1)
        token = self._token(claim.room, claim.seat, generation)
        epoch = await self.store.epoch(claim.room)
        return Seated(claim.room, epoch, claim.seat, token, generation=generation)

    async def seats_full(self, room: str) -> bool:
        return None not in await self.redis.hmget(self.seats_key(room), list(SEATS))

    async def _meta_or_404(self, room: str) -> dict[str, Any]:
        if not tokens.is_room_id(room) or not await self.store.room_exists(room):
            raise LobbyError(404, "room_not_found", "There is no such room.")
        return await self.meta(room)

    async def summaries(self, rooms: list[str], status: str | None) -> list[dict[str, Any]]:
        """What the lobby shows of each room; rooms deleted meanwhile are left out."""
        pipe = self.redis.pipeline(transaction=False)
        for room in rooms:
            pipe.hget(self.store.keys(room).meta, "meta")
            pipe.hgetall(self.seats_key(room))
        replies = await pipe.execute()
        found = []
        for i, room in enumerate(rooms):
            meta, seats = replies[2 * i : 2 * i + 2]
            if meta is None:
                continue
            meta = msgpack.unpackb(meta)
            found.append(
                {
                    "room": room,
                    "status": status,
                    "challenge": meta["challenge"],
                    "options": meta["options"],
                    "seats": {s: s.encode() in seats for s in SEATS},
                    "created_ms": meta["created_ms"],
                    "computer": meta.get("computer", {}),
                }
            )
        return found

    async def summary(self, room: str) -> dict[str, Any]:
        found = []
        if tokens.is_room_id(room):
            found = await self.summaries([room], await self.store.room_status(room))
        if not found:
            raise LobbyError(404, "room_not_found", "There is no such room.")
        return found[0]
