"""The process's lowest-priority work: rooms whose seats are owed a ``legal`` (or ``game_over``).

A seat's ``legal`` message lists its next options; computing it is the rules engine's most
expensive call (``legal_actions``), and ``game_over`` packs the whole log. Neither must hold
back what a player is waiting for: the events of a command at every socket of the room, and
the ``ack``. So rooms owing those frames wait here, in the order they became due, and a single
callback serves one room per turn of the event loop: every turn still reads the sockets, appends
and fans out everything that is ready before the next room's options are computed. Under
overload, the wait moves here (to the next options) instead of onto every event. (A seat with
nothing to do gets its ``legal`` at once, not through here: it lists nothing, so it costs
nothing to compute, RoomRuntime.push_waiting.)

How long the oldest room has been waiting (``lag``) is therefore the process's measure of
overload: it is near zero while the process keeps up, and grows with the backlog once it does
not. The service refuses new rooms while it exceeds ``Settings.overload_seconds``
(services.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Protocol

log = logging.getLogger("olympus.server.legal_queue")


class Owing(Protocol):
    """A room with frames due (room.py)."""

    def push_due(self) -> None: ...


class LegalQueue:
    """Serves one room per turn of the event loop, as a callback that schedules the next
    (``_serve``): no ``asyncio.Event`` to wake a task and no ``asyncio.sleep(0)`` to yield,
    which are Python on every command."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        # Each room once, first come first served, with when it first became due: a room
        # owed more while waiting keeps its place and its time.
        self._due: dict[Owing, float] = {}
        self._loop: asyncio.AbstractEventLoop | None = None  # while started
        self._turn: asyncio.Handle | None = None  # the next room's turn, while one is due

    def __len__(self) -> int:
        return len(self._due)

    def add(self, room: Owing) -> None:
        self._due.setdefault(room, self._clock())
        self._next_turn()

    def lag(self) -> float:
        """Seconds the longest-waiting room has waited for its turn (0 when none waits)."""
        oldest = next(iter(self._due.values()), None)  # insertion order: the first waited longest
        return 0.0 if oldest is None else max(0.0, self._clock() - oldest)

    def discard(self, room: Owing) -> None:
        self._due.pop(room, None)

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._next_turn()

    async def stop(self) -> None:
        if self._turn is not None:
            self._turn.cancel()
        self._loop = self._turn = None

    def _next_turn(self) -> None:
        if self._turn is None and self._loop is not None and self._due:
            self._turn = self._loop.call_soon(self._serve)

    def _serve(self) -> None:
        """The first room's frames; the next room's at the next turn of the loop, after
        whatever became ready meanwhile (events and acks first)."""
        self._turn = None
        if not self._due:
            return
        room = next(iter(self._due))
        del self._due[room]
        try:
            room.push_due()
        except Exception:  # one room's bug must not starve the others
            log.exception("pushing legal frames failed")
        finally:
            self._next_turn()
