"""The coach's side of the service: analyses of finished games and hints, searched off the
command path in a pool of processes of its own (docs/bots.md, "The coach").

The search is CPU-heavy, so it never runs on the event loop: each job goes to a small process
pool (``Settings.coach_processes``, at idle priority like the computer's worker), started on the
first job. The jobs are bounded: at most ``Settings.coach_queue`` analyses and as many hints
wait or run in a process at once; past that the caller is told ``busy`` (try again later).

- **An analysis** is made once per game: asked for a finished game, the one kept in the store
  (the ``Analyses`` port) is served; else one is started (unless this process is making it
  already) and the caller told it is pending. Another process asked at the same moment may
  make it too; both make the same (it is deterministic, seeded by the room) and the first kept
  wins.
- **A hint** is the search's move for the asking seat, from that seat's view, in a game against
  the computer only (the person's seat); the room's seats record that the seat used hints
  (``hints:<seat>``), shown in the room's summary.
"""

from __future__ import annotations

import asyncio
import json
import logging
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from olympus.bot.analysis import ANALYSIS_BUDGET, HINT_BUDGET, analyse, hint
from olympus.bot.search import Budget
from olympus.lifetime import idle_priority
from olympus.rules import Faction
from olympus.rules import events as ev

from .lobby import SEATS, LobbyError

if TYPE_CHECKING:
    from olympus.store import Backend

    from .room import RoomRuntime

log = logging.getLogger("olympus.server.coach")

HINT_SECONDS = 30.0  # a hint that takes longer (a pool stuck behind analyses) is given up


class CoachBusy(Exception):
    """Too many analyses or hints are waiting now."""


def _budget(default: Budget, iterations: int | None) -> Budget:
    return default if iterations is None else replace(default, iterations=iterations)


def analyse_log(log_dicts: list[dict[str, Any]], seed: str, iterations: int | None) -> bytes:
    """(In a pool process.) The analysis of a game's unredacted log, as kept: JSON."""
    events = [ev.from_dict(d) for d in log_dicts]
    found = analyse(events, seed, _budget(ANALYSIS_BUDGET, iterations))
    return json.dumps(found, separators=(",", ":")).encode()


def hint_for(
    log_dicts: list[dict[str, Any]], seat: str, seed: str, iterations: int | None
) -> dict[str, Any] | None:
    """(In a pool process.) The seat's hint at the end of the log."""
    events = [ev.from_dict(d) for d in log_dicts]
    return hint(events, Faction(seat), seed, _budget(HINT_BUDGET, iterations))


def room_seed(runtime: RoomRuntime) -> str:
    return f"{runtime.room_id}:{runtime.epoch}"


def hints_allowed(meta: dict[str, Any], seat: str) -> bool:
    """Hints are for a person playing the computer: the other seat is the computer's, this one
    is not (never between two people, never for the computer's own seat)."""
    computer = meta.get("computer") or {}
    return seat in SEATS and seat not in computer and len(computer) == 1


class Coach:
    def __init__(
        self, backend: Backend, processes: int, queue: int, iterations: int | None = None
    ) -> None:
        self.backend = backend
        self.iterations = iterations
        self.processes = processes
        self.queue = queue
        self._pool: ProcessPoolExecutor | None = None
        self._analysing: dict[str, asyncio.Task[None]] = {}
        self._hints = 0

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            context = multiprocessing.get_context("spawn")  # never fork an event loop
            self._pool = ProcessPoolExecutor(self.processes, context, initializer=idle_priority)
        return self._pool

    async def analysis(self, runtime: RoomRuntime) -> bytes | None:
        """The finished game's analysis as kept, or None while it is being made (started now
        if it was not). ``CoachBusy`` when too many are being made."""
        room = runtime.room_id
        kept = await self.backend.analyses.get(room)
        if kept is not None:
            return kept
        if room in self._analysing:
            return None
        if len(self._analysing) >= self.queue:
            raise CoachBusy(room)
        await runtime.reader.complete()
        log_dicts = runtime.feed.full_log()
        self._analysing[room] = asyncio.create_task(
            self._analyse(room, log_dicts, room_seed(runtime))
        )
        return None

    async def _analyse(self, room: str, log_dicts: list[dict[str, Any]], seed: str) -> None:
        try:
            loop = asyncio.get_running_loop()
            data = await loop.run_in_executor(
                self._executor(), analyse_log, log_dicts, seed, self.iterations
            )
            await self.backend.analyses.put(room, data)
        except Exception:  # logged; asked again, it is started again
            log.exception("analysis failed", extra={"room": room})
        finally:
            self._analysing.pop(room, None)

    async def pending(self, room: str) -> None:
        """Wait for this process's analysis of ``room``, if one runs (tests)."""
        task = self._analysing.get(room)
        if task is not None:
            await asyncio.shield(task)

    async def hint(self, runtime: RoomRuntime, seat: str, meta: dict[str, Any]) -> dict[str, Any]:
        """The seat's hint now; ``LobbyError`` where hints are not allowed or not possible."""
        if not hints_allowed(meta, seat):
            sentence = "Hints are given only in a game against the computer."
            raise LobbyError(403, "hints_not_allowed", sentence)
        if runtime.over:
            raise LobbyError(409, "game_over", "The game is over.")
        if self._hints >= self.queue:
            raise CoachBusy(runtime.room_id)
        self._hints += 1
        try:
            await runtime.reader.complete()
            log_dicts = runtime.feed.full_log()
            loop = asyncio.get_running_loop()
            job = loop.run_in_executor(
                self._executor(), hint_for, log_dicts, seat, room_seed(runtime), self.iterations
            )
            found = await asyncio.wait_for(job, HINT_SECONDS)
        finally:
            self._hints -= 1
        if found is None:
            raise LobbyError(409, "nothing_to_hint", "The seat has nothing to choose now.")
        await self.backend.seats.set_once(runtime.room_id, f"hints:{seat}", "1")
        return {**found, "seq": len(log_dicts)}

    async def stop(self) -> None:
        for task in self._analysing.values():
            task.cancel()
        await asyncio.gather(*self._analysing.values(), return_exceptions=True)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
