"""What the store keeps and answers, and the errors it raises: the values every backend of the
ports (ports.py) shares, free of any storage.

A room's log is a list of opaque ``bytes`` events numbered from 1 (the room's *version* is the
number of events ever appended); each event may carry the room's *chain* up to it
(``chain_next``), so that two histories of the same length can be told apart.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import NamedTuple

# Braces would break a Redis key's hash tag, and the lobby index uses NUL as a separator.
_ROOM_ID = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
_STATUS = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_DIGEST = re.compile(r"[0-9a-f]{1,64}")


def check_room_id(room_id: str) -> None:
    """``ValueError`` unless ``room_id`` is a room id: ``[A-Za-z0-9_.:-]{1,128}``."""
    if not _ROOM_ID.fullmatch(room_id):
        raise ValueError(f"invalid room id {room_id!r} (allowed: [A-Za-z0-9_.:-]{{1,128}})")


def check_status(status: str) -> None:
    """``ValueError`` unless ``status`` is a lobby status: ``[A-Za-z0-9_.-]{1,64}``."""
    if not _STATUS.fullmatch(status):
        raise ValueError(f"invalid status {status!r}")


def check_append(
    expected_version: int,
    events: list[bytes],
    command_id: str | None,
    chain: str | None,
    digest: str | None,
    at_ms: int | None = None,
) -> None:
    """``ValueError`` or ``TypeError`` for arguments no backend's ``append`` takes
    (ports.py, ``EventLog.append``)."""
    if at_ms is not None and (isinstance(at_ms, bool) or not 0 < at_ms < 2**63):
        raise ValueError("at_ms is a positive time in ms since the epoch (or None)")
    if not events:
        raise ValueError("append needs at least one event")
    if expected_version < 0:
        raise ValueError("expected_version must be >= 0")
    if command_id == "":
        raise ValueError("command_id must be non-empty (or None)")
    if chain == "" and expected_version > 0:
        raise ValueError('the chain is "" only before the first event (None: unchecked)')
    if not all(isinstance(e, bytes) for e in events):
        raise TypeError("events must be bytes")
    if digest is not None and not _DIGEST.fullmatch(digest):
        raise ValueError("a digest is 1-64 hexadecimal digits (command_digest)")


def check_read(after_version: int, count: int | None) -> None:
    """``ValueError`` for a read no backend takes (``EventLog.read``)."""
    if after_version < 0:
        raise ValueError("after_version must be >= 0")
    if count is not None and count < 1:
        raise ValueError("count must be >= 1 (or None for all)")


class EventStoreError(Exception):
    """Base class of every error the store raises to its callers (server/, bot/): they see
    this tree only, never a storage library's own exceptions."""


class StoreUnavailable(EventStoreError):
    """The storage did not answer (a lost connection, a failover under way, a timeout): the
    operation may or may not have taken effect. Ask again; an append names its command id so
    that asking again is safe."""


class RoomNotFound(EventStoreError):
    def __init__(self, room_id: str) -> None:
        super().__init__(f"room {room_id!r} does not exist")
        self.room_id = room_id


class RoomArchived(EventStoreError):
    """The room's game is in the archive: it is read as it was, and changes no more."""

    def __init__(self, room_id: str) -> None:
        super().__init__(f"room {room_id!r} is archived: read only")
        self.room_id = room_id


class RoomExists(EventStoreError):
    def __init__(self, room_id: str) -> None:
        super().__init__(f"room {room_id!r} already exists")
        self.room_id = room_id


class VersionConflict(EventStoreError):
    """Someone else appended first: reload (``read(room, expected)``), re-decide, retry."""

    def __init__(self, room_id: str, expected: int, actual: int) -> None:
        super().__init__(f"room {room_id!r}: expected version {expected}, actual {actual}")
        self.room_id = room_id
        self.expected = expected
        self.actual = actual


class IdReused(EventStoreError):
    """The command id was applied already, to another command (their digests differ):
    nothing was written. A client that restarted its id counter would otherwise see its new
    command acknowledged as the old one, and lose it."""

    def __init__(self, room_id: str, command_id: str) -> None:
        super().__init__(f"room {room_id!r}: command id {command_id!r} was used for another")
        self.room_id = room_id
        self.command_id = command_id


class LogDiverged(EventStoreError):
    """The room is at the expected version, but its history is not the one the caller folded
    (the chains differ): Redis lost writes and others appended since. Rebuild from the log;
    never append."""

    def __init__(self, room_id: str, version: int) -> None:
        super().__init__(f"room {room_id!r}: event {version} is not the one expected")
        self.room_id = room_id
        self.version = version


def chain_next(chain: str, data: bytes) -> str:
    """The room's chain after an event: SHA-1 (hex) of the chain before it and its data, ""
    before the first event. Equal chains at a version mean equal histories up to it, so a
    writer or reader that names its chain cannot continue a log that forked from its own."""
    return hashlib.sha1(chain.encode() + data, usedforsecurity=False).hexdigest()


class EventsTrimmed(EventStoreError):
    """The requested events were trimmed away; start from the snapshot (``load``) instead."""

    def __init__(self, room_id: str, after_version: int, first_available: int | None) -> None:
        super().__init__(
            f"room {room_id!r}: events after {after_version} were trimmed "
            f"(first available: {first_available})"
        )
        self.room_id = room_id
        self.after_version = after_version
        self.first_available = first_available


class SnapshotAhead(EventStoreError):
    """A snapshot claims a version the stream has not reached: it would describe lost events."""

    def __init__(self, room_id: str, version: int, stream_version: int) -> None:
        super().__init__(
            f"room {room_id!r}: snapshot version {version} > stream version {stream_version}"
        )
        self.room_id = room_id
        self.version = version
        self.stream_version = stream_version


class TrimBeyondSnapshot(EventStoreError):
    """Trimming past the latest snapshot would make the room unrebuildable."""

    def __init__(self, room_id: str, keep_after_version: int, snapshot_version: int) -> None:
        super().__init__(
            f"room {room_id!r}: cannot trim up to {keep_after_version}, "
            f"latest snapshot is at {snapshot_version}"
        )
        self.room_id = room_id
        self.keep_after_version = keep_after_version
        self.snapshot_version = snapshot_version


class Applied(NamedTuple):
    """A command id's record: the versions of the events it produced, and its command's
    digest ("" if it was applied before digests were kept)."""

    first: int
    last: int
    digest: str


def text(value: bytes | str) -> str:
    """A reply of redis-py as text: bytes from the service's clients (``decode_responses``
    off), which redis-py's types cannot tell from str."""
    return value.decode() if isinstance(value, bytes) else value


def command_digest(canonical: bytes) -> str:
    """The digest recorded with a command id: of the command's canonical encoding (the caller
    chooses it; the same command must always give the same bytes)."""
    return hashlib.blake2b(canonical, digest_size=16).hexdigest()


@dataclass(frozen=True, slots=True)
class AppendResult:
    """``version``: room version after the append (= version of its last event).

    ``first_version``: version of its first event. ``duplicate``: the command id had already
    been applied, nothing was written, and the versions are those of the original append.
    ``chains``: each new event's chain (``chain_next``), when the append was given one and
    wrote them: the caller that folds them need not hash them again.
    """

    version: int
    first_version: int
    duplicate: bool
    chains: tuple[str, ...] = ()

    def __init__(
        self, version: int, first_version: int, duplicate: bool, chains: tuple[str, ...] = ()
    ) -> None:
        """Spelled out, as ``GameState.__init__`` is and for its reason: one is made per
        command."""
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "first_version", first_version)
        object.__setattr__(self, "duplicate", duplicate)
        object.__setattr__(self, "chains", chains)


class StoredEvent(NamedTuple):
    version: int
    data: bytes
    chain: str = ""  # ``chain_next`` up to this event, as its writer gave it ("": not given)
    at_ms: int = 0  # when its writer applied it (ms since the epoch; 0: not given)


class Snapshot(NamedTuple):
    version: int
    data: bytes


@dataclass(frozen=True, slots=True)
class RoomLoad:
    """A consistent view of a room: state = fold(snapshot, events); ``version`` = last event."""

    snapshot: Snapshot | None
    events: list[StoredEvent]
    version: int
    epoch: int
