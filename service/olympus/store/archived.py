"""What the archive keeps of a finished game, and how its log is packed: the values the
archive's backends (postgres_archive.py, memory_archive.py) and their callers share.

A game's log is kept as one value, not a row per event: a game is only ever read whole (a
replay, a late spectator's history, the log of ``GET /rooms/{room}/log``), so one row is one
read, and the events, packed together (msgpack) and compressed together (zstd), share what
they repeat: about 250 events, 22 KB packed, become 2.7 KB (docs/performance.md).
The chains are not kept: each is ``chain_next`` of the one before and the event's bytes, so
the head is checked, and every chain given back, from the events themselves.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgpack
import zstandard

from .records import EventStoreError, StoredEvent, chain_next

# zstd level: 6 packs a game's log 12 % smaller than 3 for 0.15 ms a game; 9 saves 1 % more
# for twice that (docs/performance.md, "The archive").
_LEVEL = 6


def pack_log(events: list[bytes]) -> bytes:
    """The events, event 1 first, as one compressed value."""
    return zstandard.ZstdCompressor(level=_LEVEL).compress(msgpack.packb(events))


def unpack_log(packed: bytes) -> list[bytes]:
    """``pack_log``'s events. Raises ``ArchiveCorrupt`` for bytes it did not make."""
    try:
        events = msgpack.unpackb(zstandard.ZstdDecompressor().decompress(packed))
    except (zstandard.ZstdError, ValueError) as error:
        raise ArchiveCorrupt(str(error)) from error
    if not isinstance(events, list) or not all(isinstance(e, bytes) for e in events):
        raise ArchiveCorrupt("the archived log is not a list of events")
    return events


def chain_head(events: list[bytes]) -> str:
    """The chain after the last event ("" for none): what names the history."""
    chain = ""
    for data in events:
        chain = chain_next(chain, data)
    return chain


def stored_events(events: list[bytes]) -> list[StoredEvent]:
    """The events as the log reads them: numbered from 1, each with its chain."""
    stored, chain = [], ""
    for version, data in enumerate(events, 1):
        chain = chain_next(chain, data)
        stored.append(StoredEvent(version, data, chain))
    return stored


@dataclass(frozen=True, slots=True)
class GameSummary:
    """What the game row says of a game, for listing and for profiles (the server derives it
    from the log; the archive only stores and sorts it): ``options`` and ``result`` as the
    rules name them (``result`` "olympians", "chthonians", "draw", "aborted" or None),
    ``reason`` how it ended, ``players`` seat -> name ("" for none), times in ms since the
    epoch."""

    options: dict[str, Any]
    players: dict[str, str]
    result: str | None
    reason: str
    started_ms: int
    ended_ms: int


@dataclass(frozen=True, slots=True)
class ArchivedGame:
    """A finished room as the archive keeps it: everything its reads answer, as it was in the
    live store (``epoch``, ``meta`` and ``seats`` as they were; ``events`` the whole log)."""

    room_id: str
    epoch: int
    meta: bytes
    seats: dict[str, str]
    events: list[bytes]
    summary: GameSummary
    head: str = field(default="", compare=False)  # ``chain_head(events)``, filled in

    def __post_init__(self) -> None:
        if not self.head:
            object.__setattr__(self, "head", chain_head(self.events))


@dataclass(frozen=True, slots=True)
class ArchivedHead:
    """What the archive holds of a room, read back: how many events and the chain's head."""

    event_count: int
    head: str


@dataclass(frozen=True, slots=True)
class PlayerGame:
    """One game of a player, for a profile's list (newest first): ``seat`` theirs."""

    room_id: str
    seat: str
    summary: GameSummary


class ArchiveCorrupt(EventStoreError):
    """An archived log could not be unpacked."""


class ArchiveConflict(EventStoreError):
    """The archive holds another game under this room id (another history): nothing was
    written, and the live copy must stay."""

    def __init__(self, room_id: str, held: ArchivedHead, offered: ArchivedHead) -> None:
        super().__init__(
            f"room {room_id!r}: the archive holds {held.event_count} events up to "
            f"{held.head[:12]}, not {offered.event_count} up to {offered.head[:12]}"
        )
        self.room_id = room_id
