"""Room records beside the event log: options, seats, token generations, lobby status.

The log is the game; this is who sits where, kept by the store's ``RoomSeats``
(store/ports.py): field ``olympians`` / ``chthonians`` exists once the seat is taken and holds
its token generation (revoking bumps it); ``host`` is the Challenge creator's generation and
``host_side`` the seat the creator got once the opponent picked; ``name:<seat>`` (or
``name:host``) the player's display name (names.py); ``account:<seat>`` (or ``account:host``)
the id of the account that holds the seat, for a signed-in player (accounts.py); ``moved_ms``
when a command was last applied ("Your games": time since the last move). Options are also
in the log's room meta (msgpack), so listing rooms needs no replay. A seat is taken in one
step of the store, so two joiners never share a seat.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import msgpack
from pydantic import BaseModel, ConfigDict, Field, model_validator

from olympus.rules import Faction, Options, create, encode
from olympus.store import Account, Backend, RoomNotFound

from . import tokens
from .commentary import MAX_DELAY_SECONDS
from .tokens import SeatClaim

SEATS = tuple(f.value for f in Faction)
STATUSES = ("open", "live", "finished")
CLOCK_LIMIT = 7 * 24 * 3600

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
    name: str | None = None  # checked by names.check_name
    rated: bool = False  # both players signed in; the ratings change at its end (rater.py)
    # A delayed commentary stream for everyone, identities revealed (commentary.py)
    broadcast_delay_seconds: int | None = Field(default=None, ge=1, le=MAX_DELAY_SECONDS)

    @model_validator(mode="after")
    def _challenge_side(self) -> CreateRoom:
        if self.challenge is not None and self.side is not None:
            raise ValueError("In a Challenge the other player picks the side: leave 'side' out.")
        if self.challenge is not None and self.rated:
            raise ValueError("A Challenge is not rated: its Honor adjustment handicaps a side.")
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
    name: str | None = None  # checked by names.check_name
    # The room's broadcast delay as the joiner was shown it (null: none); given, a room whose
    # delay differs is not joined (``broadcast_delay_differs``).
    broadcast_delay_seconds: int | None = None

    def expected_delay(self) -> tuple[bool, int | None]:
        """Whether the joiner named the delay it agrees to, and which (None: none)."""
        return "broadcast_delay_seconds" in self.model_fields_set, self.broadcast_delay_seconds


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
    # both seats are now taken in a game of Random Setup, which the service draws then
    # (Services.start_random_setup): only then does the join load the room
    draws_setup: bool = False


# A room's seats as written: seat -> its generation, name:<seat> -> a display name.
Seats = dict[str, str | int]


def seat_accounts(seats: Mapping[str, str]) -> dict[str, int]:
    """The account id of each seat a signed-in player holds (a Challenge creator's goes to
    the side the opponent left)."""
    host = seats.get("host_side", "")
    found = {}
    for s in SEATS:
        held = seats.get(f"account:{s}") or (seats.get("account:host") if host == s else None)
        if held:
            found[s] = int(held)
    return found


def seat_names(seats: Mapping[str, str]) -> dict[str, str | None]:
    """Each seat's display name; a Challenge creator's is kept as the host's until seated."""
    host = seats.get("host_side", "")
    return {
        s: seats.get(f"name:{s}") or (seats.get("name:host") if host == s else None) for s in SEATS
    }


class Lobby:
    def __init__(self, backend: Backend, secret: bytes, seed_source: Callable[[], int]) -> None:
        self.store = backend.events
        self.index = backend.rooms
        self.seats = backend.seats
        self.accounts = backend.accounts
        self.secret = secret
        self.seed_source = seed_source
        self._moved: dict[str, int] = {}  # rooms whose last command's time is not written yet

    def _token(self, room: str, seat: str, generation: int) -> str:
        return tokens.sign(self.secret, SeatClaim(room, seat, generation))

    async def create(
        self,
        request: CreateRoom,
        name: str | None = None,
        computer: Mapping[str, str] | None = None,
        account: Account | None = None,
    ) -> Seated:
        """Create the room, append GameCreated with a secret token seed, seat the creator
        (``name``: a checked display name; a signed-in creator's seat is bound to its
        ``account``, under the account's name). ``computer``: the seats the computer plays,
        with their levels (computer.py). ``403 sign_in_required`` for a rated room of a
        guest."""
        if request.rated and account is None:
            raise LobbyError(403, "sign_in_required", "Sign in to play a rated game.")
        if request.challenge is not None:
            seat = "host"
        elif request.side in (None, "random"):
            seat = secrets.choice(SEATS)
        else:
            seat = request.side
        if account is not None:
            name = account.name
        seats: Seats = {seat: 1, **({f"name:{seat}": name} if name else {})}
        if account is not None:
            seats[f"account:{seat}"] = account.id
        room, epoch = await self._open(request, seats, "open", computer=computer or {})
        if account is not None:
            await self._note_game(account.id, room, seat)
        return Seated(room, epoch, seat, self._token(room, seat, 1))

    async def _note_game(self, account_id: int, room: str, seat: str) -> None:
        if self.accounts is not None:
            await self.accounts.add_game(account_id, room, seat, time.time_ns() // 1_000_000)

    async def _open(
        self,
        request: CreateRoom,
        seats: Seats,
        status: str,
        room: str | None = None,
        **meta: Any,
    ) -> tuple[str, int]:
        """A new room (``room``, or a fresh id): its meta (``meta`` added), its seats hash, its
        first event GameCreated with a secret token seed (R7), its lobby status."""
        first_events = create(request.options(), token_seed=self.seed_source())
        room = room or secrets.token_urlsafe(9)
        created_ms = time.time_ns() // 1_000_000
        record = {
            "v": 1,
            "challenge": request.challenge is not None,
            "options": request.model_dump(exclude={"side", "name"}),
            "created_ms": created_ms,
        } | meta
        epoch = await self.store.create_room(room, msgpack.packb(record))
        await self.seats.write(room, seats)
        events = [encode(e) for e in first_events]
        await self.store.append(room, 0, events, "sys:create", "", at_ms=created_ms)
        await self.index.set_room_status(room, status, seen=True)  # created just now
        return room, epoch

    async def open_paired(
        self, room: str, request: CreateRoom, players: Mapping[str, Account]
    ) -> None:
        """The room ``room`` of a quick pairing (pairing.py): both seats held for the two
        players' accounts from the start, live at once. ``RoomExists`` if it is made already."""
        seats: Seats = {s: 1 for s in SEATS}
        for seat, account in players.items():
            seats |= {f"name:{seat}": account.name, f"account:{seat}": account.id}
        await self._open(request, seats, "live", room)
        for seat, account in players.items():
            await self._note_game(account.id, room, seat)

    async def rematch(
        self,
        claim: SeatClaim,
        guest_name: Callable[[str], Awaitable[str | None]],
    ) -> Seated:
        """A finished game's rematch (api.md): the same options, the sides swapped, both seats
        held for the two players from the start (nobody else can take them). The first to ask
        creates it; each player gets the token of the side it did not play. A guest's name is
        carried as ``guest_name`` gives it (None: none; accounts.py drops a name an account
        has by now); an account's seat keeps the account's name."""
        await self.check_generation(claim)
        if claim.seat not in SEATS:
            raise LobbyError(409, "no_seat", "A host token holds no seat yet.")
        if await self.index.room_status(claim.room) != "finished":
            raise LobbyError(409, "not_finished", "A rematch is offered once the game is over.")
        seat = Faction(claim.seat).enemy.value
        fresh = secrets.token_urlsafe(9)
        room = await self.seats.set_once(claim.room, "rematch", fresh)
        if room == fresh:
            held = await self.seats.fields(claim.room)
            names, accounts = seat_names(held), seat_accounts(held)
            for s, n in names.items():
                if n and s not in accounts:
                    names[s] = await guest_name(n)
            seats: Seats = {s: 1 for s in SEATS}
            seats |= {f"name:{Faction(s).enemy.value}": n for s, n in names.items() if n}
            seats |= {f"account:{Faction(s).enemy.value}": a for s, a in accounts.items()}
            request = CreateRoom(**(await self.meta(claim.room))["options"])
            # not a Challenge any more: both sides are given (the Honor adjustment stays)
            await self._open(request, seats, "live", fresh, challenge=False, rematch_of=claim.room)
            for s, account_id in accounts.items():
                await self._note_game(account_id, fresh, Faction(s).enemy.value)
        if room is None:  # the room was deleted meanwhile
            raise LobbyError(404, "room_not_found", "There is no such room.")
        if not await self.store.room_exists(room):
            raise LobbyError(409, "rematch_pending", "The rematch is being set up: ask again.")
        return Seated(room, await self.store.epoch(room), seat, self._token(room, seat, 1), True)

    async def meta(self, room: str) -> dict[str, Any]:
        meta: dict[str, Any] = msgpack.unpackb(await self.store.room_meta(room))
        return meta

    async def join(
        self,
        room: str,
        side: str | None,
        name: str | None = None,
        account: Account | None = None,
        delay: tuple[bool, int | None] = (False, None),
    ) -> Seated:
        """Take a seat (``side`` None: any free one; a Challenge needs a side) under ``name``
        (a checked display name), if any; a signed-in player's seat is bound to its
        ``account``, under its name. ``403 sign_in_required`` for a guest in a rated room,
        ``409 already_seated`` for the player of its other seat. ``delay``: whether the joiner
        named the broadcast delay it agrees to, and which; ``409 broadcast_delay_differs``
        (nothing joined) when the room's is another."""
        meta = await self._meta_or_404(room)
        if meta["options"].get("rated"):
            if account is None:
                raise LobbyError(403, "sign_in_required", "Sign in to play a rated game.")
            if account.id in seat_accounts(await self.seats.fields(room)).values():
                sentence = "You hold the other seat: a rated game is against someone else."
                raise LobbyError(409, "already_seated", sentence)
        named, agreed = delay
        if named and meta["options"].get("broadcast_delay_seconds") != agreed:
            sentence = "This room's broadcast delay is not the one you agreed to: look again."
            raise LobbyError(409, "broadcast_delay_differs", sentence)
        if account is not None:
            name = account.name
        joined = await self.seats.join(room, side, bool(meta["challenge"]), name or "")
        if joined.outcome == "no_room":
            raise LobbyError(404, "room_not_found", "There is no such room.")
        if joined.outcome == "side_required":
            raise LobbyError(422, "side_required", "In a Challenge, the joiner picks the side.")
        if joined.outcome == "taken":
            raise LobbyError(409, "seat_taken", "That seat is taken.")
        seat, full = joined.side, joined.full
        if account is not None:
            await self.seats.write(room, {f"account:{seat}": account.id})
            await self._note_game(account.id, room, seat)
        if full:  # the join found the room
            await self.index.set_room_status(room, "live", seen=True)
        draws = full and bool(meta["options"].get("random_setup"))
        token = self._token(room, seat, 1)
        return Seated(room, joined.epoch, seat, token, full, draws_setup=draws)

    async def host_seat(self, claim: SeatClaim) -> Seated:
        """A Challenge creator's seat, once the opponent has picked the other one."""
        await self.check_generation(claim)
        seat = await self.seats.field(claim.room, "host_side")
        if seat is None:
            raise LobbyError(409, "no_opponent_yet", "The opponent has not picked a side yet.")
        generation = await self.generation(claim.room, seat)
        token = self._token(claim.room, seat, generation or 1)
        return Seated(claim.room, await self.store.epoch(claim.room), seat, token, True)

    def moved(self, room: str) -> None:
        """Note when the room's last command was applied (server clock, ms); ``flush_moved``
        writes it, about a second later. "Your games" shows minutes to days since the last
        move, and a store write per command on the command path cost 8 % of the service's CPU
        (docs/performance.md)."""
        self._moved[room] = time.time_ns() // 1_000_000

    @property
    def moves_unwritten(self) -> int:
        """How many rooms' times ``moved`` noted wait for ``flush_moved``."""
        return len(self._moved)

    async def flush_moved(self) -> None:
        """Write the times ``moved`` noted, all at once."""
        if not self._moved:
            return
        moved, self._moved = self._moved, {}
        await self.seats.note_moved(moved)

    async def generation(self, room: str, seat: str) -> int | None:
        value = await self.seats.field(room, seat)
        return None if value is None else int(value)

    async def check_generation(self, claim: SeatClaim) -> None:
        if await self.generation(claim.room, claim.seat) != claim.generation:
            raise LobbyError(401, "token_revoked", "This seat token was revoked.")

    async def reissue(self, room: str, seat: str) -> Seated:
        """A token of ``seat`` at its current generation (its owner's, signed in on another
        device: every token held elsewhere stays valid)."""
        generation = await self.generation(room, seat)
        if generation is None:
            raise LobbyError(404, "room_not_found", "There is no such room.")
        token = self._token(room, seat, generation)
        return Seated(room, await self.store.epoch(room), seat, token, generation=generation)

    async def revoke(self, claim: SeatClaim) -> Seated:
        """Invalidate every token of the seat and hand out the one new token."""
        await self.check_generation(claim)
        generation = await self.seats.bump(claim.room, claim.seat)
        token = self._token(claim.room, claim.seat, generation)
        epoch = await self.store.epoch(claim.room)
        return Seated(claim.room, epoch, claim.seat, token, generation=generation)

    async def seats_full(self, room: str) -> bool:
        seats = await self.seats.fields(room)
        return all(s in seats for s in SEATS)

    async def _meta_or_404(self, room: str) -> dict[str, Any]:
        if tokens.is_room_id(room):
            with contextlib.suppress(RoomNotFound):  # (one read: the meta, or none)
                return await self.meta(room)
        raise LobbyError(404, "room_not_found", "There is no such room.")

    async def summaries(
        self, rooms: list[str], status: str | None, watching: Mapping[str, int] | None = None
    ) -> list[dict[str, Any]]:
        """What the lobby shows of each room, with how many watch it (``watching``: room ->
        sockets, summed over the processes: watchers.py); rooms deleted meanwhile are left
        out."""
        watching = watching or {}
        found = []
        for room, record in zip(rooms, await self.seats.records(rooms), strict=True):
            if record is None:
                continue
            meta, seats = msgpack.unpackb(record.meta), record.seats
            accounts = seat_accounts(seats)
            found.append(
                {
                    "room": room,
                    "status": status,
                    "challenge": meta["challenge"],
                    "options": meta["options"],
                    "seats": {s: s in seats for s in SEATS},
                    "names": seat_names(seats),
                    "players": {s: s in accounts for s in SEATS},
                    "rematch": seats.get("rematch"),
                    "created_ms": meta["created_ms"],
                    "moved_ms": int(seats.get("moved_ms", meta["created_ms"])),
                    "computer": meta.get("computer", {}),
                    "hints": [s for s in SEATS if seats.get(f"hints:{s}")],
                    "spectators": watching.get(room, 0),
                }
            )
        return found

    async def players_rating(self, rooms: list[str]) -> dict[str, float]:
        """The mean rating of the two players of each rated room of ``rooms`` whose seats are
        both held by accounts (none without accounts)."""
        if self.accounts is None:
            return {}
        found = {}
        for room, record in zip(rooms, await self.seats.records(rooms), strict=True):
            if record is None or not msgpack.unpackb(record.meta)["options"].get("rated"):
                continue
            held = seat_accounts(record.seats)
            ratings = []
            for account_id in held.values():
                account = await self.accounts.get(account_id)
                if account is not None:
                    ratings.append(account.standing.rating)
            if len(ratings) == len(SEATS):
                found[room] = sum(ratings) / len(ratings)
        return found

    async def summary(self, room: str, watching: Mapping[str, int] | None = None) -> dict[str, Any]:
        found = []
        if tokens.is_room_id(room):
            found = await self.summaries([room], await self.index.room_status(room), watching)
        if not found:
            raise LobbyError(404, "room_not_found", "There is no such room.")
        return found[0]
