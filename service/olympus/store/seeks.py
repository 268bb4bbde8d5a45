"""Quick pairing's pool (ports.py, ``SeekPool``): the values its backends (redis_seeks.py,
memory_seeks.py) and their callers share, and the one rule both apply when they pair.

A seek is a signed-in player waiting for an opponent in one pool (a clock and variants). Each
pass pairs the live seeks of a pool in one atomic step of the store: sorted by rating, each
seek with the next one up when their ratings differ by no more than either seek's range,
which widens with its waiting time (``range_of``). A seek that has not been kept alive (its
page polls) by ``alive_ms`` is dead and dropped. A pair's room id is named by the pair itself
(``room_of``), so that any process may make the room, and making it twice makes it once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

# The rating difference a seek accepts: ``BASE_RANGE`` at once, ``WIDENING`` more per second
# of waiting, at most ``MAX_RANGE`` (docs/api.md, "Quick pairing").
BASE_RANGE = 100
WIDENING = 20
MAX_RANGE = 600


def range_of(waited_ms: int) -> int:
    """The rating difference a seek that waited ``waited_ms`` accepts."""
    return min(MAX_RANGE, BASE_RANGE + WIDENING * max(0, waited_ms) // 1000)


def room_of(first: str, second: str) -> str:
    """The room id of a pair of seeks (the lower rated first): 12 hex digits of their SHA-1,
    as the Redis backend's script computes it."""
    return hashlib.sha1(f"{first}|{second}".encode()).hexdigest()[:12]


def first_side(room: str) -> str:
    """The side of the lower rated seek of the pair of ``room``: drawn by the room's id."""
    return "olympians" if int(room[-1], 16) % 2 == 0 else "chthonians"


@dataclass(frozen=True, slots=True)
class Seek:
    """``account`` seeks in ``pool`` at ``rating`` since ``since_ms``; alive until
    ``alive_ms`` unless kept alive."""

    id: str
    account: int
    pool: str
    rating: float
    since_ms: int
    alive_ms: int


@dataclass(frozen=True, slots=True)
class Match:
    """A paired seek's room and seat, its pool, and both seats' accounts."""

    room: str
    seat: str
    pool: str
    accounts: dict[str, int]
