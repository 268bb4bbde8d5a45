"""Clocks (R12): fire ``Timeout`` when a side misses its deadline, exactly once, in any process.

Deadlines live in the room's events (``ClockSet``), so a room's state says what is due. Two
mechanisms make sure someone acts on them:

- Timers: every process arms an asyncio timer for the earliest deadline of each room it holds
  and re-arms after every batch; on expiry it sends ``Timeout`` through the normal append path.
- The deadline index (store/ports.py, ``DeadlineIndex``: room → earliest due, ms), written
  after each own append. Every process polls it and loads rooms overdue by more than a grace
  period, so a deadline fires even when no process holds the room (both players gone: the very
  case clocks are for) and after every process restarted.

Several processes may fire the same deadline: the command id names the deadline, so the store
turns the second append into a duplicate; a process with a stale state gets ``no_deadline``
from the rules instead. Either way one Timeout lands.
"""

from __future__ import annotations

import asyncio
import logging
import secrets

from olympus.background import cancel
from olympus.rules.clocks import deadlines, earliest_due, has_clocks
from olympus.rules.commands import Timeout
from olympus.store import DeadlineIndex, RoomNotFound

from .metrics import ServiceMetrics
from .registry import RoomNotReady, RoomRegistry
from .room import CommandRejected, RoomRuntime, now_ms
from .settings import Settings

log = logging.getLogger("olympus.server.clocks")

EARLY_MARGIN_MS = 5  # fire a hair after the due time: timers and wall clock drift apart
RETRY_SECONDS = 0.5  # after a refused timeout whose deadline still stands


class Clocks:
    def __init__(
        self,
        index: DeadlineIndex,
        registry: RoomRegistry,
        settings: Settings,
        metrics: ServiceMetrics,
    ) -> None:
        self.deadline_index = index
        self.registry = registry
        self.settings = settings
        self.metrics = metrics
        self._timers: dict[str, tuple[RoomRuntime, asyncio.TimerHandle]] = {}  # by room id
        self._tasks: set[asyncio.Task[None]] = set()
        self._sweeper: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._sweeper = asyncio.get_running_loop().create_task(self._sweep_loop())

    async def stop(self) -> None:
        for _, handle in self._timers.values():
            handle.cancel()
        self._timers.clear()
        await cancel(*self._tasks, self._sweeper)

    # -- registry hooks ---------------------------------------------------------------------

    async def on_load(self, runtime: RoomRuntime) -> None:
        runtime.batch_listeners.append(self.arm)
        runtime.append_listeners.append(self._after_append)
        runtime.rebuild_listeners.append(self._after_rebuild)
        self.arm(runtime)
        if has_clocks(runtime.state.options):
            await self.index(runtime)  # repairs an entry lost to a crash after an append

    async def on_evict(self, runtime: RoomRuntime) -> None:
        self.disarm(runtime)

    async def _after_append(self, runtime: RoomRuntime, over: bool) -> None:
        if has_clocks(runtime.state.options):
            await self.index(runtime)

    async def _after_rebuild(self, runtime: RoomRuntime) -> None:
        """Redis lost writes and the room was rebuilt from an older position: its deadline
        comes before the lost one that the timer and the index hold. Both are set again, or
        a missed turn would be fired when the lost position's deadline passes."""
        self.arm(runtime)
        if has_clocks(runtime.state.options):
            try:
                await self.index(runtime)
            except Exception as error:  # written again after the next append, or swept
                log.warning("deadline index", extra={"room": runtime.room_id, "error": repr(error)})

    # -- timers -----------------------------------------------------------------------------

    def arm(self, runtime: RoomRuntime, delay: float | None = None) -> None:
        self.disarm(runtime)
        due = earliest_due(runtime.state)
        if due is None or runtime.gone:
            return
        if delay is None:
            delay = max(0.0, (due + EARLY_MARGIN_MS - now_ms()) / 1000)
        loop = asyncio.get_running_loop()
        self._timers[runtime.room_id] = (runtime, loop.call_later(delay, self._spawn, runtime))

    def disarm(self, runtime: RoomRuntime) -> None:
        if (handle := self._take(runtime)) is not None:
            handle.cancel()

    def _take(self, runtime: RoomRuntime) -> asyncio.TimerHandle | None:
        """Forget the runtime's timer, if the room's timer is its own: an evicted runtime (a
        submit on it may still rebuild it) must not touch the timer of the room's newer one."""
        held = self._timers.get(runtime.room_id)
        if held is None or held[0] is not runtime:
            return None
        del self._timers[runtime.room_id]
        return held[1]

    def _spawn(self, runtime: RoomRuntime) -> None:
        self._take(runtime)
        task = asyncio.get_running_loop().create_task(self.fire(runtime))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def fire(self, runtime: RoomRuntime) -> None:
        """Send ``Timeout`` for every expired deadline of the room."""
        refused = False
        now = now_ms()
        for side, kind, due in deadlines(runtime.state):
            if due > now or runtime.over:
                continue
            fields = {"room": runtime.room_id, "side": side.value, "kind": kind, "due": due}
            try:
                result = await runtime.submit(
                    Timeout(side=side, seed=secrets.randbits(62)),
                    f"sys:timeout:{side.value}:{kind}:{due}",
                )
            except CommandRejected as rejected:
                refused = True  # another process was first (no_deadline), or clock skew
                self.metrics.timeouts.inc(rejected.code)
                log.info("timeout refused", extra={**fields, "code": rejected.code})
                continue
            except Exception as error:
                refused = True
                self.metrics.timeouts.inc("error")
                log.warning("timeout failed", extra={**fields, "error": repr(error)})
                continue
            self.metrics.timeouts.inc("duplicate" if result.duplicate else "fired")
            log.info("deadline missed", extra={**fields, "version": result.version})
        next_due = earliest_due(runtime.state)
        # A deadline that is still due after a refusal must not spin: retry a little later.
        late = refused and next_due is not None and next_due <= now_ms()
        self.arm(runtime, RETRY_SECONDS if late else None)

    # -- the deadline index -----------------------------------------------------------------

    async def index(self, runtime: RoomRuntime) -> None:
        await self.deadline_index.set_due(runtime.room_id, earliest_due(runtime.state))

    async def _sweep_loop(self) -> None:
        while True:
            await asyncio.sleep(self.settings.deadline_poll_seconds)
            try:
                await self.sweep()
            except asyncio.CancelledError:
                raise
            except Exception as error:
                log.warning("deadline sweep failed", extra={"error": repr(error)})

    async def sweep(self) -> None:
        """Take care of rooms overdue in the index: load them, or refresh those we hold."""
        limit = now_ms() - self.settings.deadline_grace_ms
        for room_id in await self.deadline_index.overdue(limit):
            await self._overdue(room_id)

    async def _overdue(self, room_id: str) -> None:
        """A room overdue in the index: load it, or refresh it if we hold it."""
        held = self.registry.rooms.get(room_id)
        try:
            runtime = held or await self.registry.get(room_id)  # load: arms and indexes
        except (RoomNotFound, RoomNotReady):
            await self.deadline_index.set_due(room_id, None)
            return
        if held is not None:  # our timer should have fired: the cache or index is stale
            await runtime.reader.catch_up()
            await self.index(runtime)
            self.arm(runtime)
