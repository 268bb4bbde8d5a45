"""The rooms this process holds in memory: loaded on first use, dropped when idle.

Loading is single-flight (concurrent hellos for one room share one read). Hooks let the
fan-out subscribe to the room's hint channel and the clocks arm its timers as soon as it is
loaded, and undo both when it is dropped.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from olympus.rules.snapshot import SnapshotError
from olympus.store import EventLog, RoomLoad, RoomNotFound

from . import snapshots
from .metrics import ServiceMetrics
from .protocol import CLOSE_RESYNC
from .room import RoomRuntime
from .settings import Settings
from .snapshots import RoomSnapshot

log = logging.getLogger("olympus.server.registry")

Hook = Callable[[RoomRuntime], Awaitable[None]]


class RoomNotReady(Exception):
    """The room exists but has no GameCreated yet (being created, or a failed creation)."""


class RoomRegistry:
    def __init__(
        self,
        store: EventLog,
        settings: Settings,
        metrics: ServiceMetrics,
    ) -> None:
        self.store = store
        self.settings = settings
        self.metrics = metrics
        self.rooms: dict[str, RoomRuntime] = {}
        self._loading: dict[str, asyncio.Task[RoomRuntime]] = {}
        self.load_hooks: list[Hook] = []
        self.evict_hooks: list[Hook] = []

    async def get(self, room_id: str) -> RoomRuntime:
        """The room, loaded if needed. Raises ``RoomNotFound`` or ``RoomNotReady``."""
        runtime = self.rooms.get(room_id)
        if runtime is not None:
            runtime.touch()
            return runtime
        task = self._loading.get(room_id)
        if task is None:
            task = asyncio.get_running_loop().create_task(self._load(room_id))
            self._loading[room_id] = task
            task.add_done_callback(lambda _: self._loading.pop(room_id, None))
        return await asyncio.shield(task)

    async def fresh(self, room_id: str) -> RoomRuntime:
        """``get``, making sure the cache is of the room's current incarnation (epoch). A room
        this call loads is read from the store after the call began, epoch and events in one
        read (``EventLog.load``), and its epoch is not read again; one found loaded, or
        being loaded by an earlier call, is checked against the store's epoch."""
        if room_id not in self.rooms and room_id not in self._loading:
            return await self.get(room_id)
        runtime = await self.get(room_id)
        try:
            epoch = await self.store.epoch(room_id)
        except RoomNotFound:
            await self.evict(runtime, CLOSE_RESYNC)
            raise
        if epoch != runtime.epoch:
            await self.evict(runtime, CLOSE_RESYNC)
            return await self.get(room_id)
        return runtime

    async def _load(self, room_id: str) -> RoomRuntime:
        """The latest snapshot and the events after it (one read); the whole log if there is
        no usable snapshot. A finished game is held whole: its log is what it is loaded for."""
        loaded = await self.store.load(room_id)
        if loaded.version == 0:
            raise RoomNotReady(room_id)
        runtime = RoomRuntime(room_id, loaded.epoch, self.store, self.settings, self.metrics)
        snapshot = await self._usable(room_id, loaded)
        if snapshot is not None:
            runtime.restore(snapshot, loaded.events)
        else:
            whole = loaded.snapshot is None  # else the events start after the snapshot
            runtime.load(loaded.events if whole else await self.store.read(room_id, 0))
        self.metrics.room_loads.inc("log" if snapshot is None else "snapshot")
        if runtime.over:
            await runtime.reader.complete()
        self.rooms[room_id] = runtime
        try:
            for hook in self.load_hooks:
                await hook(runtime)
        except BaseException:  # half-wired (e.g. not subscribed): never keep it
            await self.evict(runtime)
            raise
        return runtime

    async def _usable(self, room_id: str, loaded: RoomLoad) -> RoomSnapshot | None:
        if loaded.snapshot is None:
            return None
        try:
            return await snapshots.usable(self.store, room_id, loaded)
        except SnapshotError as error:  # a cache that does not fit: replay the log instead
            log.warning("snapshot ignored", extra={"room": room_id, "error": str(error)})
            return None

    async def evict(self, runtime: RoomRuntime, close_code: int | None = None) -> None:
        if self.rooms.get(runtime.room_id) is runtime:
            del self.rooms[runtime.room_id]
        runtime.gone = True
        if close_code is not None:
            runtime.feed.close_all(close_code, "resync")
        for hook in self.evict_hooks:
            await hook(runtime)

    async def evict_idle(self) -> int:
        """Drop rooms without local sockets that nobody used for ``idle_seconds``."""
        limit = time.monotonic() - self.settings.idle_seconds
        idle = [
            r
            for r in self.rooms.values()
            if not r.feed.watched and r.last_used < limit and not r.lock.locked()
        ]
        for runtime in idle:
            await self.evict(runtime)
        return len(idle)
