"""Everything one server process runs, wired together, started and stopped as one.

Also the few use cases that span the parts: a full Random Setup room gets its setup drawn, a
finished game is marked finished in the lobby, a revocation closes the old token's sockets
in every process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from typing import Any, Protocol

from olympus.background import cancel
from olympus.rules import COMPILED, Faction, Phase
from olympus.rules.commands import DrawRandomSetup
from olympus.store import open_backend

from . import tokens, ws_protocol
from .accounts import AccountService
from .archiver import Archiver
from .clocks import Clocks
from .coach import Coach
from .fanout import Fanout
from .lobby import Lobby, Seated
from .loop_lag import LoopLag
from .metrics import REFRESH_SECONDS, ServiceMetrics
from .pairing import Pairing
from .passwords import Passwords
from .rater import Rater
from .registry import RoomRegistry
from .room import CommandRejected, RoomRuntime
from .settings import Settings
from .snapshots import Snapshotter
from .watchers import Watchers


class Socket(Protocol):
    """An open websocket as the process counts it (``connection.Connection``)."""

    @property
    def kind(self) -> str: ...  # "seat", "spectator", or "pending" before its hello

    @property
    def watching(self) -> str | None: ...  # the room a spectator's socket watches


log = logging.getLogger("olympus.server")

RANDOM_SETUP_ID = "sys:random-setup"
MOVED_SECONDS = 1.0  # how often the times of the rooms' last commands are written


class Services:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.metrics = ServiceMetrics()
        # The storage, chosen once from the settings' URL (store/wiring.py): every part below
        # knows it only through its ports (store/ports.py).
        self.backend = open_backend(settings.store_config())
        self.store = self.backend.events
        self.loop_lag = LoopLag()
        self.registry = RoomRegistry(self.store, settings, self.metrics)
        self.fanout = Fanout(self.backend, self.registry, self.metrics)
        self.clocks = Clocks(self.backend.deadlines, self.registry, settings, self.metrics)
        self.snapshotter = Snapshotter(self.store, settings.snapshot_every)
        archive = self.backend.archive
        self.archiver = (
            Archiver(self.backend, archive, settings, self.metrics) if archive is not None else None
        )
        self._archiving: asyncio.Task[None] | None = None
        self.passwords = Passwords()
        self.rater = (
            Rater(self.backend, settings, self.metrics)
            if self.backend.accounts is not None
            else None
        )
        self._rating: asyncio.Task[None] | None = None
        self.pairing: Pairing
        self._pairing: asyncio.Task[None] | None = None
        self.coach = Coach(
            self.backend, settings.coach_processes, settings.coach_queue, settings.coach_iterations
        )
        self.connections: set[Socket] = set()  # the open websockets (connection.py)
        self.watchers = Watchers(self.backend, self.connections, settings.watcher_seconds)
        self._watchers_writer: asyncio.Task[None] | None = None
        self.secret = b""
        self.lobby: Lobby
        self.accounts: AccountService
        self._janitor: asyncio.Task[None] | None = None
        self._moved_writer: asyncio.Task[None] | None = None
        self._gauges_writer: asyncio.Task[None] | None = None
        self.registry.load_hooks += [self.fanout.watch, self.clocks.on_load, self._on_load]
        self.registry.evict_hooks += [self.fanout.unwatch, self.clocks.on_evict]
        self.fanout.control_handlers.append(self._on_control)
        self._gauges()

    def _gauges(self) -> None:
        """The gauges, read from the process's state; with several workers, each merges over
        the live workers as its mode says (metrics.py)."""
        self.metrics.gauge(
            "olympus_compiled",
            "1 if the rules and the command path run compiled (in every worker), 0 if "
            "interpreted (slower).",
            lambda: {(): float(COMPILED)},
            mode="livemin",
        )
        self.metrics.gauge(
            "olympus_rooms_loaded",
            "Rooms held, summed over the workers.",
            lambda: {(): len(self.rooms)},
            mode="livesum",
        )
        self.metrics.gauge(
            "olympus_loop_lag_seconds",
            "How late the event loop runs what is ready: the overload of the most loaded worker.",
            lambda: {(): self.loop_lag.lag()},
            mode="livemax",
        )
        self.metrics.gauge(
            "olympus_connections",
            "Open websockets, by kind (seat, spectator, pending hello), summed over the workers.",
            lambda: {(k,): n for k, n in Counter(c.kind for c in self.connections).items()},
            ("kind",),
            mode="livesum",
        )
        self.metrics.registry.add(ws_protocol.REFUSED_TOTAL)

    @property
    def rooms(self) -> dict[str, RoomRuntime]:
        return self.registry.rooms

    @property
    def overloaded(self) -> bool:
        """Too busy to take a new game: the games under way wait for their turn."""
        return self.loop_lag.lag() > self.settings.overload_seconds

    async def start(self) -> None:
        self.secret = await tokens.shared_secret(self.backend.keys, self.settings.secret)
        self.lobby = Lobby(self.backend, self.secret, self.settings.seed_source)
        self.accounts = AccountService(self.backend, self.secret, self.passwords)
        self.pairing = Pairing(self.backend, self.lobby, self.fanout.broadcast, self._begin)
        self.fanout.control_handlers.append(self.pairing.on_control)
        await self.fanout.start()
        await self.clocks.start()
        await self.loop_lag.start()
        loop = asyncio.get_running_loop()
        self._janitor = loop.create_task(self._janitor_loop())
        self._moved_writer = loop.create_task(self._moved_loop())
        self._watchers_writer = loop.create_task(self.watchers.run())
        if self.archiver is not None:
            await self._migrate()
            self._archiving = loop.create_task(self.archiver.run())
        if self.rater is not None:
            self._rating = loop.create_task(self.rater.run())
            self._pairing = loop.create_task(self.pairing.run())
        self.metrics.registry.refresh()
        if self.metrics.shared:
            self._gauges_writer = loop.create_task(self._gauges_loop())

    async def stop(self) -> None:
        await cancel(
            self._janitor,
            self._moved_writer,
            self._watchers_writer,
            self._gauges_writer,
            self._archiving,
            self._rating,
            self._pairing,
        )
        self.passwords.close()
        await self.coach.stop()
        with contextlib.suppress(Exception):  # the last second's times, if the store is there
            await self.lobby.flush_moved()
        await self.watchers.stop()
        await self.loop_lag.stop()
        await self.clocks.stop()
        await self.fanout.stop()
        await self.snapshotter.stop()  # after whatever may still append
        await self.backend.aclose()

    async def _migrate(self) -> None:
        """The archive's schema brought up to date before the first request; if the archive
        cannot be reached now, the archiver's first pass does it (games go on meanwhile)."""
        assert self.archiver is not None
        try:
            await self.archiver.archive.migrate()
            self.archiver.migrated = True
        except Exception as error:
            log.warning("the archive's schema waits for the archive: %s", error)

    async def _janitor_loop(self) -> None:
        while True:
            await asyncio.sleep(max(1.0, self.settings.idle_seconds / 4))
            try:
                await self.registry.evict_idle()
            except Exception:
                log.exception("evicting idle rooms failed")

    async def _moved_loop(self) -> None:
        """Each second, the times of the rooms' last commands ("Your games")."""
        while True:
            await asyncio.sleep(MOVED_SECONDS)
            try:
                await self.lobby.flush_moved()
            except Exception:  # a display figure: the room's next command notes a new one
                log.exception("writing the times of the last moves failed")

    async def _gauges_loop(self) -> None:
        """With several workers: every ``REFRESH_SECONDS``, this process's gauges where the
        other workers' expositions read them (metrics.py)."""
        while True:
            await asyncio.sleep(REFRESH_SECONDS)
            try:
                self.metrics.registry.refresh()
            except Exception:
                log.exception("writing the gauges failed")

    # -- use cases --------------------------------------------------------------------------

    async def _on_load(self, runtime: RoomRuntime) -> None:
        runtime.append_listeners += [self._after_append, self.snapshotter.after_append]
        if runtime.over:
            if await self.backend.rooms.room_status(runtime.room_id) != "finished":
                await self._finished(runtime.room_id)  # its end was not recorded
        else:
            await self.start_random_setup(runtime)

    async def _begin(self, room: str) -> None:
        """A room made with both seats taken: its Random Setup, if any, drawn now."""
        await self.start_random_setup(await self.registry.get(room))

    async def start_random_setup(self, runtime: RoomRuntime) -> None:
        """R2 Random Setup: once both seats are taken, the service draws with a secret seed.

        Idempotent: the fixed command id makes a second draw (another process, a retry after a
        crash) a duplicate, whatever its seed.
        """
        state = runtime.state
        if state.phase is not Phase.SETUP or not state.options.random_setup:
            return
        if not await self.lobby.seats_full(runtime.room_id):
            return
        command = DrawRandomSetup(seed=self.settings.seed_source())
        try:
            await runtime.submit(command, RANDOM_SETUP_ID)
        except CommandRejected as rejected:  # already drawn by someone with a fresher state
            log.info("random setup refused", extra={"room": runtime.room_id, "code": rejected.code})

    async def _after_append(self, runtime: RoomRuntime, over: bool) -> None:
        self.lobby.moved(runtime.room_id)
        if over:
            await self._finished(runtime.room_id)

    async def _finished(self, room_id: str) -> None:
        """The game's end: queued for the ratings and the archive, then listed as finished
        (in this order, so that a room listed finished is queued)."""
        if self.rater is not None:
            await self.rater.queue_finished(room_id)
        if self.archiver is not None:
            await self.archiver.queue_finished(room_id)
        await self.backend.rooms.set_room_status(room_id, "finished")

    async def revoke(self, claim: tokens.SeatClaim) -> Seated:
        """New token for the seat; every socket on an older one is closed, in every process."""
        seated = await self.lobby.revoke(claim)
        await self.fanout.broadcast(
            {
                "kind": "revoke",
                "room": claim.room,
                "seat": claim.seat,
                "generation": seated.generation,
            }
        )
        return seated

    def _on_control(self, message: dict[str, Any]) -> None:
        if message.get("kind") == "revoke":
            runtime = self.rooms.get(message["room"])
            if runtime is not None and message["seat"] in ("olympians", "chthonians"):
                runtime.feed.revoke(Faction(message["seat"]), int(message["generation"]))
