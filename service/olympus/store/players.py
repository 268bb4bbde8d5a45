"""What the store keeps of players: the values the ``Accounts`` port's backends
(postgres_accounts.py, memory_accounts.py) and their callers share.

An account is a name, a password's hash and a Glicko-2 rating (ratings/glicko2.py, on
Glicko's scale); each rated game leaves one ``RatingChange`` per player, keyed by the room,
so that a game is rated once however often its update is tried.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .records import EventStoreError


@dataclass(frozen=True, slots=True)
class Standing:
    """A rating as kept: ``rating`` ± ``deviation`` (Glicko's scale), its ``volatility``."""

    rating: float
    deviation: float
    volatility: float


@dataclass(frozen=True, slots=True)
class Account:
    """A player's account: ``name`` as typed, ``name_key`` as names are compared (unique),
    the password's hash (never leaves the server), the standing and how many rated games
    made it, ``rated_ms`` the latest end among them (None before any)."""

    id: int
    name: str
    name_key: str
    password_hash: str
    created_ms: int
    standing: Standing
    rated_games: int = 0
    rated_ms: int | None = None


@dataclass(frozen=True, slots=True)
class RatedGame:
    """A finished rated game as the ratings read it: each seat's account id and its score
    (1 a win, 0.5 a draw, 0 a loss), ``result`` as the rules name it, ``at_ms`` its end."""

    room_id: str
    accounts: Mapping[str, int]
    scores: Mapping[str, float]
    result: str
    at_ms: int


@dataclass(frozen=True, slots=True)
class RatingChange:
    """One player's change of one rated game."""

    room_id: str
    account_id: int
    seat: str
    score: float
    before: Standing
    after: Standing
    rated_ms: int


# Given each seat's account as it stands before a game (seat -> account: its standing and when
# it was last rated), each seat's standing after it.
Rating = Callable[[Mapping[str, Account]], Mapping[str, Standing]]


class NameTaken(EventStoreError):
    """Another account has this name (compared as names are: case-folded)."""
