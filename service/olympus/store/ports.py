"""The store's ports: what the service (server/) and the computer's worker (bot/) may ask of
storage, and nothing of how it is kept.

Two backends implement every port: Redis (one server or a Cluster, chosen once when the
backend is opened: redis_backend.py) and memory (memory.py: one process, not durable, for
tests and ``olympus serve --store memory``). One suite of tests (tests/store) runs on each, so
both keep the same contract. Callers see only the values and the error tree of records.py:
every failure to reach the storage is ``StoreUnavailable``.

- ``EventLog``: each room's append-only log of events, with its snapshot (the truth).
- ``RoomIndex``: each room's lobby status (open, live, finished), for listing.
- ``RoomSeats``: who sits where, their token generations and names, beside the log.
- ``DeadlineIndex``: each clocked room's earliest deadline (R12), so that any process fires it.
- ``BotSeats``: the seats the computer plays, in buckets its workers share out.
- ``SharedKeys``: the deployment's token key, made once and shared by every process.
- ``Analyses``: each finished game's analysis by the coach (bot/analysis.py), kept once.
- ``Hints``: the wake-ups after each append, and a control channel to every process.
- ``Archive``: finished games, moved out of the live store (PostgreSQL: postgres_archive.py).
  A backend opened with an archive answers every read of an archived room from it, as the
  live store answered before (tiered.py); its ``archive_queue`` says when each finished room
  is due to move.
- ``Accounts``: players' accounts, ratings and the games each sat in (PostgreSQL beside the
  archive: postgres_accounts.py); a backend has them when it has an archive.
- ``Players``: what is short-lived of players in the live store: their sessions' generations
  and ends, and counters of attempts (sign-in limits).
- ``SeekPool``: quick pairing's seeks, paired by rating in one atomic step (seeks.py).
- ``WatcherCounts``: how many sockets watch each room, written by each process for itself
  and summed on read.
"""

from __future__ import annotations

import zlib
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Protocol

from .archived import ArchivedGame, ArchivedHead, PlayerGame
from .players import Account, RatedGame, Rating, RatingChange, Standing
from .records import AppendResult, Applied, RoomLoad, Snapshot, StoredEvent
from .seeks import Match, Seek


class EventLog(Protocol):
    """Each room's log. A room id is ``[A-Za-z0-9_.:-]{1,128}`` (``ValueError`` otherwise)."""

    async def create_room(self, room_id: str, meta: bytes) -> int:
        """Create the room with ``meta`` (the caller's bytes); return its random epoch, a
        63-bit number never 0, new for each incarnation of the id. Raises ``RoomExists``."""
        ...

    async def epoch(self, room_id: str) -> int:
        """The room's epoch. Raises ``RoomNotFound``."""
        ...

    async def room_meta(self, room_id: str) -> bytes:
        """The room's meta as created. Raises ``RoomNotFound``."""
        ...

    async def room_exists(self, room_id: str) -> bool: ...

    async def delete_room(self, room_id: str) -> bool:
        """Drop the room's log, snapshot, command records and seats (``RoomSeats``) at once,
        then its status (``RoomIndex``); True if it existed. The id may then be created again
        (a new epoch, version 0). Of a backend with an archive: the live copy only."""
        ...

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
        """Append ``events`` at once iff the room is at ``expected_version`` and (given
        ``chain``, the caller's chain at that version: "" at 0) its last event records that
        chain; then publish the new version as the room's hint. Each event keeps ``at_ms``,
        the time the caller applied them at (ms since the epoch), read back as
        ``StoredEvent.at_ms`` (0 when not given; an archived room's events read 0).

        Checks in this order: the room exists (``RoomNotFound``); ``command_id`` was applied
        already (a result with ``duplicate=True`` and the first append's versions, even if the
        room moved on; ``IdReused`` if it was applied to a command of another ``digest``); the
        version (``VersionConflict``); the chain (``LogDiverged``). ``ValueError`` or
        ``TypeError`` for malformed arguments. A backend that waits for replicas raises
        ``NotReplicated`` when they do not confirm (the events are written: send it again)."""
        ...

    async def applied(self, room_id: str, command_id: str) -> Applied | None:
        """What ``command_id`` was applied as, or None."""
        ...

    async def confirm(self, room_id: str, command_id: str, seen: Applied) -> Applied | None:
        """``seen`` (``applied``'s answer) vouched for as an append's result is: the record as
        it is now, once the replicas asked for have it. None if it is no longer ``seen``."""
        ...

    async def read(
        self, room_id: str, after_version: int = 0, count: int | None = None
    ) -> list[StoredEvent]:
        """Events after ``after_version``, oldest first, at most ``count``. Raises
        ``RoomNotFound``, ``EventsTrimmed`` when the first one asked for was trimmed."""
        ...

    async def version(self, room_id: str) -> int:
        """Events ever appended (trimming does not lower it). Raises ``RoomNotFound``."""
        ...

    async def load(self, room_id: str) -> RoomLoad:
        """The latest snapshot and every event after it, read at once."""
        ...

    async def save_snapshot(self, room_id: str, version: int, data: bytes) -> bool:
        """Keep ``data`` as the state after event ``version`` unless a snapshot as new or newer
        is kept (False). Raises ``SnapshotAhead`` past the log, ``RoomNotFound``."""
        ...

    async def drop_snapshot_if_ahead(self, room_id: str) -> bool:
        """Drop the snapshot if it claims more events than the log holds (the storage lost
        the writes it was folded from); True if it did."""
        ...

    async def load_snapshot(self, room_id: str) -> Snapshot | None: ...

    async def trim(self, room_id: str, keep_after_version: int) -> int:
        """Drop the events up to ``keep_after_version``; return how many went. Raises
        ``TrimBeyondSnapshot`` past the latest snapshot, ``RoomNotFound``."""
        ...

    async def aclose(self) -> None:
        """Let go of the log's connections; a later call connects again."""
        ...


class RoomIndex(Protocol):
    """Each room's lobby status, kept apart from the room (listings are advisory: a listed room
    may be gone). A status is ``[A-Za-z0-9_.-]{1,64}`` (``ValueError`` otherwise)."""

    async def set_room_status(self, room_id: str, status: str, seen: bool = False) -> str | None:
        """Record ``status``; return the one before. ``RoomNotFound`` for a room that does not
        exist, unless ``seen`` (the caller has just seen it exist)."""
        ...

    async def room_status(self, room_id: str) -> str | None: ...

    async def rooms_by_status(
        self, status: str, *, offset: int = 0, limit: int | None = None
    ) -> list[str]:
        """The ids of the rooms with ``status``, sorted, from ``offset``, at most ``limit``."""
        ...

    async def count_by_status(self, status: str) -> int:
        """How many rooms of the live store have ``status`` (archived ones are not counted)."""
        ...

    async def list_rooms(self) -> dict[str, str]:
        """Every listed room: id -> status."""
        ...


JoinOutcome = Literal["joined", "taken", "no_room", "side_required"]


class Join(NamedTuple):
    """A join's outcome: ``side`` the seat taken ("" unless joined), ``full`` both seats are
    taken now (or, for "taken", the room was full), ``epoch`` the room's (0 unless joined)."""

    outcome: JoinOutcome
    side: str
    full: bool
    epoch: int


@dataclass(frozen=True, slots=True)
class RoomRecord:
    """What the lobby lists of a room: its meta as created and its seats' fields."""

    meta: bytes
    seats: dict[str, str]


class RoomSeats(Protocol):
    """Each room's seats, a map of fields beside its log: ``olympians`` / ``chthonians`` (the
    seat is taken; the value is its token generation), ``host`` and ``host_side`` (a
    Challenge's creator and the side it got), ``name:<seat>``, ``rematch``, ``moved_ms``."""

    async def write(self, room_id: str, fields: Mapping[str, str | int]) -> None:
        """Set ``fields`` (the seats of a room being created); none: nothing is done."""
        ...

    async def join(self, room_id: str, side: str | None, challenge: bool, name: str) -> Join:
        """Take ``side`` ("olympians" or "chthonians", as the caller checked; None: the first
        free seat; a Challenge needs a side and gives its creator the other) under ``name``
        ("" none), at once: two joiners never share a seat. "no_room" if the room's log does
        not exist."""
        ...

    async def fields(self, room_id: str) -> dict[str, str]:
        """Every field ({} for a room without seats)."""
        ...

    async def field(self, room_id: str, name: str) -> str | None: ...

    async def set_once(self, room_id: str, name: str, value: str) -> str | None:
        """Set ``name`` to ``value`` unless it is set; return what it holds then (``value``
        when this call, or an earlier sending of it, set it). None: the room has no seats
        (deleted; ``RoomArchived`` instead for a backend's archived room)."""
        ...

    async def bump(self, room_id: str, name: str) -> int:
        """Add 1 to the number in ``name`` (0 when unset); return the sum. ``RoomNotFound``
        for a room without seats (``RoomArchived`` for a backend's archived room)."""
        ...

    async def note_moved(self, times: Mapping[str, int]) -> None:
        """Set each room's ``moved_ms`` (room id -> ms), at once for all; not for a room whose
        seats are gone (deleted, or moved to the archive)."""
        ...

    async def records(self, room_ids: Sequence[str]) -> list[RoomRecord | None]:
        """Each room's meta and seats, in order; None for a room that does not exist."""
        ...


class DeadlineIndex(Protocol):
    """Each clocked room's earliest deadline (ms since the epoch): where any process finds the
    rooms whose deadlines passed, even rooms no process holds (R12)."""

    async def set_due(self, room_id: str, due_ms: int | None) -> None:
        """Record the room's earliest deadline; None: it has none (it is forgotten)."""
        ...

    async def overdue(self, until_ms: int, limit: int = 100) -> list[str]:
        """Rooms whose deadline is at or before ``until_ms`` (at most ``limit`` per part of
        the index, in no promised order)."""
        ...


# The bot seat records are spread over this many buckets by ``bot_hash(room) % BOT_BUCKETS``;
# a worker of shard I/N reads only the buckets that may hold its rooms (bots_worker.py).
# Changing it strands the records of the buckets that go.
BOT_BUCKETS = 64


def bot_hash(room_id: str) -> int:
    """The hash that picks a room's bucket and its worker's shard (``--shard I/N``)."""
    return zlib.crc32(room_id.encode())


class BotSeats(Protocol):
    """The seats the computer plays: one record (the caller's text) per room and seat."""

    async def put(self, room_id: str, seat: str, record: str) -> None: ...

    async def remove(self, room_id: str, seat: str) -> None: ...

    async def read(self, buckets: Iterable[int]) -> dict[str, str]:
        """Every record in ``buckets``: ``<room>:<seat>`` -> record."""
        ...


class SharedKeys(Protocol):
    async def shared_secret(self, fresh: str) -> bytes:
        """The deployment's token key: ``fresh`` if none was kept yet (the first process's),
        else the one kept."""
        ...


class Analyses(Protocol):
    """Each finished game's analysis (the caller's bytes), written once: the first kept wins.
    Of the live store, dropped with its room (``EventLog.delete_room``); a backend with an
    archive keeps an archived room's in the archive (tiered.py)."""

    async def get(self, room_id: str) -> bytes | None: ...

    async def put(self, room_id: str, data: bytes) -> bytes:
        """Keep ``data`` unless an analysis is kept already; return the one kept."""
        ...


class Archive(Protocol):
    """Finished games, each under its room id, written once and never changed. Every failure
    to reach the archive's storage is ``StoreUnavailable``."""

    async def migrate(self) -> None:
        """Bring the archive's schema up to this version's (every process may call it at
        start; they take turns, and what was applied is not applied again)."""
        ...

    async def put(self, game: ArchivedGame) -> ArchivedHead:
        """Keep ``game`` unless it is kept already; return what is kept, read back (the
        caller checks it before it lets go of the live copy). Idempotent: the same game again
        writes nothing. ``ArchiveConflict`` if another history is kept under its id."""
        ...

    async def head(self, room_id: str) -> ArchivedHead | None:
        """What is kept of the room, or None."""
        ...

    async def get(self, room_id: str) -> ArchivedGame | None:
        """The room's game, or None. ``ArchiveCorrupt`` if its log cannot be unpacked."""
        ...

    async def records(self, room_ids: Sequence[str]) -> dict[str, tuple[bytes, dict[str, str]]]:
        """The meta and seats of each of ``room_ids`` that is kept."""
        ...

    async def room_ids(self, *, offset: int = 0, limit: int | None = None) -> list[str]:
        """The ids of the kept games, sorted, from ``offset``, at most ``limit``."""
        ...

    async def analysis(self, room_id: str) -> bytes | None:
        """The kept game's analysis, or None (none kept, or no such game)."""
        ...

    async def put_analysis(self, room_id: str, data: bytes) -> bytes | None:
        """Keep ``data`` as the kept game's analysis unless one is kept; return the one kept
        (None: no such game kept)."""
        ...

    async def games_of(
        self, name: str, *, before: tuple[int, str] | None = None, limit: int = 20
    ) -> list[PlayerGame]:
        """The games a player of ``name`` (case-insensitive) sat in, newest end first, at
        most ``limit``; ``before`` (ended_ms, room id) of the last one of the page before."""
        ...

    async def aclose(self) -> None: ...


class Accounts(Protocol):
    """Players' accounts and ratings (players.py), kept for good beside the archive. Every
    failure to reach the storage is ``StoreUnavailable``."""

    async def create(
        self, name: str, name_key: str, password_hash: str, at_ms: int, standing: Standing
    ) -> Account:
        """A new account; ``NameTaken`` if an account has ``name_key`` already."""
        ...

    async def find(self, name_key: str) -> Account | None: ...

    async def get(self, account_id: int) -> Account | None: ...

    async def set_password(self, account_id: int, password_hash: str) -> None: ...

    async def add_game(self, account_id: int, room_id: str, seat: str, created_ms: int) -> None:
        """Note that the account took ``seat`` of ``room_id`` (again: nothing changes)."""
        ...

    async def games(self, account_id: int, limit: int = 50) -> list[tuple[str, str]]:
        """The account's rooms and seats, newest first, at most ``limit``."""
        ...

    async def rate(self, game: RatedGame, rating: Rating) -> list[RatingChange]:
        """Rate ``game`` once: the first call for its room gives each seat's account the
        standing ``rating`` computes from both accounts as they stand before it (held until
        the end of the transaction), in one transaction, and returns the changes; every later
        call changes nothing and returns those kept."""
        ...

    async def changes(self, room_id: str) -> list[RatingChange]:
        """The rated game's changes (none if it is not rated)."""
        ...

    async def history(self, account_id: int, limit: int = 200) -> list[RatingChange]:
        """The account's changes, newest first, at most ``limit``."""
        ...

    async def leaderboard(self, min_games: int, limit: int) -> list[Account]:
        """The accounts of at least ``min_games`` rated games, best rating first."""
        ...

    async def aclose(self) -> None: ...


class Players(Protocol):
    """Players' short-lived state in the live store: sessions (a generation per account, as
    seats' tokens have, and the sessions signed out one by one) and attempt counters."""

    async def session(self, account_id: int, session_id: str) -> tuple[int, bool]:
        """The account's session generation (0 before any bump) and whether ``session_id``
        was signed out, in one read."""
        ...

    async def end_session(self, account_id: int, session_id: str, ttl_seconds: int) -> None:
        """Sign ``session_id`` out (remembered ``ttl_seconds``: its cookie's lifetime)."""
        ...

    async def bump_generation(self, account_id: int) -> int:
        """End every session of the account: its generation goes up; the new one."""
        ...

    async def note_online(self, name: str, at_ms: int) -> None:
        """The player of ``name`` was seen at ``at_ms``."""
        ...

    async def online(self, since_ms: int, limit: int) -> tuple[int, list[str]]:
        """How many players were seen since ``since_ms``, and the names of the last ``limit``
        of them, latest first (older sightings are forgotten)."""
        ...

    async def attempt(self, key: str, window_seconds: int) -> tuple[int, int]:
        """Count an attempt under ``key`` in a window of ``window_seconds`` that starts with
        its first attempt: the attempts in the window so far (this one included) and the
        milliseconds until it ends."""
        ...


class SeekPool(Protocol):
    """Quick pairing's seeks, in pools (a clock and variants), shared by every process: a seek
    is paired once, and only while alive (seeks.py states the rule)."""

    async def add(self, seek: Seek) -> None:
        """Put ``seek`` in its pool; the account's earlier seek, if any, is cancelled."""
        ...

    async def keep_alive(self, seek_id: str, alive_ms: int) -> bool:
        """Keep the seek alive until ``alive_ms``: whether it still waits (False once paired,
        cancelled or dropped dead)."""
        ...

    async def cancel(self, seek_id: str) -> bool:
        """Take the seek out of its pool: whether it was waiting."""
        ...

    async def match(self, seek_id: str) -> Match | None:
        """The paired seek's match (kept some minutes), or None."""
        ...

    async def pair(self, pool: str, now_ms: int) -> list[tuple[str, str, str]]:
        """Pair the pool's live seeks now, atomically (dead ones dropped): each new pair as
        (lower rated seek, higher rated seek, room id)."""
        ...

    async def pools(self) -> list[str]:
        """The pools that may hold seeks."""
        ...

    async def waiting(self, pool: str) -> int:
        """How many seeks the pool holds."""
        ...


class WatcherCounts(Protocol):
    """How many sockets watch each room, kept per server process: each process writes its own
    counts every few seconds, each write living until its ``expires_ms`` unless written again,
    and a read sums the counts of every process whose last write has not expired. So the sum
    is eventually consistent (a few seconds behind), and a process that died stops counting
    once its last write expires. Times are the caller's clock (ms since the epoch)."""

    async def put(self, process: str, counts: Mapping[str, int], now_ms: int, ttl_ms: int) -> None:
        """Replace ``process``'s counts (room id -> sockets; counts of 0 or less are left
        out) with ``counts``, written at ``now_ms`` and counted until ``now_ms + ttl_ms``.
        ``ValueError`` for a process or room name that is not ``[A-Za-z0-9_.:-]{1,128}``."""
        ...

    async def totals(self, now_ms: int) -> dict[str, int]:
        """Each room's count summed over the processes whose counts have not expired at
        ``now_ms`` (expired ones are forgotten); rooms nobody watches are left out."""
        ...


HintHandler = Callable[[str, int | None], None]
ControlHandler = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Readiness:
    """What the process can serve (``/healthz``)."""

    down: str | None  # why no storage node answered; None: one did
    hints: bool  # the hints' main connection is up, or was lost only a moment ago
    shards_down: list[str]  # nodes not answering, or whose rooms' hints are lost now

    @property
    def ready(self) -> bool:
        return self.down is None and self.hints


class Hints(Protocol):
    """Wake-ups: after each append the log publishes the room's new version to the processes
    that watch the room. A hint is never a delivery: on each one, and each time a watch is
    (re)confirmed (``on_hint`` with None: something may have been missed), the watcher reads
    the room's tail from the log. The control channel carries rare messages to every process
    (this one included)."""

    @property
    def connected(self) -> bool:
        """Every connection the hints need is up."""
        ...

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def watch(self, room_id: str) -> None:
        """Hear the room's hints from now on (its ``on_hint`` with None once confirmed; a
        watch before ``start`` is confirmed by it; a watch may be confirmed more than once)."""
        ...

    async def unwatch(self, room_id: str) -> None: ...

    async def broadcast(self, message: dict[str, Any]) -> None:
        """``message`` (JSON-able) to the control handler of every process."""
        ...

    async def readiness(self, timeout: float) -> Readiness:
        """Ask every storage node to answer within ``timeout``, at once."""
        ...


@dataclass(frozen=True, slots=True)
class StoreConfig:
    """Where and how to reach the storage: ``url`` is ``memory://`` (memory.py),
    ``redis://…`` / ``unix://…`` (one Redis) or ``redis+cluster://host:port[,…]``; ``prefix``
    names every key and channel of one deployment."""

    url: str
    prefix: str = "olympus"
    timeout: float = 10.0
    pool_size: int = 64
    retries: int = 3  # a command whose connection failed is sent again this many times
    append_replicas: int = 0  # appends wait for this many replicas (0: the master alone)
    append_replica_timeout_ms: int = 100
    # Where finished games go: ``postgresql://…`` (postgres_archive.py), ``memory://``
    # (memory_archive.py), or None: they stay in the live store.
    archive_url: str | None = None


class Backend(Protocol):
    """Every port of one storage, opened once per process (``open_backend``)."""

    @property
    def events(self) -> EventLog: ...

    @property
    def rooms(self) -> RoomIndex: ...

    @property
    def seats(self) -> RoomSeats: ...

    @property
    def deadlines(self) -> DeadlineIndex: ...

    @property
    def bots(self) -> BotSeats: ...

    @property
    def keys(self) -> SharedKeys: ...

    @property
    def analyses(self) -> Analyses: ...

    @property
    def archive(self) -> Archive | None:
        """Where finished games go; None: nowhere, they stay in the live store."""
        ...

    @property
    def archive_queue(self) -> DeadlineIndex:
        """When each finished room is due to move to the archive (ms since the epoch)."""
        ...

    @property
    def accounts(self) -> Accounts | None:
        """Players' accounts and ratings; None without an archive (no accounts then)."""
        ...

    @property
    def players(self) -> Players: ...

    @property
    def seeks(self) -> SeekPool: ...

    @property
    def watchers(self) -> WatcherCounts: ...

    @property
    def rating_queue(self) -> DeadlineIndex:
        """The finished rated games whose ratings are to change (due at once)."""
        ...

    def hints(
        self, on_hint: HintHandler, on_control: ControlHandler, on_lost: Callable[[], None]
    ) -> Hints:
        """This process's hints, delivered to ``on_hint(room_id, version or None)`` and
        ``on_control(message)`` from the event loop; ``on_lost`` is called for each lost
        connection (a counter)."""
        ...

    def aclose(self) -> Awaitable[None]:
        """Let go of every connection."""
        ...
