"""What a room reads of its log besides its own appends (``RoomRuntime.reader``).

- What other processes appended, on a hint (fanout.py) or a (re)subscription: read by one task
  per room that coalesces bursts and, when a read fails, reads again after a doubling pause (no
  other hint may come). A hint that comes while submits of this process are under way waits
  for them to end: most often it is their own append's, folded by then.
- The log before the snapshot a room was restored from (``complete``): it holds neither those
  events nor their messages, and reads and folds them again when they are needed: for the full
  log at the game's end, for the HTTP log, for a resume from before the snapshot, and for the
  ``ack`` of a resent command applied before it. The numbering is the same either way, because
  a snapshot carries each audience's message count.
- The whole log again, when it is not the history the cache folded (Redis lost acknowledged
  writes, and the room may have grown back another way): the room is rebuilt (``reload``) and
  its sockets are told to resync, rather than new events folded onto a history the log no
  longer has.

Every read holds the room's lock: ``catch_up``, ``complete`` and the catch-up task take it,
``read_tail``, ``refresh`` and ``reload`` are called with it held (a submit holds it).
"""

from __future__ import annotations

import asyncio
import logging
import time

from olympus.rules import GameState, decode
from olympus.store import EventsTrimmed, chain_next

from . import protocol
from .room_log import NewEvent
from .room_parts import ReadRoom

log = logging.getLogger("olympus.server.room")  # the room's, as room.py's

# A failed catch-up (Redis unreachable, a failover) is tried again after this, doubling.
CATCH_UP_RETRY_SECONDS = 0.05
CATCH_UP_RETRY_MAX_SECONDS = 2.0


class LogReader:
    """The reads of ``room``'s log."""

    def __init__(self, room: ReadRoom) -> None:
        self.room = room
        self.task: asyncio.Task[None] | None = None  # the catch-up task, while one runs
        self._dirty = False
        self._hint_at = 0.0
        self._hinted = 0  # the newest version a hint announced
        # A (re)subscription: read the tail whatever the hints say, and check that the store
        # still has our last event (``refresh``).
        self._resubscribed = False

    def request(self, hinted: int | None) -> None:
        """Read what others appended (on a hint or a fresh subscription); coalesces bursts.

        ``hinted``: the version a hint announced. Already folded (our own append, usually):
        nothing to read. The payload only ever saves a read; it is never trusted for content.
        While submits are under way, looked at when they end (``after_submits``).
        """
        if hinted is not None and hinted <= self.room.version:
            return
        if hinted is None:
            self._resubscribed = True
        else:
            self._hinted = max(self._hinted, hinted)
        if not self._dirty:
            self._hint_at = time.perf_counter()
        self._dirty = True
        if not self.room.submitting:
            self._start()

    def after_submits(self) -> None:
        """The hints that came while submits were under way, once none is: most often only our
        own append's, which its Redis sends before the append's reply, and which is folded by
        now. A catch-up task for it would take the lock only to find nothing to read (about
        2 % of the command path: docs/performance.md)."""
        if self.room.submitting or not self._dirty:
            return
        if self._hinted <= self.room.version and not self._resubscribed:
            self._dirty = False
        else:
            self._start()

    def _start(self) -> None:
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._catch_up())

    async def _catch_up(self) -> None:
        room, backoff = self.room, CATCH_UP_RETRY_SECONDS
        while self._dirty and not room.gone:
            self._dirty = False
            since = self._hint_at
            try:
                async with room.lock:
                    # Folded meanwhile (by a submit, or an earlier read): nothing to read.
                    if self._resubscribed:  # maybe after a Redis restart, which may also
                        self._resubscribed = False  # have lost acknowledged writes
                        try:
                            await self.refresh(since)
                        except Exception:
                            self._resubscribed = True  # checked at the next hint instead
                            raise
                    elif self._hinted > room.version:
                        await self.read_tail(since)
            except Exception as error:  # never crash; read again soon: no other hint may come
                # (a seat of this process may be the one to act on what it could not read)
                log.warning("catch-up failed", extra={"room": room.room_id, "error": repr(error)})
                self._dirty = True
                await asyncio.sleep(backoff)
                backoff = min(backoff * 2, CATCH_UP_RETRY_MAX_SECONDS)

    async def catch_up(self) -> None:
        """Fold what others appended, now (``read_tail`` under the lock)."""
        async with self.room.lock:
            await self.read_tail(time.perf_counter())

    async def read_tail(self, since: float) -> bool:
        """Fold what others appended after our version (``since``: when the read was called
        for); True if the state changed.

        The first new entry must continue our history: its chain (entries of writers that give
        one) is ``chain_next`` of ours. If not, the room is rebuilt from the store (``reload``).
        """
        room = self.room
        try:
            stored = await room.store.read(room.room_id, room.version)
        except EventsTrimmed:
            await self.reload()
            return True
        if not stored:
            return False
        first = stored[0]
        if first.chain and first.chain != chain_next(room.chain, first.data):
            await self.reload()
            return True
        numbered = [NewEvent(s.version, decode(s.data), s.data, at_ms=s.at_ms) for s in stored]
        room.apply(numbered, since)
        return True

    async def refresh(self, since: float) -> bool:
        """``read_tail``, and when there is nothing new, check that the store still has our
        last event: it may be shorter than the cache, or as long with other events (Redis lost
        writes), which a tail read cannot see. On a refused command and on a (re)subscription
        (a Redis restart reconnects pub/sub), not on every hint: it costs a read."""
        if await self.read_tail(since):
            return True
        room = self.room
        if not room.version:
            return False
        try:
            ours = await room.store.read(room.room_id, room.version - 1, count=1)
        except EventsTrimmed:  # trimmed up to a snapshot: nothing to compare with
            return False
        if not ours or (ours[0].chain and ours[0].chain != room.chain):
            await self.reload()
            return True
        return False

    async def reload(self) -> None:
        """The log is not what we folded (Redis lost events): start again from the store.

        Sockets are closed with ``CLOSE_RESYNC`` so their clients reconnect and get a view; their
        message numbers may now name other messages. Then the rebuild listeners are called.
        """
        room = self.room
        log.warning("room log changed under the cache", extra={"room": room.room_id})
        room.rebuilds += 1
        stored = await room.store.read(room.room_id, 0)
        await room.store.drop_snapshot_if_ahead(room.room_id)  # one of the lost history
        room.feed.close_all(protocol.CLOSE_RESYNC, "resync")
        room.state, room.base, room.snapshot_version, room.chain = GameState(), 0, 0, ""
        room.feed.reset()
        room.load(stored)
        for listener in room.rebuild_listeners:
            await listener(room)

    async def complete(self) -> None:
        """Hold the whole log and every message again (a room restored from a snapshot).

        Reads the log up to the version held and folds it from the start: the same state and
        the same numbering, so the sockets notice nothing. If the fold is not the state, the
        numbering and the chain held, the log changed under the cache: the room is rebuilt
        (``reload``). If the log cannot be folded (a gap, an event that does not decode), the
        room stays as it was and the error is raised. A no-op for a room already whole. A game
        that is over gets its ``game_over`` queued to every socket, now that the whole log is
        there.
        """
        room, feed = self.room, self.room.feed
        async with room.lock:
            if not room.base:
                return
            stored = await room.store.read(room.room_id, 0, count=room.version)
            seqs, held = feed.seqs(), (room.state, room.base, room.chain, feed.feeds, feed.log)
            room.state, room.base, room.chain = GameState(), 0, ""
            feed.reset()
            try:
                room.load(stored)
            except BaseException:  # (no await since the swap: nobody saw the half fold)
                room.state, room.base, room.chain, feed.feeds, feed.log = held
                raise
            if room.chain != held[2] or room.state != held[0] or feed.seqs() != seqs:
                # put back what the sockets were sent, then rebuild and resync
                room.state, room.base, room.chain, feed.feeds, feed.log = held
                await self.reload()
            elif room.over:
                feed.over_due()
