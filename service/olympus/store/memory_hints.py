"""The memory backend's hints (memory.py): wake-ups and control messages between the event
loops of one process, each delivered on its receiver's loop by ``call_soon_threadsafe``.

A ``HintHub`` is shared by every ``MemoryHints`` of one backend, and guarded by the backend's
lock: the appends publish under it, so the hints of a room are scheduled in version order.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable
from typing import Any

from .ports import ControlHandler, HintHandler, Readiness
from .records import check_room_id


class HintHub:
    """The started ``MemoryHints`` of one backend."""

    def __init__(self, lock: threading.Lock) -> None:
        self.lock = lock
        self.started: set[MemoryHints] = set()

    def publish(self, room_id: str, version: int) -> None:
        """``version`` to every started hints that watches ``room_id``. The caller holds
        ``lock`` (the append that made the version)."""
        for hints in list(self.started):
            if room_id in hints.rooms:
                self._schedule(hints, hints.deliver_hint, room_id, version)

    def broadcast(self, message: str) -> None:
        """The JSON text ``message`` to every started hints; the caller holds ``lock``."""
        for hints in list(self.started):
            self._schedule(hints, hints.deliver_control, message)

    def _schedule(self, hints: MemoryHints, callback: Callable[..., None], *args: Any) -> None:
        """``callback(*args)`` on the loop of ``hints``; hints whose loop closed are dropped
        (their process is gone without stopping them)."""
        assert hints.loop is not None
        try:
            hints.loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:
            self.started.discard(hints)


class MemoryHints:
    """One event loop's hints (the ``Hints`` port). ``start`` binds it to the running loop;
    every handler is called there, never inside the call that caused it. Nothing is ever
    lost, so ``on_lost`` is never called."""

    def __init__(
        self,
        hub: HintHub,
        on_hint: HintHandler,
        on_control: ControlHandler,
        on_lost: Callable[[], None],
    ) -> None:
        self._hub = hub
        self._on_hint = on_hint
        self._on_control = on_control
        self._on_lost = on_lost
        self.rooms: set[str] = set()  # the watched rooms (guarded by the hub's lock)
        self.loop: asyncio.AbstractEventLoop | None = None
        self._started = False

    @property
    def connected(self) -> bool:
        """True between ``start`` and ``stop``."""
        return self._started

    async def start(self) -> None:
        """Hear the hub from the running loop on; each room watched already is confirmed
        (``on_hint`` with None)."""
        with self._hub.lock:
            self.loop = asyncio.get_running_loop()
            self._started = True
            self._hub.started.add(self)
            for room_id in self.rooms:
                self.loop.call_soon(self.deliver_hint, room_id, None)

    async def stop(self) -> None:
        """Nothing more is delivered, scheduled or not (until ``start`` again)."""
        with self._hub.lock:
            self._started = False
            self._hub.started.discard(self)

    async def watch(self, room_id: str) -> None:
        """Hear ``room_id``'s versions from now on, confirmed by ``on_hint(room_id, None)``
        (once started: ``start`` confirms the rooms watched before it)."""
        check_room_id(room_id)
        with self._hub.lock:
            self.rooms.add(room_id)
            if self._started:
                self.loop = asyncio.get_running_loop()
                self.loop.call_soon(self.deliver_hint, room_id, None)

    async def unwatch(self, room_id: str) -> None:
        with self._hub.lock:
            self.rooms.discard(room_id)

    async def broadcast(self, message: dict[str, Any]) -> None:
        """``message`` to every started hints of the backend, this one included; each gets its
        own copy (the message is sent as JSON: ``TypeError`` if it is not JSON-able)."""
        encoded = json.dumps(message)
        with self._hub.lock:
            self._hub.broadcast(encoded)

    async def readiness(self, timeout: float) -> Readiness:
        return Readiness(None, True, [])

    def deliver_hint(self, room_id: str, version: int | None) -> None:
        """On the loop: ``on_hint``, unless stopped or the room unwatched meanwhile."""
        if self._started and room_id in self.rooms:
            self._on_hint(room_id, version)

    def deliver_control(self, message: str) -> None:
        """On the loop: ``on_control`` with a copy of its own, unless stopped meanwhile."""
        if self._started:
            self._on_control(json.loads(message))
