"""Who watches what: each live game's spectator count, and the lobby's featured game.

Counts are eventually consistent across processes and never touch the command path: every
``period`` seconds a task of each process writes how many of its sockets watch each room (its
spectators and the commentary's followers) to the store's ``WatcherCounts`` under the
process's own name, to be counted for ``3 × period`` unless written again; a read sums every
process's counts (ports.py). Reads are kept ``period / 2`` seconds in the process, so the
lobby's lists cost one store read per process and half period however many ask. A count is
at most about one period old, and a process that died stops counting within three.

The featured game (``featured``) is the most watched live game; among equals, the rated game
whose players' mean rating is highest (read for the ``RATED_LOOKUPS`` last moved of them);
then the one moved last (``moved_ms``), then the
newest. It is chosen among the live rooms the lobby lists first (``CANDIDATES``) and those
anybody watches, and kept ``period / 2`` seconds as the counts are.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from olympus.store import Backend

from .lobby import Lobby

log = logging.getLogger("olympus.server.watchers")

CANDIDATES = 500  # live rooms looked at for the featured game, besides those watched
RATED_LOOKUPS = 50  # equally watched rooms whose players' ratings are read, latest moved first


def now_ms() -> int:
    """The service's clock: wall time in ms (every process agrees: NTP)."""
    return time.time_ns() // 1_000_000


class Watching(Protocol):
    """An open socket, as counted (connection.py)."""

    @property
    def watching(self) -> str | None: ...  # the room it watches, if it is a spectator's


def process_name() -> str:
    """This process's name in the store: host, pid and a random part (a pid is reused)."""
    host = "".join(c if c.isalnum() or c in "_.-" else "-" for c in socket.gethostname())
    return f"{host[:64]}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class Watchers:
    """The process's spectator counts, written every ``period`` seconds, and everyone's read."""

    def __init__(
        self,
        backend: Backend,
        sockets: Iterable[Watching],
        period: float,
        clock: Callable[[], int] = now_ms,
    ) -> None:
        self.port = backend.watchers
        self.rooms = backend.rooms
        self.sockets = sockets
        self.period = period
        self.clock = clock
        self.name = process_name()
        self._written: dict[str, int] = {}
        self._totals: tuple[float, dict[str, int]] = (-1e9, {})
        self._featured: tuple[float, dict[str, Any] | None] = (-1e9, None)
        self._lock = asyncio.Lock()

    def local(self) -> dict[str, int]:
        """How many of this process's sockets watch each room."""
        return dict(Counter(room for s in self.sockets if (room := s.watching) is not None))

    async def write(self) -> None:
        """Write this process's counts (nothing when there were none and still are none)."""
        counts = self.local()
        if counts or self._written:
            ttl_ms = int(self.period * 3000)
            await self.port.put(self.name, counts, self.clock(), ttl_ms)
            self._written = counts

    async def run(self) -> None:
        """Every ``period`` seconds, ``write``; a failure is logged and the next one tries."""
        while True:
            try:
                await self.write()
            except Exception as error:  # a display figure: the next write makes it good
                log.warning("writing the spectator counts failed", extra={"error": repr(error)})
            await asyncio.sleep(self.period)

    async def stop(self) -> None:
        """Stop counting this process's sockets at once (they are closing)."""
        try:
            await self.port.put(self.name, {}, self.clock(), 0)
        except Exception as error:
            log.info("clearing the spectator counts failed", extra={"error": repr(error)})

    async def totals(self) -> dict[str, int]:
        """Each room's count over every process (a read kept ``period / 2`` seconds)."""
        at, totals = self._totals
        if time.monotonic() - at < self.period / 2:
            return totals
        async with self._lock:
            at, totals = self._totals
            if time.monotonic() - at >= self.period / 2:
                totals = await self.port.totals(self.clock())
                self._totals = (time.monotonic(), totals)
        return totals

    async def featured(self, lobby: Lobby) -> dict[str, Any] | None:
        """The featured live game's summary (see the module), or None without live games."""
        at, chosen = self._featured
        if time.monotonic() - at < self.period / 2:
            return chosen
        totals = await self.totals()
        listed = await self.rooms.rooms_by_status("live", limit=CANDIDATES)
        watched = [r for r in totals if r not in set(listed)]
        live = set(listed)
        if watched:  # watched rooms beyond the first listed: only those still live
            statuses = [await self.rooms.room_status(r) for r in watched]
            live.update(r for r, status in zip(watched, statuses, strict=True) if status == "live")
        summaries = await lobby.summaries(sorted(live), "live", totals)
        chosen = None
        if summaries:
            most = max(s["spectators"] for s in summaries)
            tied = [s for s in summaries if s["spectators"] == most]
            ratings = {}
            if len(tied) > 1:  # the ratings of the latest moved among them
                latest = sorted(tied, key=lambda s: s["moved_ms"], reverse=True)[:RATED_LOOKUPS]
                ratings = await lobby.players_rating([s["room"] for s in latest])
            chosen = max(
                tied,
                key=lambda s: (
                    ratings.get(s["room"], float("-inf")),
                    s["moved_ms"],
                    s["created_ms"],
                    s["room"],
                ),
            )
        self._featured = (time.monotonic(), chosen)
        return chosen
