"""The memory backend: every port of ports.py kept in plain dicts and lists of this process.

Single-process and not durable: what it holds is gone with the process. It is for tests and
``olympus serve --store memory``. Its contract is the Redis backend's, Lua scripts included
(event_store.py, and the lobby's join): the same checks in the same order, the same errors for
the same arguments; tests/store runs one suite on both.

Every operation runs synchronously, whole, under the backend's one ``threading.Lock``: several
event loops, each in a thread of its own (the servers of one test), may share a backend as
processes share one Redis (``MemoryBackend.shared``). The methods are ``async def`` as the
ports are, and never yield to the loop.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .memory_hints import HintHub, MemoryHints
from .memory_players import MemoryPlayers
from .memory_seeks import MemorySeeks
from .ports import (
    BOT_BUCKETS,
    Accounts,
    Analyses,
    Archive,
    BotSeats,
    ControlHandler,
    DeadlineIndex,
    EventLog,
    HintHandler,
    Hints,
    Join,
    Players,
    RoomIndex,
    RoomRecord,
    RoomSeats,
    SeekPool,
    SharedKeys,
    StoreConfig,
    WatcherCounts,
    bot_hash,
)
from .records import (
    AppendResult,
    Applied,
    EventsTrimmed,
    IdReused,
    LogDiverged,
    RoomExists,
    RoomLoad,
    RoomNotFound,
    Snapshot,
    SnapshotAhead,
    StoredEvent,
    TrimBeyondSnapshot,
    VersionConflict,
    chain_next,
    check_append,
    check_read,
    check_room_id,
    check_status,
)
from .watchers import MemoryWatcherCounts

_SEATS = ("olympians", "chthonians")


@dataclass
class _Room:
    """One incarnation of a room: its log (the events not trimmed, contiguous, and the version
    of the last ever appended), its command ids' records and its snapshot."""

    epoch: int
    meta: bytes
    version: int = 0
    events: list[StoredEvent] = field(default_factory=list)
    commands: dict[str, Applied] = field(default_factory=dict)
    snapshot: Snapshot | None = None

    def after(self, room_id: str, start: int, count: int | None) -> list[StoredEvent]:
        """The events after ``start``, at most ``count``; ``EventsTrimmed`` if the first of
        them is gone (as ``EventStore._run_read`` tells)."""
        first = self.events[0].version if self.events else self.version + 1
        begin = max(start + 1 - first, 0)
        found = self.events[begin:] if count is None else self.events[begin : begin + count]
        if start < self.version and (not found or found[0].version != start + 1):
            raise EventsTrimmed(room_id, start, found[0].version if found else None)
        return found


class _Storage:
    """Everything one backend holds, and the lock every operation holds while it runs."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rooms: dict[str, _Room] = {}
        self.statuses: dict[str, str] = {}
        self.seats: dict[str, dict[str, str]] = {}
        self.deadlines: dict[str, int] = {}
        self.archive_due: dict[str, int] = {}
        self.rating_due: dict[str, int] = {}
        self.bots: dict[int, dict[str, str]] = {}
        self.analyses: dict[str, bytes] = {}
        self.secret: str | None = None
        self.hub = HintHub(self.lock)

    def room(self, room_id: str) -> _Room:
        """The room (``RoomNotFound``); the caller holds the lock and checked the id."""
        room = self.rooms.get(room_id)
        if room is None:
            raise RoomNotFound(room_id)
        return room


class _Port:
    """A port over the backend's storage."""

    def __init__(self, storage: _Storage) -> None:
        self._storage = storage

    def _locked(self, room_id: str) -> threading.Lock:
        """The storage's lock, once ``room_id`` is checked (``ValueError``)."""
        check_room_id(room_id)
        return self._storage.lock


class MemoryEventLog(_Port, EventLog):
    """``EventLog`` in memory: ``append`` checks as ``LUA_APPEND`` (log_scripts.py) does, in
    its order."""

    async def create_room(self, room_id: str, meta: bytes) -> int:
        with self._locked(room_id):
            if room_id in self._storage.rooms:
                raise RoomExists(room_id)
            epoch = secrets.randbelow(2**63 - 1) + 1
            self._storage.rooms[room_id] = _Room(epoch, bytes(meta))
            return epoch

    async def epoch(self, room_id: str) -> int:
        with self._locked(room_id):
            return self._storage.room(room_id).epoch

    async def room_meta(self, room_id: str) -> bytes:
        with self._locked(room_id):
            return self._storage.room(room_id).meta

    async def room_exists(self, room_id: str) -> bool:
        with self._locked(room_id):
            return room_id in self._storage.rooms

    async def delete_room(self, room_id: str) -> bool:
        with self._locked(room_id):
            self._storage.statuses.pop(room_id, None)
            self._storage.seats.pop(room_id, None)
            self._storage.analyses.pop(room_id, None)
            return self._storage.rooms.pop(room_id, None) is not None

    async def append(
        self,
        room_id: str,
        expected_version: int,
        events: list[bytes],
        command_id: str | None = None,
        chain: str | None = None,
        digest: str | None = None,
        at_ms: int | None = None,
    ) -> AppendResult:
        check_append(expected_version, events, command_id, chain, digest, at_ms)
        with self._locked(room_id):
            room = self._storage.room(room_id)
            seen = room.commands.get(command_id) if command_id is not None else None
            if seen is not None:
                if seen.digest and digest and seen.digest != digest:
                    raise IdReused(room_id, command_id or "")
                return AppendResult(seen.last, seen.first, duplicate=True)
            current = room.version
            if current != expected_version:
                raise VersionConflict(room_id, expected_version, current)
            # The chain the last entry records: none once trimmed away, or written without one.
            recorded = room.events[-1].chain if room.events else ""
            if chain and recorded and recorded != chain:
                raise LogDiverged(room_id, current)
            chains: list[str] = []
            running = chain
            for data in events:
                if running is not None:
                    running = chain_next(running, data)
                    chains.append(running)
                room.version += 1
                room.events.append(StoredEvent(room.version, data, running or "", at_ms or 0))
            if command_id is not None:
                room.commands[command_id] = Applied(current + 1, room.version, digest or "")
            self._storage.hub.publish(room_id, room.version)
            return AppendResult(room.version, current + 1, duplicate=False, chains=tuple(chains))

    async def applied(self, room_id: str, command_id: str) -> Applied | None:
        with self._locked(room_id):
            room = self._storage.rooms.get(room_id)
            return None if room is None else room.commands.get(command_id)

    async def confirm(self, room_id: str, command_id: str, seen: Applied) -> Applied | None:
        """``seen`` while the room's record of ``command_id`` is ``seen`` (memory has no
        replicas to wait for); else None."""
        return seen if await self.applied(room_id, command_id) == seen else None

    async def read(
        self, room_id: str, after_version: int = 0, count: int | None = None
    ) -> list[StoredEvent]:
        check_read(after_version, count)
        with self._locked(room_id):
            return self._storage.room(room_id).after(room_id, after_version, count)

    async def version(self, room_id: str) -> int:
        with self._locked(room_id):
            return self._storage.room(room_id).version

    async def load(self, room_id: str) -> RoomLoad:
        with self._locked(room_id):
            room = self._storage.room(room_id)
            start = room.snapshot.version if room.snapshot else 0
            events = room.after(room_id, start, None)
            return RoomLoad(room.snapshot, events, room.version, room.epoch)

    async def save_snapshot(self, room_id: str, version: int, data: bytes) -> bool:
        if version < 1:
            raise ValueError("snapshot version must be >= 1")
        with self._locked(room_id):
            room = self._storage.room(room_id)
            if version > room.version:
                raise SnapshotAhead(room_id, version, room.version)
            if room.snapshot is not None and room.snapshot.version >= version:
                return False
            room.snapshot = Snapshot(version, bytes(data))
            return True

    async def drop_snapshot_if_ahead(self, room_id: str) -> bool:
        with self._locked(room_id):
            room = self._storage.rooms.get(room_id)
            if room is None or room.snapshot is None or room.snapshot.version <= room.version:
                return False
            room.snapshot = None
            return True

    async def load_snapshot(self, room_id: str) -> Snapshot | None:
        with self._locked(room_id):
            room = self._storage.rooms.get(room_id)
            return None if room is None else room.snapshot

    async def trim(self, room_id: str, keep_after_version: int) -> int:
        if keep_after_version < 0:
            raise ValueError("keep_after_version must be >= 0")
        with self._locked(room_id):
            room = self._storage.room(room_id)
            kept = room.snapshot.version if room.snapshot else 0
            if keep_after_version > kept:
                raise TrimBeyondSnapshot(room_id, keep_after_version, kept)
            before = len(room.events)
            room.events = [e for e in room.events if e.version > keep_after_version]
            return before - len(room.events)

    async def aclose(self) -> None:
        """Nothing to let go of."""


class MemoryRoomIndex(_Port, RoomIndex):
    async def set_room_status(self, room_id: str, status: str, seen: bool = False) -> str | None:
        check_status(status)
        with self._locked(room_id):
            if not seen and room_id not in self._storage.rooms:
                raise RoomNotFound(room_id)
            before = self._storage.statuses.get(room_id)
            self._storage.statuses[room_id] = status
            return before

    async def room_status(self, room_id: str) -> str | None:
        with self._locked(room_id):
            return self._storage.statuses.get(room_id)

    async def rooms_by_status(
        self, status: str, *, offset: int = 0, limit: int | None = None
    ) -> list[str]:
        """As ZRANGEBYLEX's LIMIT: a negative ``offset`` gives none, a negative ``limit``
        all the rest."""
        check_status(status)
        with self._storage.lock:
            found = sorted(r for r, s in self._storage.statuses.items() if s == status)
        if offset < 0:
            return []
        end = None if limit is None or limit < 0 else offset + limit
        return found[offset:end]

    async def count_by_status(self, status: str) -> int:
        check_status(status)
        with self._storage.lock:
            return sum(s == status for s in self._storage.statuses.values())

    async def list_rooms(self) -> dict[str, str]:
        with self._storage.lock:
            return dict(self._storage.statuses)


class MemoryRoomSeats(_Port, RoomSeats):
    """``RoomSeats`` in memory: a room's fields live apart from its log, as the seats hash
    lives beside the store's keys (``delete_room`` leaves them); ``join`` does what
    redis_seats.py's script does."""

    def _fields(self, room_id: str) -> dict[str, str]:
        """The room's fields, made empty if missing; the caller holds the lock."""
        return self._storage.seats.setdefault(room_id, {})

    async def write(self, room_id: str, fields: Mapping[str, str | int]) -> None:
        with self._locked(room_id):
            self._fields(room_id).update({k: str(v) for k, v in fields.items()})

    async def join(self, room_id: str, side: str | None, challenge: bool, name: str) -> Join:
        with self._locked(room_id):
            room = self._storage.rooms.get(room_id)
            if room is None:
                return Join("no_room", "", False, 0)
            seats = self._fields(room_id)
            if challenge:
                if "host_side" in seats:
                    return Join("taken", "", True, 0)
                if side is None:
                    return Join("side_required", "", False, 0)
                other = _SEATS[1] if side == _SEATS[0] else _SEATS[0]
                seats.update({side: "1", other: "1", "host_side": other})
            else:
                if side is None:
                    side = next((s for s in _SEATS if s not in seats), None)
                    if side is None:
                        return Join("taken", "", True, 0)
                elif side in seats:
                    return Join("taken", "", False, 0)
                seats[side] = "1"
            if name:
                seats[f"name:{side}"] = name
            return Join("joined", side, all(s in seats for s in _SEATS), room.epoch)

    async def fields(self, room_id: str) -> dict[str, str]:
        with self._locked(room_id):
            return dict(self._storage.seats.get(room_id, {}))

    async def field(self, room_id: str, name: str) -> str | None:
        with self._locked(room_id):
            return self._storage.seats.get(room_id, {}).get(name)

    async def set_once(self, room_id: str, name: str, value: str) -> str | None:
        with self._locked(room_id):
            seats = self._storage.seats.get(room_id)
            return None if seats is None else seats.setdefault(name, value)

    async def bump(self, room_id: str, name: str) -> int:
        """``ValueError`` if ``name`` holds no integer (nothing changes)."""
        with self._locked(room_id):
            seats = self._storage.seats.get(room_id)
            if seats is None:
                raise RoomNotFound(room_id)
            total = int(seats.get(name, "0")) + 1
            seats[name] = str(total)
            return total

    async def note_moved(self, times: Mapping[str, int]) -> None:
        for room_id in times:
            check_room_id(room_id)
        with self._storage.lock:
            for room_id, ms in times.items():
                if room_id in self._storage.seats:  # not for seats deleted meanwhile
                    self._storage.seats[room_id]["moved_ms"] = str(ms)

    async def records(self, room_ids: Sequence[str]) -> list[RoomRecord | None]:
        for room_id in room_ids:
            check_room_id(room_id)
        with self._storage.lock:
            rooms, seats = self._storage.rooms, self._storage.seats
            return [
                RoomRecord(rooms[r].meta, dict(seats.get(r, {}))) if r in rooms else None
                for r in room_ids
            ]


class MemoryDeadlineIndex(_Port, DeadlineIndex):
    """A room -> due index: the clocks' (``deadlines``), the archive's (``archive_due``) or
    the ratings' (``rating_due``)."""

    def __init__(self, storage: _Storage, index: dict[str, int]) -> None:
        super().__init__(storage)
        self._index = index

    async def set_due(self, room_id: str, due_ms: int | None) -> None:
        with self._storage.lock:
            if due_ms is None:
                self._index.pop(room_id, None)
            else:
                self._index[room_id] = due_ms

    async def overdue(self, until_ms: int, limit: int = 100) -> list[str]:
        """The earliest first (one part: at most ``limit`` in all; a negative one, as
        ZRANGEBYSCORE's LIMIT, all)."""
        with self._storage.lock:
            due = [(ms, r) for r, ms in self._index.items() if ms <= until_ms]
        due.sort()
        return [room_id for _, room_id in (due if limit < 0 else due[:limit])]


class MemoryBotSeats(_Port, BotSeats):
    def _bucket(self, room_id: str) -> dict[str, str]:
        return self._storage.bots.setdefault(bot_hash(room_id) % BOT_BUCKETS, {})

    async def put(self, room_id: str, seat: str, record: str) -> None:
        with self._storage.lock:
            self._bucket(room_id)[f"{room_id}:{seat}"] = record

    async def remove(self, room_id: str, seat: str) -> None:
        with self._storage.lock:
            self._bucket(room_id).pop(f"{room_id}:{seat}", None)

    async def read(self, buckets: Iterable[int]) -> dict[str, str]:
        with self._storage.lock:
            found: dict[str, str] = {}
            for bucket in buckets:
                found.update(self._storage.bots.get(bucket, {}))
            return found


class MemoryAnalyses(_Port, Analyses):
    async def get(self, room_id: str) -> bytes | None:
        with self._locked(room_id):
            return self._storage.analyses.get(room_id)

    async def put(self, room_id: str, data: bytes) -> bytes:
        with self._locked(room_id):
            return self._storage.analyses.setdefault(room_id, data)


class MemorySharedKeys(_Port, SharedKeys):
    async def shared_secret(self, fresh: str) -> bytes:
        with self._storage.lock:
            if self._storage.secret is None:
                self._storage.secret = fresh
            return self._storage.secret.encode()


# The process's backends by prefix (``MemoryBackend.shared``), kept for the life of the process.
_SHARED: dict[str, MemoryBackend] = {}
_SHARED_LOCK = threading.Lock()


class MemoryBackend:
    """Every port over one storage in memory (``Backend``). ``MemoryBackend(config)`` is a
    storage of its own; ``shared(config)`` the process's one for ``config.prefix``."""

    def __init__(self, config: StoreConfig) -> None:
        self.config = config
        self._storage = _Storage()
        self.events: EventLog = MemoryEventLog(self._storage)
        self.rooms: RoomIndex = MemoryRoomIndex(self._storage)
        self.seats: RoomSeats = MemoryRoomSeats(self._storage)
        self.deadlines: DeadlineIndex = MemoryDeadlineIndex(self._storage, self._storage.deadlines)
        self.archive_queue: DeadlineIndex = MemoryDeadlineIndex(
            self._storage, self._storage.archive_due
        )
        self.rating_queue: DeadlineIndex = MemoryDeadlineIndex(
            self._storage, self._storage.rating_due
        )
        self.archive: Archive | None = None
        self.accounts: Accounts | None = None  # tiered.py gives a backend its accounts
        self.players: Players = MemoryPlayers()
        self.seeks: SeekPool = MemorySeeks()
        self.watchers: WatcherCounts = MemoryWatcherCounts()
        self.bots: BotSeats = MemoryBotSeats(self._storage)
        self.keys: SharedKeys = MemorySharedKeys(self._storage)
        self.analyses: Analyses = MemoryAnalyses(self._storage)

    @classmethod
    def shared(cls, config: StoreConfig) -> MemoryBackend:
        """The backend every caller of the process with ``config.prefix`` shares (made by the
        first), as the processes of a deployment share one Redis."""
        with _SHARED_LOCK:
            backend = _SHARED.get(config.prefix)
            if backend is None:
                backend = _SHARED[config.prefix] = cls(config)
            return backend

    def hints(
        self, on_hint: HintHandler, on_control: ControlHandler, on_lost: Callable[[], None]
    ) -> Hints:
        return MemoryHints(self._storage.hub, on_hint, on_control, on_lost)

    async def aclose(self) -> None:
        """Nothing to let go of: the storage stays, for every other user of it."""
