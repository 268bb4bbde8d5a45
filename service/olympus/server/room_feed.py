"""The feed side of a room (``RoomRuntime.feed``): what each audience is sent, to which sockets.

Numbering. Every audience (each seat, and the spectators) has its own messages, numbered 1, 2,
3… without gaps (feed.py): each event the room folds, mapped through ``observe_event`` for the
audience, when it shows it anything. The numbering is a pure function of the log (a snapshot
carries each audience's count), so it is the same in every process, whichever process folded
an event; an ``ack``'s ``seq`` is the commanding seat's number of the command's last event.

Order. What a socket is sent leaves in the order it is queued (``Subscriber.push``):

- ``welcome`` first; then the missed events (a resume) or a ``view`` as of the audience's
  newest message; then, to a seat, its ``legal``; then ``game_over`` if the game is over.
  Nothing is awaited between that backlog and the subscription: no message falls between
  them or comes twice.
- each event once, in the audience's numbering: a socket is queued the messages after its
  ``sent_seq`` up to the newest, once its batch is folded.
- a command's events, then its ``ack``, then the next ``legal`` (and ``game_over``): while a
  submit of this process is under way (``RoomRuntime.submitting``), ``legal`` and ``game_over``
  wait; when the last one ends, after its caller queued the ``ack`` (``submit``'s
  ``acknowledge``), they go out, whichever batch brought the events (the command's own
  append, a tail read, a duplicate's).
- a ``legal`` is about its seat's newest message (its ``seq``) and follows it: a socket gets
  one only once it has been queued every event. ``game_over`` follows the last event; a room
  restored from a snapshot sends it once it has read the whole log again (``complete``).
- ``legal`` goes out in the same turn of the event loop as the events it follows (unless a
  submit is under way), so that both usually leave in one write, while the state they come
  from is still in the CPU's caches: what a player waits for is the next options, and a queue
  of ``legal`` frames would keep the events' latency lower under overload but the options
  later, for more CPU per command (docs/performance.md).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Set
from typing import Any, Protocol

from olympus.rules import (
    Faction,
    GameState,
    IllegalCommand,
    further_steps,
    list_legal,
    may_abort,
    may_resign,
    removal_outcomes,
    setup_options,
    strength_terms,
    waiting_reason,
)
from olympus.rules.commands import Move
from olympus.rules.events import to_dict
from olympus.rules.observation import observe_event, view

from . import protocol
from .feed import Feed
from .frames import frame
from .protocol import Codec, Frame, ProtocolError
from .room_log import HeldLog, NewEvent, packed_view
from .room_parts import Audience, FeedRoom

AUDIENCES: tuple[Audience, ...] = (Faction.OLYMPIANS, Faction.CHTHONIANS, None)

log = logging.getLogger("olympus.server.room")  # the room's, as room.py's


class Subscriber(Protocol):
    """A local socket's end of a room (connection.py)."""

    audience: Audience
    codec: Codec
    sent_seq: int  # last message number queued to it
    generation: int  # its seat token's generation (0 for spectators)

    def push(self, frame: Frame) -> None: ...

    def deliver(self, wire: bytes, frames: list[Frame], seq: int) -> None:
        """Send ``frames``, the socket's event messages up to ``seq`` (its new ``sent_seq``),
        in order after what was pushed before; ``wire``: them as one websocket frame, the
        same bytes for every socket of the audience and codec that had the same ``sent_seq``
        (``frames.frame(codec.batch(frames))``)."""
        ...

    def close(self, code: int, reason: str) -> None: ...


class Follower(Protocol):
    """Another stream of the room, with sockets of its own (``Commentary``)."""

    @property
    def subscribers(self) -> Set[object]: ...

    def close_all(self, code: int, reason: str) -> None: ...


class RoomFeed:
    """Each audience's numbered messages of ``room``, its frames, and its local sockets."""

    def __init__(self, room: FeedRoom) -> None:
        self.room = room
        self.feeds: dict[Audience, Feed] = {a: Feed() for a in AUDIENCES}
        self.log = HeldLog()  # the events after ``room.base``, as stored
        self.subscribers: set[Subscriber] = set()
        # Other streams of the room with sockets of their own (commentary.py): closed with
        # the room's (``close_all``), and keeping it held while they have any (``watched``).
        self.followers: list[Follower] = []
        self._legal_frames: dict[tuple[Faction, str], tuple[int, Frame]] = {}
        self._over_frames: dict[str, Frame] = {}
        self._view_frames: dict[tuple[Audience, str], tuple[GameState, Frame]] = {}
        # Both sides' strength terms as of a state, and encoded per codec (``_strength``).
        self._strength_of: tuple[GameState | None, dict[str, Any] | None, dict[str, Frame]] = (
            None,
            None,
            {},
        )
        # Seat sockets owed a ``legal`` once their events are queued (and, after a command of
        # ours, its ``ack``), and sockets owed ``game_over`` (built from the whole log).
        self._legal_due: set[Subscriber] = set()
        self._over_due: set[Subscriber] = set()
        self._finishing: asyncio.Task[None] | None = None

    def reset(self, seqs: dict[Audience, int] | None = None) -> None:
        """Hold no message and no event: each audience numbered from 0, or from ``seqs`` (a
        snapshot's counts); no frame cached. The sockets stay."""
        self.feeds = {a: Feed(0 if seqs is None else seqs[a]) for a in AUDIENCES}
        self.log = HeldLog()
        self._legal_frames.clear()
        self._over_frames.clear()
        self._view_frames.clear()

    def seqs(self) -> dict[Audience, int]:
        """Each audience's last message number."""
        return {a: self.feeds[a].seq for a in AUDIENCES}

    def add(self, new: NewEvent, before: GameState, after: GameState) -> None:
        """Number ``new`` (folded from ``before`` to ``after``) in each audience it shows
        something to, and hold it in the log. Each view is packed once, the bytes shared by
        the audiences that read it alike (``packed_view``)."""
        data = to_dict(new.event) if new.fields is None else new.fields
        shown: list[tuple[protocol.Message, bytes]] = []
        for audience, feed in self.feeds.items():
            message = observe_event(new.event, audience, before, after, data)
            if message is not None:
                feed.append(new.version, packed_view(new, data, message, shown))
        self.log.append(new.data, new.after is not None, new.at_ms)  # (here: an own append's)

    def fan_out(self, ended: bool, since: float) -> None:
        """Queue a folded batch (``since``: when it began) to every socket, then what it makes
        due (``push_due``). ``ended``: the batch ended the game.

        The seats' frames are queued (their ``ack`` and ``legal`` join them in one write);
        the spectators', who get nothing else, are built once per codec and position in the
        feed into one websocket frame whose bytes go to every such socket (``deliver``)."""
        room = self.room
        watching: dict[tuple[Codec, int], list[Subscriber]] = {}
        for sub in list(self.subscribers):
            if sub.audience is None:
                watching.setdefault((sub.codec, sub.sent_seq), []).append(sub)
            elif self._push_new(sub):
                self._legal_due.add(sub)
            if ended and not room.base:
                self._over_due.add(sub)
        feed = self.feeds[None]
        for (codec, sent), subs in watching.items():
            if sent < feed.seq:
                frames = [feed.frame(codec, seq) for seq in range(sent + 1, feed.seq + 1)]
                wire = frame(codec.batch(frames))
                for sub in subs:
                    sub.deliver(wire, frames, feed.seq)
        if ended and room.base:  # ``game_over`` carries the whole log: read it first
            self._finish_whole()
        room.metrics.fanout_seconds.observe(time.perf_counter() - since)
        self.push_due()

    def over_due(self) -> None:
        """Send ``game_over`` to every socket (the room's whole log is held now)."""
        self._over_due.update(self.subscribers)
        self.push_due()

    def push_due(self) -> None:
        """Send the ``legal`` and ``game_over`` frames owed, unless a submit is under way (then
        the last to end calls this: "Order", above). A frame that fails to build is logged and
        the others go out: a bug in one room's listing must not fail a command already
        appended."""
        if self.room.submitting:
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
                log.exception("building a frame failed", extra={"room": self.room.room_id})
        over, self._over_due = self._over_due, set()
        for sub in over:
            if sub not in self.subscribers:
                continue
            try:
                sub.push(self._over_frame(sub.codec))
            except Exception:
                log.exception("building a frame failed", extra={"room": self.room.room_id})

    def _push_new(self, sub: Subscriber) -> bool:
        """Queue the socket's new event frames; False if it had none."""
        feed = self.feeds[sub.audience]
        if feed.seq <= sub.sent_seq:
            return False
        for seq in range(sub.sent_seq + 1, feed.seq + 1):
            sub.push(feed.frame(sub.codec, seq))
        sub.sent_seq = feed.seq
        return True

    # -- frames -----------------------------------------------------------------------------

    def _legal_frame(self, seat: Faction, codec: Codec) -> Frame:
        """The seat's ``legal`` frame now, cached per version and codec: its actions, its
        setup options, or why it has nothing to do; whether it may resign or abort.

        Only the encoded frame is kept, never the actions: they are thousands of objects per
        position, and kept until the room's next command they would outlive the young
        generations of the garbage collector and make its full collections frequent.
        """
        key, state = (seat, codec.name), self.room.state
        cached = self._legal_frames.get(key)
        if cached is None or cached[0] != state.version:
            listing = protocol.EncodedListing(codec)
            list_legal(listing, state, seat)
            listed = listing.entries
            setup = None if listed else setup_options(state, seat)
            waiting = None if listed or setup else waiting_reason(state, seat)
            # its actions (and strength) are encoded apart and spliced in, below
            message = protocol.legal(
                self.feeds[seat].seq,
                [],
                setup=setup,
                waiting=waiting,
                can_resign=may_resign(state),
                can_abort=may_abort(state),
            )
            spliced = {"actions": codec.array(listed)}
            if (strength := self._strength(state, codec)) is not None:
                message["strength"] = None
                spliced["strength"] = strength
            if (outcomes := removal_outcomes(state, seat)) is not None:
                message["after_removal"] = outcomes
            cached = (state.version, codec.encode_with(message, spliced))
            self._legal_frames[key] = cached
        return cached[1]

    def steps(self, seat: Faction, request_id: str, walk: Move) -> protocol.Message:
        """The ``steps`` answer to ``seat``'s request ``request_id``: Hermes' next steps after
        ``walk`` (its side the seat's) in the room's position now, that of the seat's newest
        message, priced by the rules (``rules.further_steps``: made of what the seat knows,
        R7); ``ProtocolError`` with the rules' code where they refuse the walk."""
        try:
            actions = further_steps(self.room.state, walk)
        except IllegalCommand as refused:
            raise ProtocolError(refused.code, refused.sentence) from None
        return protocol.steps(request_id, self.feeds[seat].seq, actions)

    def _view_frame(self, audience: Audience, codec: Codec) -> Frame:
        """The audience's ``view`` as of its newest message, encoded once per state and codec
        (a crowd of spectators arriving at once costs one encoding)."""
        key, state = (audience, codec.name), self.room.state
        cached = self._view_frames.get(key)
        if cached is None or cached[0] is not state:
            seq = self.feeds[audience].seq
            cached = (state, codec.encode(protocol.view(seq, view(state, audience))))
            self._view_frames[key] = cached
        return cached[1]

    def _strength(self, now: GameState, codec: Codec) -> Frame | None:
        """Both sides' strength terms in ``now``, encoded (public: the same in both seats'
        ``legal``), computed once per state and encoded once per codec while they stay the
        same (the first side's commitment makes a new state, with the same terms); None out
        of a combat's commitments."""
        state, terms, encoded = self._strength_of
        if state is not now:
            latest = strength_terms(now)
            if latest != terms:
                terms, encoded = latest, {}
            self._strength_of = (now, terms, encoded)
        if terms is None:
            return None
        frame = encoded.get(codec.name)
        if frame is None:
            frame = encoded[codec.name] = codec.encode(terms)
        return frame

    def full_log(self) -> list[protocol.Message]:
        """Every event unredacted (JSON-able); only ever sent once the game is over (R7).
        Of a whole room only (``RoomRuntime.complete``); raises ``RuntimeError`` otherwise."""
        return self._whole_log().unredacted()

    def _whole_log(self) -> HeldLog:
        if self.room.base:
            raise RuntimeError(f"room {self.room.room_id}: events 1..{self.room.base} not held")
        return self.log

    def over_frame(self, codec: Codec) -> Frame:
        """``game_over`` (of a whole room whose game is over), encoded for ``codec``."""
        return self._over_frame(codec)

    def _over_frame(self, codec: Codec) -> Frame:
        """``game_over`` with ``full_log``, encoded once per codec; in msgpack its entries are
        the stored bytes (``HeldLog.packed``), not unpacked to be packed again."""
        frame = self._over_frames.get(codec.name)
        if frame is None:
            result = self.room.state.result
            if codec.binary:
                entries = codec.array(self._whole_log().packed())
                frame = codec.encode_with(protocol.game_over(result, []), {"log": entries})
            else:
                frame = codec.encode(protocol.game_over(result, self.full_log()))
            self._over_frames[codec.name] = frame
        return frame

    def _finish_whole(self) -> None:
        """The game is over in a room restored from a snapshot: read the whole log, which
        sends ``game_over`` (``RoomRuntime.complete``)."""
        if self._finishing is None or self._finishing.done():
            self._finishing = asyncio.get_running_loop().create_task(self._complete())

    async def _complete(self) -> None:
        """The room's ``complete`` (room_reads.py), a failure logged (tried again at the next
        need)."""
        try:
            await self.room.reader.complete()
        except Exception as error:
            extra = {"room": self.room.room_id, "error": repr(error)}
            log.warning("reading the whole log failed", extra=extra)

    # -- sockets ----------------------------------------------------------------------------

    def _resumable(self, feed: Feed, last_seq: int | None, epoch: int | None) -> bool:
        """A resume token of this incarnation, not older than the resume window, not ahead."""
        return (
            epoch == self.room.epoch
            and last_seq is not None
            and 0 <= feed.seq - last_seq <= self.room.settings.resume_window
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
        if epoch == self.room.epoch and last_seq is not None and last_seq > feed.seq:
            await self.room.reader.catch_up()
        elif self._resumable(feed, last_seq, epoch) and (last_seq or 0) < feed.base:
            await self._complete()

    async def seq_at(self, audience: Audience, version: int) -> int:
        """The audience's message number once events up to ``version`` are applied (an
        ``ack``'s): exact even for a version before the room's snapshot, whose messages are
        read first; if that read fails, the snapshot's number (the events are in by then)."""
        if version < self.room.base:
            await self._complete()
        return self.feeds[audience].seq_at(version)

    def attach(self, sub: Subscriber, last_seq: int | None, epoch: int | None) -> bool:
        """Queue the hello's answer and subscribe ``sub``; True when it resumed."""
        room, feed, codec = self.room, self.feeds[sub.audience], sub.codec
        resumed = self._resumable(feed, last_seq, epoch) and feed.base <= (last_seq or 0)
        seat = None if sub.audience is None else sub.audience.value
        sub.push(codec.encode(protocol.welcome(room.room_id, room.epoch, seat, feed.seq, resumed)))
        if resumed:
            assert last_seq is not None
            for seq in range(last_seq + 1, feed.seq + 1):
                sub.push(feed.frame(codec, seq))
        else:
            sub.push(self._view_frame(sub.audience, codec))
        sub.sent_seq = feed.seq
        self._legal_due.discard(sub)
        if sub.audience is not None:
            sub.push(self._legal_frame(sub.audience, codec))
        if room.over and not room.base:
            sub.push(self._over_frame(codec))
        elif room.over:  # sent once the log is whole
            self._finish_whole()
        self.subscribers.add(sub)
        room.touch()
        return resumed

    def detach(self, sub: Subscriber) -> None:
        """Unsubscribe ``sub`` (it is sent nothing more)."""
        self.subscribers.discard(sub)
        self._legal_due.discard(sub)
        self._over_due.discard(sub)
        self.room.touch()

    def revoke(self, seat: Faction, generation: int) -> None:
        """Close the sockets of ``seat`` that hold a token older than ``generation``."""
        for sub in list(self.subscribers):
            if sub.audience is seat and sub.generation < generation:
                self.detach(sub)
                sub.close(protocol.CLOSE_REVOKED, "token_revoked")

    @property
    def watched(self) -> bool:
        """Some local socket follows the room, here or in a follower."""
        return bool(self.subscribers) or any(f.subscribers for f in self.followers)

    def close_all(self, code: int, reason: str) -> None:
        """Unsubscribe every socket, the followers' too, and close it with ``code`` and
        ``reason``."""
        for sub in list(self.subscribers):
            self.detach(sub)
            sub.close(code, reason)
        for follower in self.followers:
            follower.close_all(code, reason)
