"""Rooms against the computer: the service's side of the bots.

A room against the computer is a normal room: the lobby creates it and seats the person, then
takes the other seat for the computer with an ordinary seat token. That token, the level and
a seed go into a *bot seat* record in the store (store/ports.py, ``BotSeats``: one per room and
seat, in buckets by the room); the bots worker (``olympus bots``,
``olympus.bots_worker``) plays every recorded seat over the websocket like any client and
deletes the record once the game is over. "Watch the computer play itself" is the same with
both seats recorded. The service never runs a search: the records are all it writes.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Literal

from olympus.rules import Faction
from olympus.store import Account

from .lobby import CreateRoom, LobbyError, Seated

if TYPE_CHECKING:
    from .services import Services

LevelName = Literal["easy", "normal", "hard"]


@dataclass(frozen=True, slots=True)
class BotSeat:
    """What the worker needs to play a seat: its token, and the level and seed it plays at."""

    room: str
    epoch: str
    seat: str
    level: str
    token: str
    seed: int

    @property
    def field(self) -> str:
        return f"{self.room}:{self.seat}"

    def encode(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def decode(raw: str | bytes) -> BotSeat:
        return BotSeat(**json.loads(raw))


class CreateComputerRoom(CreateRoom):
    """The body of ``POST /rooms/computer``: a room's options (no Challenge) and a level."""

    level: LevelName = "normal"


class CreateWatchRoom(CreateRoom):
    """The body of ``POST /rooms/watch``: the computer against itself, a level per side."""

    olympians: LevelName = "normal"
    chthonians: LevelName = "normal"


async def _seat_bot(services: Services, seated: Seated, level: str) -> BotSeat:
    bot = BotSeat(
        seated.room, str(seated.epoch), seated.seat, level, seated.token, secrets.randbits(63)
    )
    await services.backend.bots.put(bot.room, bot.seat, bot.encode())
    return bot


def _room_options(request: CreateRoom, side: str) -> CreateRoom:
    """The plain room request inside a computer room's request, with the creator's seat."""
    fields = request.model_dump(include=set(CreateRoom.model_fields), exclude={"side"})
    return CreateRoom(**fields, side=side)


async def _begin(services: Services, room: str) -> None:
    """Both seats are taken: a Random Setup is drawn now, as after any join."""
    await services.start_random_setup(await services.registry.get(room))


async def against_computer(
    services: Services, request: CreateComputerRoom, account: Account | None = None
) -> Seated:
    """The person's seat in a new room whose other seat the computer plays (bound to the
    person's ``account`` if signed in). Never rated: ``422 bad_request``."""
    if request.challenge is not None:
        raise LobbyError(422, "bad_request", "A Challenge needs two people.")
    if request.rated:
        raise LobbyError(422, "bad_request", "Games against the computer are not rated.")
    side = request.side
    person = secrets.choice(list(Faction)).value if side in (None, "random") else side
    computer = Faction(person).enemy.value
    spec = _room_options(request, person)
    # the person's; the computer's seat shows as the computer
    name = await services.accounts.seat_name(request.name, account)
    seated = await services.lobby.create(
        spec, name, computer={computer: request.level}, account=account
    )
    await _seat_bot(services, await services.lobby.join(seated.room, computer), request.level)
    await _begin(services, seated.room)
    return seated


async def computer_against_itself(services: Services, request: CreateWatchRoom) -> Seated:
    """A new room where the computer plays both seats, for spectators (the lobby lists it)."""
    if request.challenge is not None or request.rated:
        raise LobbyError(422, "bad_request", "The computer against itself: no Challenge, unrated.")
    levels = {"olympians": request.olympians, "chthonians": request.chthonians}
    seated = await services.lobby.create(_room_options(request, "olympians"), computer=levels)
    await _seat_bot(services, seated, request.olympians)
    chthonians = await services.lobby.join(seated.room, "chthonians")
    await _seat_bot(services, chthonians, request.chthonians)
    await _begin(services, seated.room)
    return seated
