"""One audience's numbered message list (a seat's, or the spectators').

R7 says the count and numbers of the messages a seat receives must not tell the opponent's
secrets. So each audience has its own numbering: the room's events are mapped through
``observe_event`` for that audience and the non-None results are numbered 1, 2, 3… The list
is a pure function of the event log, hence the same in every process, and a resume token
(epoch, seq) means the same thing wherever the client reconnects.

Frames are encoded once per codec and cached: a hundred spectators cost one encoding.
"""

from __future__ import annotations

import bisect

from .protocol import Codec, Frame, Message, event


class Feed:
    __slots__ = ("_frames", "messages", "versions")

    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.versions: list[int] = []  # event version each message came from (ascending)
        self._frames: dict[str, list[Frame]] = {}

    @property
    def seq(self) -> int:
        """Number of the last message (0: none yet)."""
        return len(self.messages)

    def append(self, version: int, message: Message) -> None:
        self.versions.append(version)
        self.messages.append(message)

    def seq_at(self, version: int) -> int:
        """The audience's last message number once events up to ``version`` are applied."""
        return bisect.bisect_right(self.versions, version)

    def frame(self, codec: Codec, seq: int) -> Frame:
        """The encoded ``event`` message number ``seq`` (1-based)."""
        frames = self._frames.setdefault(codec.name, [])
        while len(frames) < seq:
            n = len(frames) + 1
            frames.append(codec.encode(event(n, self.messages[n - 1])))
        return frames[seq - 1]
