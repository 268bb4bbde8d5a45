"""One audience's numbered message list (a seat's, or the spectators').

R7 says the count and numbers of the messages a seat receives must not tell the opponent's
secrets. So each audience has its own numbering: the room's events are mapped through
``observe_event`` for that audience and the non-None results are numbered 1, 2, 3… The list
is a pure function of the event log, hence the same in every process, and a resume token
(epoch, seq) means the same thing wherever the client reconnects.

Frames are encoded once per codec and cached: a hundred spectators cost one encoding.

A feed of a room loaded from a snapshot starts at the snapshot's message number (``base``):
the messages before it are not held, so a resume from before it gets a fresh view instead.

Messages are kept msgpack-packed, not as dicts: a process holds every message of every room
it serves for the room's whole life, and bytes are both smaller than a tree of dicts and
invisible to the cyclic garbage collector, whose full collections would otherwise scan every
message of every room again and again (docs/performance.md, "Service").
"""

from __future__ import annotations

import bisect

import msgpack

from .protocol import Codec, Frame, Message, event, pack_count

# A msgpack ``event`` frame is these bytes, the seq, then the packed message: the same bytes as
# ``MSGPACK.encode(event(seq, message))`` (a 3-entry map, keys in the builder's order).
_EVENT_HEAD = b"\x83" + msgpack.packb("type") + msgpack.packb("event") + msgpack.packb("seq")
_EVENT_KEY = msgpack.packb("event")


class Feed:
    __slots__ = ("_frames", "_packed", "base", "versions")

    def __init__(self, base: int = 0) -> None:
        self.base = base  # messages 1..base are not held (a snapshot's)
        self._packed: list[bytes] = []  # message base + k + 1, msgpack-packed
        self.versions: list[int] = []  # event version each message came from (ascending)
        self._frames: dict[str, list[Frame]] = {}

    @property
    def seq(self) -> int:
        """Number of the last message (0: none yet)."""
        return self.base + len(self._packed)

    @property
    def messages(self) -> list[Message]:
        """The messages held (from ``base + 1``), decoded: for the HTTP log, never frames."""
        return [msgpack.unpackb(p, raw=False, strict_map_key=False) for p in self._packed]

    def append(self, version: int, packed: bytes) -> None:
        """The next message, msgpack-packed (``pack``), from the event of ``version``."""
        self.versions.append(version)
        self._packed.append(packed)

    def seq_at(self, version: int) -> int:
        """The audience's last message number once events up to ``version`` are applied. Exact
        for a version at or after the snapshot the feed starts from (a room restored from one
        reads its whole log first, ``LogReader.complete``); ``base`` for an earlier one, an
        upper bound."""
        return self.base + bisect.bisect_right(self.versions, version)

    def frame(self, codec: Codec, seq: int) -> Frame:
        """The encoded ``event`` message number ``seq`` (1-based, after ``base``)."""
        if seq <= self.base:
            raise IndexError(f"message {seq} is before this feed's first ({self.base + 1})")
        frames = self._frames.setdefault(codec.name, [])
        while len(frames) < seq - self.base:
            n = self.base + len(frames) + 1
            packed = self._packed[n - self.base - 1]
            if codec.binary:
                frames.append(b"".join((_EVENT_HEAD, pack_count(n), _EVENT_KEY, packed)))
            else:
                frames.append(
                    codec.encode(event(n, msgpack.unpackb(packed, raw=False, strict_map_key=False)))
                )
        return frames[seq - self.base - 1]
