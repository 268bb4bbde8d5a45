"""How late the process's event loop runs what is ready: its measure of overload.

A process does each room's work in one go: a command's events, its ``ack``, then the next
seat's ``legal`` (room.py). While the process keeps up, whatever becomes ready (a socket's
frame, a timer) runs within milliseconds. Once it cannot, each turn of the event loop has more
to do than the last, and everything ready waits longer for its turn: a player's next command as
much as anything. So the process watches the wait itself: a heartbeat due every ``interval``
notes how late it ran (``lag``).

The service refuses new rooms while the lag exceeds ``Settings.overload_seconds``
(services.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

HEARTBEAT_SECONDS = 0.1


class LoopLag:
    """The heartbeat, and how late it is (``lag``)."""

    def __init__(
        self,
        interval: float = HEARTBEAT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._interval = interval
        self._clock = clock
        self._late = 0.0  # how late the last heartbeat ran
        self._due: float | None = None  # when the next one is due, while started
        self._beat: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # while started

    def lag(self) -> float:
        """Seconds by which the loop is behind: how late the last heartbeat ran, or the next
        one, if it is overdue now (asked from work that holds the loop); 0 when stopped."""
        if self._due is None:
            return 0.0
        return max(self._late, self._clock() - self._due)

    async def start(self) -> None:
        await self.stop()  # (started again: one heartbeat)
        self._late = 0.0
        self._loop = asyncio.get_running_loop()
        self._schedule()

    async def stop(self) -> None:
        if self._beat is not None:
            self._beat.cancel()
        self._beat = self._due = self._loop = None

    def beat(self) -> None:
        """The heartbeat (the loop's timer calls it when due): note how late it comes, and
        schedule the next one."""
        assert self._due is not None, "not started"
        self._late = max(0.0, self._clock() - self._due)
        if self._beat is not None:
            self._beat.cancel()  # (when called before its time)
        self._schedule()

    def _schedule(self) -> None:
        assert self._loop is not None
        self._due = self._clock() + self._interval
        self._beat = self._loop.call_later(self._interval, self.beat)
