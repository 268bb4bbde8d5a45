"""A room's commentary stream: every event with its identities revealed, a delay after it.

A room created with ``broadcast_delay_seconds`` (lobby.py) offers it, to anyone, over the
websocket (``hello`` with ``"commentary": true``) and over HTTP
(``GET /rooms/{room}/commentary``); a room without the option offers none, and its spectators'
stream stays the neutral one (room_feed.py).

Contract:

- Message ``k`` is the room's event ``k`` (its version), unredacted as the finished game's log
  shows it (``HeldLog.entry``) but for the secret seeds (``SECRET_SEEDS``), with ``at_ms``, the
  time it was applied (``StoredEvent.at_ms``, recorded by the appending process from the
  service's clock). The messages are a pure function of the log: the same in every process
  and after any restart, so a resume token ``(epoch, seq)`` means the same anywhere.
- Message ``k`` is released once the service's clock (``clock``) reads at least its ``at_ms``
  plus the delay, and only after message ``k - 1``. So no message is sent, nor answered over
  HTTP, before its delay has passed since its event happened; the delay rests on the stored
  times alone, not on timers (a timer only wakes the stream up, which asks the clock again).
- An event without a time (written by a writer that kept none) is released only once the game
  is over, when the whole log is public anyway (``game_over``).
- The secret seeds are never in a message: ``GameCreated.token_seed`` draws the tokens of the
  units hidden later in the game, so it would tell of facts to come, not of facts a delay old;
  a Random Setup's ``seed`` is left out alike (its setups come as events of their own). Both
  are in the whole log that ``game_over`` carries at the end.
- After the last message of a finished game, ``game_over`` (with the whole log) follows.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any, Protocol

from . import protocol
from .protocol import Codec, Frame, Message
from .room_log import HeldLog

log = logging.getLogger("olympus.server.commentary")

# Fields of events never sent in a commentary message (see the module).
SECRET_SEEDS = {"game_created": "token_seed", "random_setup_drawn": "seed"}
MAX_DELAY_SECONDS = 3600


def now_ms() -> int:
    """The service clock (R12's): wall time in ms, so that every process agrees (NTP)."""
    return time.time_ns() // 1_000_000


class NoCommentary(Exception):
    """The room was created without ``broadcast_delay_seconds``: it offers no commentary."""

    code = "no_commentary"
    sentence = "This room offers no commentary stream (it has no broadcast delay)."


class CommentaryRoom(Protocol):
    """The room as its commentary reads it (``RoomRuntime``)."""

    room_id: str
    epoch: int
    base: int

    @property
    def over(self) -> bool: ...

    @property
    def log(self) -> HeldLog: ...

    def over_frame(self, codec: Codec) -> Frame: ...


class Listener(Protocol):
    """A socket following the commentary (connection.py)."""

    codec: Codec

    def push(self, frame: Frame) -> None: ...

    def close(self, code: int, reason: str) -> None: ...


def message(entry: Message, seq: int, at_ms: int) -> Message:
    """Commentary message ``seq``: its event ``entry`` without the secret seeds."""
    secret = SECRET_SEEDS.get(entry.get("t", ""))
    shown = {k: v for k, v in entry.items() if k != secret} if secret else entry
    return {"type": "event", "seq": seq, "event": shown, "at_ms": at_ms}


class Commentary:
    """The commentary of one room held by this process: its released messages, its sockets.

    ``delay_ms``: the room's broadcast delay; ``clock``: the service's clock (ms), which alone
    says what is released. The room must hold its whole log (``base`` 0) before one is made:
    ``commentary_of``."""

    def __init__(
        self, room: CommentaryRoom, delay_ms: int, clock: Callable[[], int] = now_ms
    ) -> None:
        self.room = room
        self.delay_ms = delay_ms
        self.clock = clock
        self.listeners: set[Listener] = set()
        self.released = 0  # messages 1..released are out (to the listeners)
        self._frames: dict[str, list[Frame]] = {}
        self._timer: asyncio.TimerHandle | None = None

    @property
    def subscribers(self) -> set[Listener]:
        return self.listeners

    def due(self, now: int) -> int:
        """How many messages may be out at ``now``: the events from the first, in order, each
        ``delay_ms`` old (or, without a time, of a game that is over)."""
        held, n = self.room.log, self.released
        if self.room.base:  # (never: made for whole rooms only) nothing is known to be due
            return n
        over = self.room.over
        while n < len(held):
            at = held.time(n)
            if (at and at + self.delay_ms > now) or (not at and not over):
                break
            n += 1
        return n

    def next_due_ms(self, upto: int) -> int | None:
        """When message ``upto + 1`` is due (ms), or None: none held, or no time known."""
        held = self.room.log
        if upto >= len(held) or self.room.base:
            return None
        at = held.time(upto)
        return at + self.delay_ms if at else None

    def messages(self, after: int, upto: int) -> list[Message]:
        """Messages ``after + 1`` … ``upto`` (JSON-able)."""
        held = self.room.log
        return [message(held.entry(k), k + 1, held.time(k)) for k in range(after, upto)]

    def complete(self, upto: int) -> bool:
        """Whether ``upto`` messages are the whole of a game that is over."""
        return self.room.over and upto >= len(self.room.log)

    def _frame(self, codec: Codec, seq: int) -> Frame:
        frames = self._frames.setdefault(codec.name, [])
        held = self.room.log
        while len(frames) < seq:
            k = len(frames)
            frames.append(codec.encode(message(held.entry(k), k + 1, held.time(k))))
        return frames[seq - 1]

    # -- sockets ----------------------------------------------------------------------------

    def attach(self, listener: Listener, last_seq: int | None, epoch: int | None) -> bool:
        """Queue the hello's answer to ``listener`` and follow the stream; True if it resumed
        (``last_seq`` of this epoch, not ahead of what is released): the messages after it;
        else every message released, from the first."""
        self.release()
        room, codec = self.room, listener.codec
        resumed = epoch == room.epoch and last_seq is not None and last_seq <= self.released
        start = last_seq if resumed and last_seq is not None else 0
        welcome = protocol.welcome(room.room_id, room.epoch, None, self.released, resumed)
        welcome["commentary"] = {"delay_seconds": self.delay_ms // 1000}
        listener.push(codec.encode(welcome))
        for seq in range(start + 1, self.released + 1):
            listener.push(self._frame(codec, seq))
        if self.complete(self.released):
            listener.push(room.over_frame(codec))
        self.listeners.add(listener)
        self._schedule()
        return resumed

    def detach(self, listener: Listener) -> None:
        self.listeners.discard(listener)
        if not self.listeners and self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def close_all(self, code: int, reason: str) -> None:
        """Close every socket (the room was rebuilt, or dropped) and forget what was released:
        it is counted again from the log the room holds next."""
        for listener in list(self.listeners):
            self.detach(listener)
            listener.close(code, reason)
        self.released = 0
        self._frames.clear()

    def on_batch(self, _room: object = None) -> None:
        """New events are folded: send what is due, wake up when the next one is."""
        if self.listeners:
            self.release()
            self._schedule()

    def release(self) -> None:
        """Send each listener the messages due now (and ``game_over`` after the last one)."""
        due = self.due(self.clock())
        if due <= self.released:
            return
        was = self.released
        self.released = due
        for listener in list(self.listeners):
            codec = listener.codec
            for seq in range(was + 1, due + 1):
                listener.push(self._frame(codec, seq))
            if self.complete(due):
                listener.push(self.room.over_frame(codec))

    def _schedule(self) -> None:
        """A timer for when the next message is due (it asks the clock again then)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        due_ms = self.next_due_ms(self.released)
        if due_ms is None or not self.listeners:
            return
        wait = max(0.0, (due_ms - self.clock()) / 1000)
        self._timer = asyncio.get_running_loop().call_later(wait, self._tick)

    def _tick(self) -> None:
        self._timer = None
        try:
            self.release()
        except Exception:  # a bug must not stop the stream's timer for good
            log.exception("commentary release failed", extra={"room": self.room.room_id})
        self._schedule()


def delay_of(meta: dict[str, Any]) -> int:
    """The room's broadcast delay in seconds from its meta; ``NoCommentary`` without one."""
    delay = meta.get("options", {}).get("broadcast_delay_seconds")
    if not delay:
        raise NoCommentary()
    return int(delay)
