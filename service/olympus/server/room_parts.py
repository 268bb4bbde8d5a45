"""What the two helpers of a room see of it: the feed (room_feed.py) and the log reader
(room_reads.py) each hold the room (``RoomRuntime``, room.py) by the part of it they use, so
that neither imports the room that holds them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from olympus.rules import Faction, GameState
from olympus.store import EventLog, StoredEvent

from .feed import Feed
from .metrics import ServiceMetrics
from .room_log import HeldLog, NewEvent
from .settings import Settings

Audience = Faction | None


class Reading(Protocol):
    """The room's reader, as its feed uses it (``LogReader``)."""

    async def catch_up(self) -> None: ...

    async def complete(self) -> None: ...


class FeedRoom(Protocol):
    """The room as its feed reads it."""

    room_id: str
    epoch: int
    base: int  # events 1..base are a snapshot's, not held
    state: GameState
    settings: Settings
    submitting: int  # submits of this process under way
    metrics: ServiceMetrics

    @property
    def reader(self) -> Reading: ...

    @property
    def over(self) -> bool: ...

    def touch(self) -> None: ...


class Resetting(Protocol):
    """The room's feed, as its reader uses it (``RoomFeed``): dropped and numbered again on a
    rebuild, put back when a completion finds the same history."""

    feeds: dict[Audience, Feed]
    log: HeldLog

    def close_all(self, code: int, reason: str) -> None: ...

    def reset(self, seqs: dict[Audience, int] | None = None) -> None: ...

    def seqs(self) -> dict[Audience, int]: ...

    def over_due(self) -> None: ...


class ReadRoom(Protocol):
    """The room as its reader reads and rebuilds it."""

    room_id: str
    store: EventLog
    state: GameState
    base: int
    chain: str
    snapshot_version: int
    rebuilds: int
    gone: bool
    submitting: int
    lock: asyncio.Lock

    @property
    def feed(self) -> Resetting: ...

    @property
    def rebuild_listeners(self) -> Sequence[Callable[[Any], Awaitable[None]]]: ...

    @property
    def version(self) -> int: ...

    @property
    def over(self) -> bool: ...

    def load(self, stored: list[StoredEvent]) -> None: ...

    def apply(self, numbered: list[NewEvent], since: float) -> None: ...
