"""A backend with an archive: the live store's ports, whose reads of a room the live store
does not hold are answered from the archive, exactly as the live store answered them before
the room moved (same epoch, meta, seats, events; its status "finished").

A room moves in this order (server/archiver.py): copied to the archive and read back, then
dropped from the live store. So at every moment one of the two holds it, and a read that finds
it in neither (asking the live store first, then the archive) finds a room that never was.
Writes go to the live store only; an archived room takes none (it is over).

Archived games never change, so the last few read are kept decoded here (``_HELD``): a room
being loaded reads its epoch, its log and its seats one after another.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping, Sequence

from .archived import ArchivedGame, stored_events
from .ports import (
    Accounts,
    Analyses,
    Archive,
    Backend,
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
    WatcherCounts,
)
from .records import (
    RoomArchived,
    RoomLoad,
    RoomNotFound,
    StoredEvent,
    check_read,
)

FINISHED = "finished"
_HELD = 64


class _Archived:
    """The archive's games as the tiers read them, the last ``_HELD`` kept decoded."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self._held: OrderedDict[str, ArchivedGame] = OrderedDict()
        self._events: dict[str, tuple[ArchivedGame, list[StoredEvent]]] = {}

    async def game(self, room_id: str) -> ArchivedGame | None:
        game = self._held.get(room_id)
        if game is not None:
            self._held.move_to_end(room_id)
            return game
        game = await self.archive.get(room_id)
        if game is not None:
            self._held[room_id] = game
            if len(self._held) > _HELD:
                self._held.popitem(last=False)
        return game

    async def found(self, room_id: str) -> ArchivedGame:
        """The room's game; ``RoomNotFound`` if the archive has none either."""
        game = await self.game(room_id)
        if game is None:
            raise RoomNotFound(room_id)
        return game

    async def stored(self, room_id: str) -> tuple[ArchivedGame, list[StoredEvent]]:
        """The room's game and its events as the log reads them (chained once per game
        held: a load, then reads of its tail, ask them one after another)."""
        game = await self.found(room_id)
        events = self._events.get(room_id)
        if events is None or events[0] is not game:
            events = self._events[room_id] = (game, stored_events(game.events))
            if len(self._events) > _HELD:
                del self._events[next(iter(self._events))]
        return events


class TieredEventLog:
    """``EventLog``: the live log, and the archived one for rooms that moved."""

    def __init__(self, live: EventLog, archived: _Archived) -> None:
        self.live = live
        self.archived = archived
        # The writes and the snapshots are the live log's own methods: the command path takes
        # no extra step (docs/performance.md, "The archive"). Room ids are drawn at random
        # (server/lobby.py), so a new room does not meet an archived one (one that did would
        # stay live: ``ArchiveConflict``); ``delete_room`` drops the live copy only.
        self.create_room = live.create_room
        self.delete_room = live.delete_room
        self.append = live.append
        self.applied = live.applied
        self.confirm = live.confirm
        self.save_snapshot = live.save_snapshot
        self.drop_snapshot_if_ahead = live.drop_snapshot_if_ahead
        self.load_snapshot = live.load_snapshot
        self.trim = live.trim

    async def epoch(self, room_id: str) -> int:
        try:
            return await self.live.epoch(room_id)
        except RoomNotFound:
            return (await self.archived.found(room_id)).epoch

    async def room_meta(self, room_id: str) -> bytes:
        try:
            return await self.live.room_meta(room_id)
        except RoomNotFound:
            return (await self.archived.found(room_id)).meta

    async def room_exists(self, room_id: str) -> bool:
        return await self.live.room_exists(room_id) or (
            await self.archived.game(room_id) is not None
        )

    async def read(
        self, room_id: str, after_version: int = 0, count: int | None = None
    ) -> list[StoredEvent]:
        try:
            return await self.live.read(room_id, after_version, count)
        except RoomNotFound:
            check_read(after_version, count)
            events = (await self.archived.stored(room_id))[1][after_version:]
            return events if count is None else events[:count]

    async def version(self, room_id: str) -> int:
        try:
            return await self.live.version(room_id)
        except RoomNotFound:
            return len((await self.archived.found(room_id)).events)

    async def load(self, room_id: str) -> RoomLoad:
        try:
            return await self.live.load(room_id)
        except RoomNotFound:
            game, events = await self.archived.stored(room_id)
            return RoomLoad(None, events, len(events), game.epoch)

    async def aclose(self) -> None:
        await self.live.aclose()


class TieredRoomIndex:
    """``RoomIndex``: the live statuses; every archived room is "finished"."""

    def __init__(self, live: RoomIndex, archived: _Archived) -> None:
        self.live = live
        self.archived = archived

    async def set_room_status(self, room_id: str, status: str, seen: bool = False) -> str | None:
        try:
            return await self.live.set_room_status(room_id, status, seen)
        except RoomNotFound:
            await self.archived.found(room_id)
            return FINISHED  # it stays what it is

    async def room_status(self, room_id: str) -> str | None:
        status = await self.live.room_status(room_id)
        if status is None and await self.archived.game(room_id) is not None:
            return FINISHED
        return status

    async def rooms_by_status(
        self, status: str, *, offset: int = 0, limit: int | None = None
    ) -> list[str]:
        """Of "finished": the live ones and the archived ones, merged in order (a room being
        archived is in both, and listed once)."""
        if status != FINISHED:
            return await self.live.rooms_by_status(status, offset=offset, limit=limit)
        end = None if limit is None else offset + limit
        live = await self.live.rooms_by_status(status, offset=0, limit=end)
        archived = await self.archived.archive.room_ids(offset=0, limit=end)
        merged = sorted(set(live) | set(archived))
        return merged[offset:end]

    async def count_by_status(self, status: str) -> int:
        return await self.live.count_by_status(status)

    async def list_rooms(self) -> dict[str, str]:
        """The live store's rooms (the archived ones are listed by ``rooms_by_status``)."""
        return await self.live.list_rooms()


class TieredSeats:
    """``RoomSeats``: the live seats; an archived room's seats as they were when it moved."""

    def __init__(self, live: RoomSeats, archived: _Archived) -> None:
        self.live = live
        self.archived = archived

    async def write(self, room_id: str, fields: Mapping[str, str | int]) -> None:
        await self.live.write(room_id, fields)

    async def join(self, room_id: str, side: str | None, challenge: bool, name: str) -> Join:
        return await self.live.join(room_id, side, challenge, name)

    async def fields(self, room_id: str) -> dict[str, str]:
        fields = await self.live.fields(room_id)
        if fields:
            return fields
        game = await self.archived.game(room_id)
        return dict(game.seats) if game is not None else {}

    async def field(self, room_id: str, name: str) -> str | None:
        value = await self.live.field(room_id, name)
        if value is not None or await self.live.fields(room_id):
            return value
        game = await self.archived.game(room_id)
        return game.seats.get(name) if game is not None else None

    async def set_once(self, room_id: str, name: str, value: str) -> str | None:
        """Of an archived room: what it held (a rematch made before it moved), else
        ``RoomArchived``."""
        held = await self.live.set_once(room_id, name, value)
        if held is None and (game := await self.archived.game(room_id)) is not None:
            held = game.seats.get(name)
            if held is None:
                raise RoomArchived(room_id)
        return held

    async def bump(self, room_id: str, name: str) -> int:
        try:
            return await self.live.bump(room_id, name)
        except RoomNotFound:
            if await self.archived.game(room_id) is not None:
                raise RoomArchived(room_id) from None
            raise

    async def note_moved(self, times: Mapping[str, int]) -> None:
        await self.live.note_moved(times)

    async def records(self, room_ids: Sequence[str]) -> list[RoomRecord | None]:
        found = await self.live.records(room_ids)
        missing = [r for r, record in zip(room_ids, found, strict=True) if record is None]
        if not missing:
            return found
        archived = await self.archived.archive.records(missing)
        return [
            record if record is not None else _record(archived.get(room_id))
            for room_id, record in zip(room_ids, found, strict=True)
        ]


def _record(kept: tuple[bytes, dict[str, str]] | None) -> RoomRecord | None:
    return None if kept is None else RoomRecord(kept[0], kept[1])


class TieredAnalyses:
    """``Analyses``: the live store's while it holds the room, then the archive's (the
    archiver copies a live one over before it drops the room: server/archiver.py)."""

    def __init__(self, live: Backend, archive: Archive) -> None:
        self.live = live
        self.archive = archive

    async def get(self, room_id: str) -> bytes | None:
        found = await self.live.analyses.get(room_id)
        if found is None:
            found = await self.archive.analysis(room_id)
        return found

    async def put(self, room_id: str, data: bytes) -> bytes:
        if await self.live.events.room_exists(room_id):
            return await self.live.analyses.put(room_id, data)
        kept = await self.archive.put_analysis(room_id, data)
        if kept is None:
            raise RoomNotFound(room_id)
        return kept


class TieredBackend:
    """``Backend``: ``live``'s ports, reading through to ``archive`` (see the module)."""

    def __init__(self, live: Backend, archive: Archive, accounts: Accounts | None = None) -> None:
        self.live = live
        archived = _Archived(archive)
        self.archive: Archive | None = archive
        self.accounts: Accounts | None = accounts
        self.events: EventLog = TieredEventLog(live.events, archived)
        self.rooms: RoomIndex = TieredRoomIndex(live.rooms, archived)
        self.seats: RoomSeats = TieredSeats(live.seats, archived)
        self.analyses: Analyses = TieredAnalyses(live, archive)

    @property
    def deadlines(self) -> DeadlineIndex:
        return self.live.deadlines

    @property
    def bots(self) -> BotSeats:
        return self.live.bots

    @property
    def keys(self) -> SharedKeys:
        return self.live.keys

    @property
    def archive_queue(self) -> DeadlineIndex:
        return self.live.archive_queue

    @property
    def rating_queue(self) -> DeadlineIndex:
        return self.live.rating_queue

    @property
    def players(self) -> Players:
        return self.live.players

    @property
    def seeks(self) -> SeekPool:
        return self.live.seeks

    @property
    def watchers(self) -> WatcherCounts:
        return self.live.watchers

    def hints(
        self, on_hint: HintHandler, on_control: ControlHandler, on_lost: Callable[[], None]
    ) -> Hints:
        return self.live.hints(on_hint, on_control, on_lost)

    def aclose(self) -> Awaitable[None]:
        return self._aclose()

    async def _aclose(self) -> None:
        await self.live.aclose()
        if self.archive is not None:
            await self.archive.aclose()
