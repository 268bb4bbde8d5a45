"""Cross-process fan-out: the store's hints (store/ports.py, ``Hints``) turned into reads.

After every append the store hints the room's new version to every process that watches the
room. This process watches the rooms it holds (the registry's hooks: from load to eviction),
and on a hint asks the room to read its tail from the log and push it to its sockets
(``LogReader.request``, room_reads.py). A hint is only a wake-up: on each confirmation of a watch
(no version) the room reads too, so a gap in the hints costs nothing. The control channel
carries rare messages to every process (token revocations) to ``control_handlers``.
"""

from __future__ import annotations

import logging
from typing import Any

from olympus.store import Backend, ControlHandler, Hints, Readiness

from .metrics import ServiceMetrics
from .registry import RoomRegistry
from .room import RoomRuntime

log = logging.getLogger("olympus.server.fanout")



class Fanout:
    """The process's hints, wired to its rooms (``watch``/``unwatch`` are registry hooks)."""

    def __init__(self, backend: Backend, registry: RoomRegistry, metrics: ServiceMetrics) -> None:
        self.registry = registry
        self.metrics = metrics
        self.control_handlers: list[ControlHandler] = []
        self.hints: Hints = backend.hints(self._hinted, self._control, self._lost)

    @property
    def connected(self) -> bool:
        """Every connection the hints need is up."""
        return self.hints.connected

    async def readiness(self, timeout: float) -> Readiness:
        return await self.hints.readiness(timeout)

    async def start(self) -> None:
        await self.hints.start()

    async def stop(self) -> None:
        await self.hints.stop()

    async def watch(self, runtime: RoomRuntime) -> None:
        await self.hints.watch(runtime.room_id)

    async def unwatch(self, runtime: RoomRuntime) -> None:
        await self.hints.unwatch(runtime.room_id)

    async def broadcast(self, message: dict[str, Any]) -> None:
        """Send a control message to every process (this one included)."""
        await self.hints.broadcast(message)

    def _hinted(self, room_id: str, version: int | None) -> None:
        runtime = self.registry.rooms.get(room_id)
        if runtime is not None:
            runtime.reader.request(version)

    def _control(self, message: dict[str, Any]) -> None:
        for handler in self.control_handlers:
            try:
                handler(message)
            except Exception:  # a bug in a handler must not stop the hints
                log.exception("control message failed", extra={"kind": message.get("kind")})

    def _lost(self) -> None:
        self.metrics.pubsub_reconnects.inc()
