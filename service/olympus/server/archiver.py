"""Finished games leave the live store for the archive (store/ports.py, ``Archive``), off the
command path, a grace period after their end (rematches and late spectators stay fast).

Each finished room is queued when the game ends (``queue``: due at its end plus
``archive_grace_seconds``). Every process runs an ``Archiver``; each pass takes the rooms that
are due, a batch at a time (``archive_concurrency`` of them at once), and moves each one in
three steps:

1. **copy**: the whole log, the meta and the seats are written to the archive with the
   game's summary, and read back: the kept log's event count and chain head must be the live
   log's (``Archive.put``);
2. **drop**: the room's live keys go (``EventLog.delete_room``), only after the copy checked;
3. **done**: the room leaves the queue.

A process killed at any step loses nothing and duplicates nothing: the room stays queued, a
pass of any process (after the claim's lease) finds it again, the copy is idempotent by room
id and chain head, and a copy found already kept skips to the drop. Reads meanwhile are
answered by whichever store holds the room (store/tiered.py). While the archive cannot be
reached, games go on: the pass stops and the next one tries again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from typing import Any

import msgpack

from olympus.rules import decode
from olympus.rules.events import GameEnded
from olympus.store import (
    Archive,
    ArchiveConflict,
    ArchivedGame,
    ArchivedHead,
    Backend,
    GameSummary,
    RoomNotFound,
    StoreUnavailable,
    chain_head,
)

from .lobby import SEATS, seat_names
from .metrics import Counter, ServiceMetrics
from .settings import Settings

log = logging.getLogger("olympus.server.archiver")

# Called after each step of a room's move with the step's name ("copied", "dropped", "done")
# and the room: what tests kill the process at.
StepHook = Callable[[str, str], None]


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def last_end(log: list[bytes]) -> GameEnded | None:
    """The log's last ``GameEnded`` (R11: the result and how it came), or None before the
    end; only the events from the end back to it are decoded."""
    return next((e for e in map(decode, reversed(log)) if isinstance(e, GameEnded)), None)


def summarize(room_id: str, meta: bytes, seats: dict[str, str], log: list[bytes]) -> GameSummary:
    """What the archive's game row says of a finished game, from its last ``GameEnded`` (R11:
    its result and how it came), the meta and the seats; ``ValueError`` if it is not over.
    Only the events from the end back to it are decoded."""
    ended = last_end(log)
    if ended is None:
        raise ValueError(f"room {room_id!r}: the game is not over")
    created: dict[str, Any] = msgpack.unpackb(meta)
    computer: dict[str, str] = created.get("computer", {})
    names = seat_names(seats)
    players = {
        seat: names[seat] or (f"computer:{computer[seat]}" if seat in computer else "")
        for seat in SEATS
    }
    started = int(created["created_ms"])
    return GameSummary(
        options=created["options"],
        players=players,
        result=ended.result,
        reason=ended.reason,
        started_ms=started,
        ended_ms=int(seats.get("moved_ms", started)),
    )


class Archiver:
    """Moves this deployment's finished rooms to ``backend.archive`` (see the module)."""

    def __init__(
        self,
        backend: Backend,
        archive: Archive,
        settings: Settings,
        metrics: ServiceMetrics,
        on_step: StepHook | None = None,
    ) -> None:
        self.backend = backend
        self.archive = archive
        self.settings = settings
        self.on_step = on_step
        self.queue = backend.archive_queue
        self.migrated = False
        self.behind_since_ms: int | None = None  # since when rooms past their grace wait
        self.moved = metrics.registry.add(
            Counter("olympus_archived_total", "Finished games moved to the archive.")
        )
        self.failures = metrics.registry.add(
            Counter(
                "olympus_archive_failures_total",
                "Moves to the archive that failed, by cause (unavailable, conflict, error).",
                ("cause",),
            )
        )
        metrics.gauge(
            "olympus_archive_lag_seconds",
            "How long finished rooms past their grace period have waited to move (0: none).",
            lambda: {(): self.lag_seconds()},
            mode="livemax",
        )

    def lag_seconds(self) -> float:
        since = self.behind_since_ms
        return 0.0 if since is None else max(0.0, (_now_ms() - since) / 1000)

    async def queue_finished(self, room_id: str) -> None:
        """Queue a room whose game has just ended, due after the grace period."""
        grace_ms = int(self.settings.archive_grace_seconds * 1000)
        await self.queue.set_due(room_id, _now_ms() + grace_ms)

    async def run(self) -> None:
        """Pass after pass, every ``archive_poll_seconds``, until cancelled."""
        while True:
            try:
                await self.pass_once()
            except StoreUnavailable as error:
                self.failures.inc("unavailable")
                log.warning("archiving waits: %s", error)
            except Exception:
                self.failures.inc("error")
                log.exception("an archiving pass failed")
            await asyncio.sleep(self.settings.archive_poll_seconds)

    async def pass_once(self) -> int:
        """Move the rooms due now, at most ``archive_batch``; return how many moved.
        ``StoreUnavailable`` when either store cannot be reached (the rest wait)."""
        if not self.migrated:
            await self.archive.migrate()
            self.migrated = True
        now = _now_ms()
        batch = self.settings.archive_batch
        due = (await self.queue.overdue(now, limit=batch))[:batch]
        if not due:
            self.behind_since_ms = None
            return 0
        if self.behind_since_ms is None:
            self.behind_since_ms = now
        lease = now + int(self.settings.archive_lease_seconds * 1000)
        lanes = asyncio.Semaphore(self.settings.archive_concurrency)

        async def claimed(room_id: str) -> bool:
            async with lanes:
                await self.queue.set_due(room_id, lease)  # others pass it by for a while
                try:
                    return await self.move(room_id)
                except StoreUnavailable:
                    with contextlib.suppress(StoreUnavailable):  # due again at once
                        await self.queue.set_due(room_id, now)
                    raise

        outcomes = await asyncio.gather(*map(claimed, due), return_exceptions=True)
        unavailable = None
        for room_id, outcome in zip(due, outcomes, strict=True):
            if isinstance(outcome, ArchiveConflict):
                self.failures.inc("conflict")
                log.error("not archived: %s", outcome, extra={"room": room_id})
            elif isinstance(outcome, StoreUnavailable):
                unavailable = outcome
            elif isinstance(outcome, BaseException):
                self.failures.inc("error")
                log.error("not archived", exc_info=outcome, extra={"room": room_id})
        if unavailable is not None:
            raise unavailable
        if len(due) < batch:  # all that was due has moved
            self.behind_since_ms = None
        return sum(outcome is True for outcome in outcomes)

    async def move(self, room_id: str) -> bool:
        """Move one room (see the module); True if this call dropped its live copy."""
        events = self.backend.events
        held = await self.archive.head(room_id)
        try:
            stored = await events.read(room_id, 0)  # the live copy while there is one
            epoch = await events.epoch(room_id)
        except RoomNotFound:
            await self._done(room_id)
            return False
        log_bytes = [e.data for e in stored]
        if held is None:
            meta = await events.room_meta(room_id)
            seats = await self.backend.seats.fields(room_id)
            try:
                summary = summarize(room_id, meta, seats, log_bytes)
            except ValueError:
                log.warning("queued but not over: left live", extra={"room": room_id})
                await self._done(room_id)
                return False
            game = ArchivedGame(room_id, epoch, meta, seats, log_bytes, summary)
            await self.archive.put(game)  # raises unless it keeps this very log
            self._step("copied", room_id)
        else:  # kept by an earlier pass: the same log?
            offered = ArchivedHead(len(log_bytes), chain_head(log_bytes))
            if held != offered:
                raise ArchiveConflict(room_id, held, offered)
        analysis = await self.backend.analyses.get(room_id)  # the live one, while it is there
        if analysis is not None:
            await self.archive.put_analysis(room_id, analysis)
        dropped = await events.delete_room(room_id)
        self._step("dropped", room_id)
        await self._done(room_id)
        if dropped:
            self.moved.inc()
        return dropped

    async def _done(self, room_id: str) -> None:
        await self.queue.set_due(room_id, None)
        self._step("done", room_id)

    def _step(self, step: str, room_id: str) -> None:
        if self.on_step is not None:
            self.on_step(step, room_id)
