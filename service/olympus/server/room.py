"""One room as a process holds it: the folded state, each audience's feed, its local sockets.

Redis holds the truth; this is a cache that can be rebuilt at any time from the room's log.
A command is decided against the cached state and appended with ``expected_version`` = the
cached version and the cache's chain (store), so a stale cache costs a retry, never a wrong
event (optimistic concurrency); a cache that holds events Redis lost costs a refusal and a
resync.

State = the fold of the room's log: of the whole log, or of the latest snapshot and the events
after it (snapshots.py). A room loaded from a snapshot holds neither the log nor the messages
before it; it reads and folds them again (``complete``) when they are needed: for the full log
at the game's end, for the HTTP log, for a resume from before the snapshot, and for the ``ack``
of a resent command applied before it. The numbering is the same either way, because a snapshot
carries each audience's message count.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from olympus.rules import (
    Command,
    Event,
    Faction,
    GameState,
    IllegalCommand,
    Phase,
    decode,
    evolve,
    execute_steps,
    list_legal,
    reads_time,
    removal_outcomes,
    setup_options,
    strength_terms,
    waiting_reason,
)
from olympus.rules.events import encode, encode_dict, stored_dict, to_dict
from olympus.rules.observation import observe_event, view
from olympus.store import (
    EventStore,
    EventsTrimmed,
    IdReused,
    LogDiverged,
    StoredEvent,
    VersionConflict,
    chain_next,
)

from . import protocol
from .feed import Feed
from .metrics import ServiceMetrics
from .protocol import Codec, Frame
from .settings import Settings
from .snapshots import RoomSnapshot

Audience = Faction | None
AUDIENCES: tuple[Audience, ...] = (Faction.OLYMPIANS, Faction.CHTHONIANS, None)

log = logging.getLogger("olympus.server.room")


def now_ms() -> int:
    """The service clock (R12): wall time in ms, so that every process agrees (NTP)."""
    return time.time_ns() // 1_000_000


class Subscriber(Protocol):
    """A local socket's end of a room (connection.py)."""

    audience: Audience
    codec: Codec
    sent_seq: int  # last message number queued to it
    generation: int  # its seat token's generation (0 for spectators)

    def push(self, frame: Frame) -> None: ...

    def close(self, code: int, reason: str) -> None: ...


# A failed catch-up (Redis unreachable, a failover) is tried again after this, doubling.
CATCH_UP_RETRY_SECONDS = 0.05
CATCH_UP_RETRY_MAX_SECONDS = 2.0


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
class NewEvent:
    """An event to fold: its version, the event and its encoding; for our own append's, also
    the state after it (``execute_steps``), its chain (the append's) and its ``to_dict``
    (``fields``, which ``data`` packs), which folding would otherwise compute again."""

    version: int
    event: Event
    data: bytes
    after: GameState | None = None
    chain: str | None = None
    fields: dict[str, Any] | None = None

    def __init__(
        self,
        version: int,
        event: Event,
        data: bytes,
        after: GameState | None = None,
        chain: str | None = None,
        fields: dict[str, Any] | None = None,
    ) -> None:
        """Spelled out, as ``GameState.__init__`` is and for its reason: one is made per
        event."""
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "event", event)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "after", after)
        object.__setattr__(self, "chain", chain)
        object.__setattr__(self, "fields", fields)


def _packed_view(
    new: NewEvent,
    data: dict[str, Any],
    message: protocol.Message,
    shown: list[tuple[protocol.Message, bytes]],
) -> bytes:
    """``message``, one audience's view of ``new`` (``data``: its fields; an audience shown
    the event as it is gets ``data`` itself), packed once per event: the bytes of an equal view
    packed before for another audience (``shown``, kept here), or those of the stored event
    when the view is the event as it is and ``new`` was packed from ``data`` (our own
    append's; an event read back may be of an older version).

    An event hidden from the opponent reads alike for the opponent and the spectator, and a
    Chthonian's such events come apart in ``AUDIENCES`` (Olympians, Chthonians, spectators):
    each view is compared with every one before it, not only the last, which packed a
    Chthonian's hidden moves twice (docs/performance.md, "Service")."""
    for seen, packed in shown:
        if message is seen or message == seen:
            return packed
    if new.fields is not None and (message is data or message == data):
        packed = new.data
    else:
        packed = protocol.pack(message)
    shown.append((message, packed))
    return packed


class HeldLog:
    """A room's log as stored: msgpack bytes, not Event objects (feed.py says why: memory and
    the garbage collector), each marked if this process encoded it (``encode`` of an event it
    decided: its own append's).

    Only the unredacted log at a game's end reads it. An entry encoded here is its event's
    ``to_dict`` as it is, so it is only unpacked, or for a msgpack ``game_over`` not even
    that (``packed``); any other is decoded, which upcasts an older version's shape. Decoding
    every event built each with its dataclass's interpreted ``__init__``: 2.7 % of a busy
    server's CPU (docs/performance.md)."""

    __slots__ = ("_data", "_here")

    def __init__(self) -> None:
        self._data: list[bytes] = []
        self._here = bytearray()  # 1: the entry was encoded here

    def append(self, data: bytes, encoded_here: bool) -> None:
        self._data.append(data)
        self._here.append(encoded_here)

    def unredacted(self) -> list[protocol.Message]:
        """Every event's ``to_dict``, in order."""
        return [
            stored_dict(data) if here else to_dict(decode(data))
            for data, here in zip(self._data, self._here, strict=True)
        ]

    def packed(self) -> list[bytes]:
        """Every event's ``to_dict`` in msgpack (``encode_dict``): an entry encoded here is
        those very bytes (``encode`` packs as the msgpack codec does), any other is decoded
        and packed anew."""
        return [
            data if here else encode(decode(data))
            for data, here in zip(self._data, self._here, strict=True)
        ]


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
    def __init__(
        self,
        room_id: str,
        epoch: int,
        store: EventStore,
        settings: Settings,
        metrics: ServiceMetrics,
    ) -> None:
        self.room_id = room_id
        self.epoch = epoch
        self.store = store
        self.settings = settings
        self.metrics = metrics
        self.state = GameState()
        # From ``base`` on: events 1..base are a snapshot's (0: the whole log is here).
        self.log = HeldLog()
        self.base = 0
        # ``chain_next`` over the events folded (from a snapshot's): names this history to the
        # store, which refuses appends and shows reads that do not continue it.
        self.chain = ""
        self.snapshot_version = 0  # the newest snapshot this process knows of (snapshots.py)
        self.rebuilds = 0  # times ``_reload`` found the log changed under the cache
        self._finishing: asyncio.Task[None] | None = None
        self.feeds: dict[Audience, Feed] = {a: Feed() for a in AUDIENCES}
        self.subscribers: set[Subscriber] = set()
        self.batch_listeners: list[BatchListener] = []
        self.append_listeners: list[AppendListener] = []
        self.rebuild_listeners: list[RebuildListener] = []
        # Serialises this process's reads and appends of the room (others are excluded by the
        # store's expected-version check, not by this lock).
        self.lock = asyncio.Lock()
        self.last_used = time.monotonic()
        self.gone = False
        self._legal_frames: dict[tuple[Faction, str], tuple[int, Frame]] = {}
        self._over_frames: dict[str, Frame] = {}
        # Both sides' strength terms as of a state, and encoded per codec (``_strength``).
        self._strength_of: tuple[GameState | None, dict[str, Any] | None, dict[str, Frame]] = (
            None,
            None,
            {},
        )
        self._dirty = False
        self._catch_up: asyncio.Task[None] | None = None
        self._hint_at = 0.0
        self._hinted = 0  # the newest version a hint announced
        # A (re)subscription: read the tail whatever the hints say, and check that the store
        # still has our last event (``_refresh``).
        self._resubscribed = False
        # Submits under way (waiting for the lock or appending): a hint that comes meanwhile is
        # looked at when they end (``_after_submits``), not by a catch-up task of its own.
        self._submitting = 0
        # Seat sockets owed a ``legal`` once their events are queued (and, after a command of
        # ours, its ``ack``): ``push_due``.
        self._legal_due: set[Subscriber] = set()
        self._over_due: set[Subscriber] = set()  # owed ``game_over`` (built from the whole log)

    @property
    def version(self) -> int:
        return self.state.version

    @property
    def over(self) -> bool:
        return self.state.phase is Phase.OVER

    def touch(self) -> None:
        self.last_used = time.monotonic()

    # -- folding ----------------------------------------------------------------------------

    def load(self, stored: list[StoredEvent]) -> None:
        """Fold the room's whole log (the registry's first read)."""
        self._fold([NewEvent(s.version, decode(s.data), s.data) for s in stored])

    def restore(self, snapshot: RoomSnapshot, tail: list[StoredEvent]) -> None:
        """Start from ``snapshot`` and fold the events after it (the registry's first read)."""
        self.state = snapshot.state
        self.feeds = {a: Feed(snapshot.seqs[a]) for a in AUDIENCES}
        self.base = self.snapshot_version = snapshot.state.version
        self.chain = snapshot.last
        self.load(tail)

    def snapshot(self) -> RoomSnapshot:
        """The room now, as a snapshot."""
        seqs = {a: self.feeds[a].seq for a in AUDIENCES}
        return RoomSnapshot(self.state, seqs, self.chain)

    async def complete(self) -> None:
        """Hold the whole log and every message again (a room restored from a snapshot).

        Reads the log up to the version held and folds it from the start: the same state and
        the same numbering, so the sockets notice nothing. If the fold is not the state, the
        numbering and the chain held, the log changed under the cache (Redis lost writes): the
        room is rebuilt as ``_reload`` does, sockets told to resync. If the log cannot be folded
        (a gap, an event that does not decode), the room stays as it was and the error is
        raised. A no-op for a room already whole. A game that is over gets its ``game_over``
        queued to every socket, now that the whole log is there.
        """
        async with self.lock:
            if not self.base:
                return
            stored = await self.store.read(self.room_id, 0, count=self.version)
            held = (self.state, self.log, self.base, self.feeds, self.chain)
            self.state, self.log, self.base, self.chain = GameState(), HeldLog(), 0, ""
            self.feeds = {a: Feed() for a in AUDIENCES}
            try:
                self.load(stored)
            except BaseException:  # (no await since the swap: nobody saw the half fold)
                self.state, self.log, self.base, self.feeds, self.chain = held
                raise
            same = (
                self.chain == held[4]
                and self.state == held[0]
                and all(self.feeds[a].seq == held[3][a].seq for a in AUDIENCES)
            )
            if not same:  # put back what the sockets were sent, then rebuild and resync
                self.state, self.log, self.base, self.feeds, self.chain = held
                await self._reload()
            elif self.over:
                self._over_due.update(self.subscribers)
                self.push_due()

    def _fold(self, numbered: list[NewEvent]) -> bool:
        """Fold new events into the state and every feed.

        False if nothing was new.
        """
        folded = False
        for new in numbered:
            version, event = new.version, new.event
            if version <= self.version:
                continue  # already folded (a hint raced our own append)
            if version != self.version + 1:
                raise RuntimeError(f"room {self.room_id}: gap before event {version}")
            before = self.state
            after = evolve(before, event) if new.after is None else new.after
            # Most events read alike for every audience: each view packed once, the bytes
            # shared (``_packed_view``).
            data = to_dict(event) if new.fields is None else new.fields
            shown: list[tuple[protocol.Message, bytes]] = []  # this event's views, packed
            for audience, feed in self.feeds.items():
                message = observe_event(event, audience, before, after, data)
                if message is not None:
                    feed.append(version, _packed_view(new, data, message, shown))
            self.log.append(new.data, encoded_here=new.after is not None)  # (an own append's)
            self.chain = chain_next(self.chain, new.data) if new.chain is None else new.chain
            self.state = after
            folded = True
        return folded

    def _apply(self, numbered: list[NewEvent], since: float) -> None:
        """Fold a batch, push it to the local sockets, tell the listeners. The seats' ``legal``
        frames go out at once, or (while a submit is under way: our own append's batch, or a
        read within it) when the last submit ends (``push_due``)."""
        was_over = self.over
        if not self._fold(numbered):
            return
        ended = not was_over and self.over
        for sub in list(self.subscribers):
            if self._push_new(sub) and sub.audience is not None:
                self._legal_due.add(sub)
            if ended and not self.base:
                self._over_due.add(sub)
        if ended and self.base:  # ``game_over`` carries the whole log: read it first
            self._finish_whole()
        self.metrics.fanout_seconds.observe(time.perf_counter() - since)
        self.push_due()
        for listener in self.batch_listeners:
            listener(self)

    # -- frames -----------------------------------------------------------------------------

    def _legal_frame(self, seat: Faction, codec: Codec) -> Frame:
        """The seat's ``legal`` frame now, cached per version and codec: its actions, its
        setup options, or why it has nothing to do.

        Only the encoded frame is kept, never the actions: they are thousands of objects per
        position, and kept until the room's next command they would outlive the young
        generations of the garbage collector and make its full collections frequent.
        """
        key = (seat, codec.name)
        cached = self._legal_frames.get(key)
        if cached is None or cached[0] != self.version:
            state = self.state
            listing = protocol.EncodedListing(codec)
            list_legal(listing, state, seat)
            listed = listing.entries
            setup = None if listed else setup_options(state, seat)
            waiting = None if listed or setup else waiting_reason(state, seat)
            # its actions (and strength) are encoded apart and spliced in, below
            message = protocol.legal(self.feeds[seat].seq, [], setup=setup, waiting=waiting)
            spliced = {"actions": codec.array(listed)}
            if (strength := self._strength(codec)) is not None:
                message["strength"] = None
                spliced["strength"] = strength
            if (outcomes := removal_outcomes(state, seat)) is not None:
                message["after_removal"] = outcomes
            cached = (self.version, codec.encode_with(message, spliced))
            self._legal_frames[key] = cached
        return cached[1]

    def _strength(self, codec: Codec) -> Frame | None:
        """Both sides' strength terms now, encoded (public: the same in both seats'
        ``legal``), computed once per state and encoded once per codec while they stay the
        same (the first side's commitment makes a new state, with the same terms); None out
        of a combat's commitments."""
        state, terms, encoded = self._strength_of
        if state is not self.state:
            now = strength_terms(self.state)
            if now != terms:
                terms, encoded = now, {}
            self._strength_of = (self.state, terms, encoded)
        if terms is None:
            return None
        frame = encoded.get(codec.name)
        if frame is None:
            frame = encoded[codec.name] = codec.encode(terms)
        return frame

    def full_log(self) -> list[protocol.Message]:
        """Every event unredacted (JSON-able); only ever sent once the game is over (R7).
        Of a whole room only (``complete``)."""
        return self._whole_log().unredacted()

    def _whole_log(self) -> HeldLog:
        if self.base:
            raise RuntimeError(f"room {self.room_id}: events 1..{self.base} are not held")
        return self.log

    def _over_frame(self, codec: Codec) -> Frame:
        """``game_over`` with ``full_log``, encoded once per codec. In msgpack its entries
        are the stored bytes (``HeldLog.packed``), not unpacked to be packed again: that was
        ~3M instructions at the end of a game of ~250 events, 5 % of the load bench's
        server (docs/performance.md)."""
        frame = self._over_frames.get(codec.name)
        if frame is None:
            result = self.state.result
            if codec.binary:
                log = codec.array(self._whole_log().packed())
                frame = codec.encode_with(protocol.game_over(result, []), {"log": log})
            else:
                frame = codec.encode(protocol.game_over(result, self.full_log()))
            self._over_frames[codec.name] = frame
        return frame

    def _push_new(self, sub: Subscriber) -> bool:
        """Queue the socket's new event frames; False if it had none."""
        feed = self.feeds[sub.audience]
        if feed.seq <= sub.sent_seq:
            return False
        for seq in range(sub.sent_seq + 1, feed.seq + 1):
            sub.push(feed.frame(sub.codec, seq))
        sub.sent_seq = feed.seq
        return True

    def _finish_whole(self) -> None:
        """The game is over in a room restored from a snapshot: read the whole log, which
        sends ``game_over`` (``complete``)."""
        if self._finishing is None or self._finishing.done():
            self._finishing = asyncio.get_running_loop().create_task(self._finish())

    async def _finish(self) -> None:
        try:
            await self.complete()
        except Exception as error:  # tried again when a socket (re)attaches
            extra = {"room": self.room_id, "error": repr(error)}
            log.warning("reading the whole log failed", extra=extra)

    def push_due(self) -> None:
        """Send ``legal`` (and ``game_over``) to the sockets owed one: after every batch
        folded, once its events are queued to every socket; while commands of ours are under
        way, once the last has ended (``submit`` calls this after its caller acknowledged it),
        so that a seat's ``legal`` never comes before the ``ack`` of its command, whichever
        batch (ours, a tail read, a duplicate's) brought the events.

        In the same turn of the event loop as the events, so that a seat's events and its
        next options leave in one write while the state they come from is still in the CPU's
        caches. What a player waits for is the next options: deferring ``legal`` to a queue
        would keep the events' latency lower under overload, but the options would come
        later, for more CPU per command (docs/performance.md).
        ``legal`` follows the events it is about on each socket, ``game_over`` the last
        event; either follows the ``ack``. A frame that fails to build is logged and the
        others go out: a bug in one room's listing must not fail a command already appended.
        """
        if self._submitting:
            return
        due, self._legal_due = self._legal_due, set()
        for sub in due:
            seat = sub.audience
            if sub not in self.subscribers or seat is None:
                continue
            if sub.sent_seq != self.feeds[seat].seq:
                continue  # not up to date: impossible after _push_new, but never a stale legal
            try:
                sub.push(self._legal_frame(seat, sub.codec))
            except Exception:
                log.exception("building a frame failed", extra={"room": self.room_id})
        over, self._over_due = self._over_due, set()
        for sub in over:
            if sub not in self.subscribers:
                continue
            try:
                sub.push(self._over_frame(sub.codec))
            except Exception:
                log.exception("building a frame failed", extra={"room": self.room_id})

    # -- sockets ----------------------------------------------------------------------------

    def _resumable(self, feed: Feed, last_seq: int | None, epoch: int | None) -> bool:
        """A resume token of this incarnation, not older than the resume window, not ahead."""
        return (
            epoch == self.epoch
            and last_seq is not None
            and 0 <= feed.seq - last_seq <= self.settings.resume_window
        )

    async def prepare_resume(
        self, audience: Audience, last_seq: int | None, epoch: int | None
    ) -> None:
        """Before ``attach``: read what a resume token needs that this process does not hold,
        so that the answer does not depend on the process a client reaches. Newer messages
        (a hint not heard yet: pub/sub lag, or pub/sub down after a Redis restart), or the
        messages before the snapshot the room was restored from (if that read fails, a fresh
        view instead)."""
        feed = self.feeds[audience]
        if epoch == self.epoch and last_seq is not None and last_seq > feed.seq:
            await self.catch_up()
        elif self._resumable(feed, last_seq, epoch) and (last_seq or 0) < feed.base:
            try:
                await self.complete()
            except Exception as error:
                extra = {"room": self.room_id, "error": repr(error)}
                log.warning("reading the whole log failed", extra=extra)

    async def seq_at(self, audience: Audience, version: int) -> int:
        """The audience's message number once events up to ``version`` are applied (an
        ``ack``'s): exact even for a version before the room's snapshot, whose messages are
        read first; if that read fails, the snapshot's number (the events are in by then)."""
        if version < self.base:
            try:
                await self.complete()
            except Exception as error:
                extra = {"room": self.room_id, "error": repr(error)}
                log.warning("reading the whole log failed", extra=extra)
        return self.feeds[audience].seq_at(version)

    def attach(self, sub: Subscriber, last_seq: int | None, epoch: int | None) -> bool:
        """Queue the hello's answer and subscribe ``sub``; True when it resumed.

        Nothing awaits between computing the backlog and subscribing, so no message can fall
        between them or come twice.
        """
        feed, codec = self.feeds[sub.audience], sub.codec
        resumed = self._resumable(feed, last_seq, epoch) and feed.base <= (last_seq or 0)
        seat = None if sub.audience is None else sub.audience.value
        sub.push(codec.encode(protocol.welcome(self.room_id, self.epoch, seat, feed.seq, resumed)))
        if resumed:
            assert last_seq is not None
            for seq in range(last_seq + 1, feed.seq + 1):
                sub.push(feed.frame(codec, seq))
        else:
            sub.push(codec.encode(protocol.view(feed.seq, view(self.state, sub.audience))))
        sub.sent_seq = feed.seq
        self._legal_due.discard(sub)
        if sub.audience is not None:
            sub.push(self._legal_frame(sub.audience, codec))
        if self.over and not self.base:
            sub.push(self._over_frame(codec))
        elif self.over:  # sent once the log is whole
            self._finish_whole()
        self.subscribers.add(sub)
        self.touch()
        return resumed

    def detach(self, sub: Subscriber) -> None:
        self.subscribers.discard(sub)
        self._legal_due.discard(sub)
        self._over_due.discard(sub)
        self.touch()

    def revoke(self, seat: Faction, generation: int) -> None:
        """Close the sockets of ``seat`` that hold a token older than ``generation``."""
        for sub in list(self.subscribers):
            if sub.audience is seat and sub.generation < generation:
                self.detach(sub)
                sub.close(protocol.CLOSE_REVOKED, "token_revoked")

    def close_all(self, code: int, reason: str) -> None:
        for sub in list(self.subscribers):
            self.detach(sub)
            sub.close(code, reason)

    # -- reading the store ------------------------------------------------------------------

    def request_catch_up(self, hinted: int | None = None) -> None:
        """Read what others appended (on a hint or a fresh subscription); coalesces bursts.

        ``hinted``: the version a hint announced. Already folded (our own append, usually):
        nothing to read. The payload only ever saves a read; it is never trusted for content.
        While submits are under way, looked at when they end (``_after_submits``).
        """
        if hinted is not None and hinted <= self.version:
            return
        if hinted is None:
            self._resubscribed = True
        else:
            self._hinted = max(self._hinted, hinted)
        if not self._dirty:
            self._hint_at = time.perf_counter()
        self._dirty = True
        if not self._submitting:
            self._start_catch_up()

    def _after_submits(self) -> None:
        """The hints that came while submits were under way, once none is: most often only our
        own append's, which its Redis sends before the append's reply, and which is folded by
        now. A catch-up task for it would take the lock only to find nothing to read (about
        2 % of the command path: docs/performance.md)."""
        if self._submitting or not self._dirty:
            return
        if self._hinted <= self.version and not self._resubscribed:
            self._dirty = False
        else:
            self._start_catch_up()

    def _start_catch_up(self) -> None:
        if self._catch_up is None or self._catch_up.done():
            self._catch_up = asyncio.get_running_loop().create_task(self._catch_up_loop())

    async def _catch_up_loop(self) -> None:
        backoff = CATCH_UP_RETRY_SECONDS
        while self._dirty and not self.gone:
            self._dirty = False
            since = self._hint_at
            try:
                async with self.lock:
                    # Folded meanwhile (by a submit, or an earlier read): nothing to read.
                    if self._resubscribed:  # maybe after a Redis restart, which may also
                        self._resubscribed = False  # have lost acknowledged writes
                        try:
                            await self._refresh(since)
                        except Exception:
                            self._resubscribed = True  # checked at the next hint instead
                            raise
                    elif self._hinted > self.version:
                        await self._read_tail(since)
            except Exception as error:  # never crash; read again soon: no other hint may come
                # (a seat of this process may be the one to act on what it could not read)
                log.warning("catch-up failed", extra={"room": self.room_id, "error": repr(error)})
                self._dirty = True
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, CATCH_UP_RETRY_MAX_SECONDS)

    async def catch_up(self) -> None:
        async with self.lock:
            await self._read_tail(time.perf_counter())

    async def _read_tail(self, since: float) -> bool:
        """Fold what others appended after our version; True if the state changed.

        The first new entry must continue our history: its chain (entries of writers that give
        one) is ``chain_next`` of ours. If not, Redis lost acknowledged writes and the room grew
        back another way, so the room is rebuilt from the store (``_reload``) instead of
        folding new events onto a history the log no longer has.
        """
        try:
            stored = await self.store.read(self.room_id, self.version)
        except EventsTrimmed:
            await self._reload()
            return True
        if not stored:
            return False
        first = stored[0]
        if first.chain and first.chain != chain_next(self.chain, first.data):
            await self._reload()
            return True
        self._apply([NewEvent(s.version, decode(s.data), s.data) for s in stored], since)
        return True

    async def _refresh(self, since: float) -> bool:
        """``_read_tail``, and when there is nothing new, check that the store still has our
        last event: it may be shorter than the cache, or as long with other events (Redis lost
        writes), which a tail read cannot see. On a refused command and on a (re)subscription
        (a Redis restart reconnects pub/sub), not on every hint: it costs a read."""
        if await self._read_tail(since):
            return True
        if not self.version:
            return False
        try:
            ours = await self.store.read(self.room_id, self.version - 1, count=1)
        except EventsTrimmed:  # trimmed up to a snapshot: nothing to compare with
            return False
        if not ours or (ours[0].chain and ours[0].chain != self.chain):
            await self._reload()
            return True
        return False

    async def _reload(self) -> None:
        """The log is not what we folded (Redis lost events): start again from the store.

        Sockets are closed with ``CLOSE_RESYNC`` so their clients reconnect and get a view; their
        message numbers may now name other messages.
        """
        log.warning("room log changed under the cache", extra={"room": self.room_id})
        self.rebuilds += 1
        stored = await self.store.read(self.room_id, 0)
        await self.store.drop_snapshot_if_ahead(self.room_id)  # one of the lost history
        self.close_all(protocol.CLOSE_RESYNC, "resync")
        self.state, self.log, self.base, self.snapshot_version = GameState(), HeldLog(), 0, 0
        self.chain = ""
        self.feeds = {a: Feed() for a in AUDIENCES}
        self._legal_frames.clear()
        self._over_frames.clear()
        self.load(stored)
        for listener in self.rebuild_listeners:
            await listener(self)

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
        (a socket queues its ``ack``). Then the seats get their ``legal`` (``push_due``).
        """
        self._submitting += 1
        try:
            result = await self._submit(command, command_id, digest)
            if acknowledge is not None:
                await acknowledge(result)
            return result
        finally:
            self._submitting -= 1
            self._after_submits()
            self.push_due()

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
                stamped = (  # R12: the clock now, where the rules read it
                    command.model_copy(update={"at_ms": now_ms()})
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
                        await self._read_tail(time.perf_counter())
                        result = Submitted(done.last, duplicate=True)
                        break
                    if await self._refresh(time.perf_counter()):
                        continue  # our state was stale: judge again on the fresh one
                    raise CommandRejected(illegal.code, illegal.sentence) from None
                result = await self._append(events, states, command_id, digest)
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
        self, events: list[Event], states: list[GameState], command_id: str, digest: str | None
    ) -> Submitted | None:
        """Append the decided ``events`` (``states``: the state after each) at our version."""
        expected = self.version
        fields = [to_dict(e) for e in events]
        encoded = [encode_dict(f) for f in fields]
        start = time.perf_counter()
        try:
            appended = await self.store.append(
                self.room_id, expected, encoded, command_id, self.chain, digest
            )
        except IdReused:
            raise _id_reused() from None
        except VersionConflict as conflict:
            self.metrics.conflicts.inc()
            if conflict.actual < expected:
                await self._reload()
            else:
                await self._read_tail(time.perf_counter())
            return None
        except LogDiverged:  # Redis lost writes and the room grew back: the cache is another
            self.metrics.conflicts.inc()  # history, never to be appended to
            await self._reload()
            return None
        finally:
            self.metrics.append_seconds.observe(time.perf_counter() - start)
        if appended.duplicate:
            await self._read_tail(time.perf_counter())
            return Submitted(appended.version, duplicate=True)
        first = appended.first_version
        numbered = [  # our chain was given: the append hashed each event's
            NewEvent(first + i, *new)
            for i, new in enumerate(
                zip(events, encoded, states, appended.chains, fields, strict=True)
            )
        ]
        self._apply(numbered, time.perf_counter())
        return Submitted(appended.version, duplicate=False)
