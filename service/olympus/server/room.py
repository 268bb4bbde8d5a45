"""One room as a process holds it, its command side: the folded state, deciding, appending.

Redis holds the truth; this is a cache that can be rebuilt at any time from the room's log.
A command is decided against the cached state and appended with ``expected_version`` = the
cached version and the cache's chain (store), so a stale cache costs a retry, never a wrong
event (optimistic concurrency); a cache that holds events Redis lost costs a refusal and a
resync.

State = the fold of the room's log: of the whole log, or of the latest snapshot and the events
after it (snapshots.py). What the room reads of its log besides its own appends: its
``reader`` (room_reads.py). What each audience is sent, numbered how, in which order, to which
sockets: its ``feed`` (room_feed.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from olympus.rules import (
    Command,
    Event,
    GameState,
    IllegalCommand,
    Phase,
    decode,
    evolve,
    execute_steps,
    reads_time,
)
from olympus.rules.events import encode_dict, to_dict
from olympus.store import (
    EventLog,
    IdReused,
    LogDiverged,
    StoredEvent,
    VersionConflict,
    chain_next,
)

from .commentary import Commentary
from .metrics import ServiceMetrics
from .protocol import Codec, Frame
from .room_feed import RoomFeed
from .room_log import HeldLog, NewEvent
from .room_reads import LogReader
from .settings import Settings
from .snapshots import RoomSnapshot


def now_ms() -> int:
    """The service clock (R12): wall time in ms, so that every process agrees (NTP)."""
    return time.time_ns() // 1_000_000


class CommandRejected(Exception):
    """The command produced nothing: a rules error code passes through unchanged."""

    def __init__(self, code: str, sentence: str) -> None:
        super().__init__(f"{code}: {sentence}")
        self.code = code
        self.sentence = sentence


def _id_reused() -> CommandRejected:
    """A command id applied before is a retry of the same command (a lost ack, a reconnect)
    or an id the seat used again for another command: that one is refused, never acknowledged
    as the old one (a client that restarted its id counter would lose its new moves)."""
    return CommandRejected(
        "id_reused", "This command id was used for another command: use a new id."
    )


@dataclass(frozen=True, slots=True)
class Submitted:
    """What ``submit`` did with a command."""

    version: int  # the room version once the command's events are in
    duplicate: bool  # the command id had been applied before: nothing new was appended

    def __init__(self, version: int, duplicate: bool) -> None:
        """Spelled out, as ``GameState.__init__`` is and for its reason: one per command."""
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "duplicate", duplicate)


# Called after each applied batch (sync, cheap: timers), after an own append (async: indexes),
# and after a rebuild, whose state is an older one than the cache had (async: both).
BatchListener = Callable[["RoomRuntime"], None]
Acknowledge = Callable[[Submitted], Awaitable[None]]  # ``submit``'s caller, before the frames
AppendListener = Callable[["RoomRuntime", bool], Awaitable[None]]
RebuildListener = Callable[["RoomRuntime"], Awaitable[None]]


class RoomRuntime:
    """One room: its folded state, the commands it takes, and (``feed``) its sockets."""

    def __init__(
        self,
        room_id: str,
        epoch: int,
        store: EventLog,
        settings: Settings,
        metrics: ServiceMetrics,
    ) -> None:
        self.room_id = room_id
        self.epoch = epoch
        self.store = store
        self.settings = settings
        self.metrics = metrics
        self.state = GameState()
        self.base = 0  # events 1..base are a snapshot's, not held (0: the whole log is here)
        # ``chain_next`` over the events folded (from a snapshot's): names this history to the
        # store, which refuses appends and shows reads that do not continue it.
        self.chain = ""
        self.snapshot_version = 0  # the newest snapshot this process knows of (snapshots.py)
        self.rebuilds = 0  # times ``reader.reload`` found the log changed under the cache
        self.feed = RoomFeed(self)
        self.batch_listeners: list[BatchListener] = []
        self.append_listeners: list[AppendListener] = []
        self.rebuild_listeners: list[RebuildListener] = []
        # Serialises this process's reads and appends of the room (others are excluded by the
        # store's expected-version check, not by this lock).
        self.lock = asyncio.Lock()
        self.last_used = time.monotonic()
        self.gone = False
        # Submits under way (waiting for the lock or appending): the frames an ``ack`` comes
        # before wait for them (room_feed.py), and so do hints (room_reads.py).
        self.submitting = 0
        self.reader = LogReader(self)
        self.commentary: Commentary | None = None  # made on first use (``commentary_stream``)

    @property
    def version(self) -> int:
        return self.state.version

    @property
    def log(self) -> HeldLog:
        """The events held, as stored (from ``base + 1``), with their times."""
        return self.feed.log

    def over_frame(self, codec: Codec) -> Frame:
        """``game_over`` with the whole log (of a whole room whose game is over)."""
        return self.feed.over_frame(codec)

    async def commentary_stream(self, delay_seconds: int) -> Commentary:
        """The room's commentary stream (commentary.py) with ``delay_seconds`` (the room's
        option: the caller read it), made on first use, once the whole log is held (a room
        restored from a snapshot reads the events before it first)."""
        if self.commentary is None:
            await self.reader.complete()
            if self.commentary is None:
                commentary = Commentary(self, delay_seconds * 1000)
                self.batch_listeners.append(commentary.on_batch)
                self.feed.followers.append(commentary)
                self.commentary = commentary
        return self.commentary

    @property
    def over(self) -> bool:
        return self.state.phase is Phase.OVER

    def touch(self) -> None:
        self.last_used = time.monotonic()

    # -- folding ----------------------------------------------------------------------------

    def load(self, stored: list[StoredEvent]) -> None:
        """Fold the room's whole log (the registry's first read)."""
        self._fold([NewEvent(s.version, decode(s.data), s.data, at_ms=s.at_ms) for s in stored])

    def restore(self, snapshot: RoomSnapshot, tail: list[StoredEvent]) -> None:
        """Start from ``snapshot`` and fold the events after it (the registry's first read)."""
        self.state = snapshot.state
        self.feed.reset(snapshot.seqs)
        self.base = self.snapshot_version = snapshot.state.version
        self.chain = snapshot.last
        self.load(tail)

    def snapshot(self) -> RoomSnapshot:
        """The room now, as a snapshot."""
        return RoomSnapshot(self.state, self.feed.seqs(), self.chain)

    def _fold(self, numbered: list[NewEvent]) -> bool:
        """Fold new events into the state and every audience's feed (``RoomFeed.add``); False
        if none was new. Raises ``RuntimeError`` on a gap before an event."""
        folded, feed = False, self.feed
        for new in numbered:
            version = new.version
            if version <= self.version:
                continue  # already folded (a hint raced our own append)
            if version != self.version + 1:
                raise RuntimeError(f"room {self.room_id}: gap before event {version}")
            before = self.state
            after = evolve(before, new.event) if new.after is None else new.after
            feed.add(new, before, after)
            self.chain = chain_next(self.chain, new.data) if new.chain is None else new.chain
            self.state = after
            folded = True
        return folded

    def apply(self, numbered: list[NewEvent], since: float) -> None:
        """Fold a batch (``since``: when its read or append began), queue it to the sockets
        (``RoomFeed.fan_out``), tell the batch listeners."""
        was_over = self.over
        if not self._fold(numbered):
            return
        self.feed.fan_out(not was_over and self.over, since)
        for listener in self.batch_listeners:
            listener(self)

    # -- deciding and appending -------------------------------------------------------------

    async def submit(
        self,
        command: Command,
        command_id: str,
        digest: str | None = None,
        acknowledge: Acknowledge | None = None,
    ) -> Submitted:
        """Decide ``command`` (its ``side`` already set) and append its events exactly once.

        ``command_id`` makes a retried command (a lost ack, a reconnect) a duplicate instead of
        a second application, acknowledged on the terms of a first one: under the store's
        ``Replicated``, only once replicas have its events (the store's append of it, or
        ``confirm`` when the cache already holds them and the command is judged anew). Given
        the command's ``digest`` (``protocol.digest``: a seat's command), an id already
        applied to another command is refused (``id_reused``) rather than acknowledged as a
        duplicate; the service's own commands (a timeout, the Random Setup draw) carry none,
        because processes racing to issue one draw their own seeds.
        Raises ``CommandRejected``: nothing was appended.

        ``acknowledge``: what the caller does with the result before anything else goes out
        (a socket queues its ``ack``). Then the seats get their ``legal`` (room_feed.py).
        """
        self.submitting += 1
        try:
            result = await self._submit(command, command_id, digest)
            if acknowledge is not None:
                await acknowledge(result)
            return result
        finally:
            self.submitting -= 1
            self.reader.after_submits()
            self.feed.push_due()

    async def _submit(self, command: Command, command_id: str, digest: str | None) -> Submitted:
        result: Submitted | None = None
        # Not ``async with``: its two interpreted coroutines cost more than the lock itself,
        # once per command; acquire and release are what they call.
        await self.lock.acquire()
        try:
            rebuilds = self.rebuilds
            for _ in range(self.settings.append_retries):
                if self.rebuilds != rebuilds:  # Redis lost writes the sender saw: deciding the
                    # command again on the true position would act for them on one they never
                    # saw. Refused; their sockets were told to resync.
                    sentence = "The game was rebuilt from the store: look again, then decide."
                    raise CommandRejected("resync", sentence)
                at_ms = now_ms()  # when the events are applied (kept with them), and
                stamped = (  # R12: the clock now, where the rules read it
                    command.model_copy(update={"at_ms": at_ms})
                    if reads_time(self.state, command)
                    else command
                )
                try:
                    events, states = execute_steps(self.state, stamped)
                except IllegalCommand as illegal:
                    done = await self.store.applied(self.room_id, command_id)
                    if done is not None:  # it was applied: a retry of it, or a reused id
                        if digest and done.digest and done.digest != digest:
                            raise _id_reused() from None
                        # Acknowledged on the terms of a first ack: under ``Replicated``, once
                        # replicas have it (``NotReplicated``: ``unavailable``, send it again).
                        done = await self.store.confirm(self.room_id, command_id, done)
                    if done is not None:
                        await self.reader.read_tail(time.perf_counter())
                        result = Submitted(done.last, duplicate=True)
                        break
                    if await self.reader.refresh(time.perf_counter()):
                        continue  # our state was stale: judge again on the fresh one
                    raise CommandRejected(illegal.code, illegal.sentence) from None
                result = await self._append(events, states, command_id, digest, at_ms)
                if result is not None:
                    break
        finally:
            self.lock.release()
        if result is None:
            raise CommandRejected("busy", "The room is busy; send the command again.")
        if not result.duplicate:
            for listener in self.append_listeners:
                await listener(self, self.over)
        return result

    async def _append(
        self,
        events: list[Event],
        states: list[GameState],
        command_id: str,
        digest: str | None,
        at_ms: int,
    ) -> Submitted | None:
        """Append the decided ``events`` (``states``: the state after each) at our version,
        applied at ``at_ms`` (the service's clock: kept with each event in the log)."""
        expected = self.version
        fields = [to_dict(e) for e in events]
        encoded = [encode_dict(f) for f in fields]
        start = time.perf_counter()
        try:
            appended = await self.store.append(
                self.room_id, expected, encoded, command_id, self.chain, digest, at_ms
            )
        except IdReused:
            raise _id_reused() from None
        except VersionConflict as conflict:
            self.metrics.conflicts.inc()
            if conflict.actual < expected:
                await self.reader.reload()
            else:
                await self.reader.read_tail(time.perf_counter())
            return None
        except LogDiverged:  # Redis lost writes and the room grew back: the cache is another
            self.metrics.conflicts.inc()  # history, never to be appended to
            await self.reader.reload()
            return None
        finally:
            self.metrics.append_seconds.observe(time.perf_counter() - start)
        if appended.duplicate:
            await self.reader.read_tail(time.perf_counter())
            return Submitted(appended.version, duplicate=True)
        first = appended.first_version
        numbered = [  # our chain was given: the append hashed each event's
            NewEvent(first + i, *new, at_ms)
            for i, new in enumerate(
                zip(events, encoded, states, appended.chains, fields, strict=True)
            )
        ]
        self.apply(numbered, time.perf_counter())
        return Submitted(appended.version, duplicate=False)
