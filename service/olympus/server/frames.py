"""A websocket's frames as bytes, with no I/O (RFC 6455 §5.2): the frames the server writes,
and the small data frames clients send.

A server's data frame is its header and the payload, unmasked. A client's command is one small
data frame: whole (FIN), masked, without extension bits, with a 7- or 16-bit length.
``SmallFrames`` reads such frames from what a socket gives, however it is cut, and hands back
everything from the first frame that is anything else (a control frame, a fragment, reserved
bits, a 64-bit length, an unmasked frame, one over the size limit) for a full parser to read
from that frame's start: websockets', which judges it (``ws_protocol.py``). Why the service
reads and writes these frames itself: docs/performance.md ("The websocket's frames").
"""

from __future__ import annotations

try:  # websockets' own unmasking: in C where it was built, as its parser does
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover
    from websockets.utils import apply_mask

# The first byte of a whole (FIN) text or binary frame without extension bits (§5.2).
TEXT = 0x81
BINARY = 0x82
_MASKED = 0x80  # the second byte's high bit: a client's frames are masked (§5.3)
_LENGTH_16, _LENGTH_64 = 126, 127  # the 7-bit length's escapes: a 16- or 64-bit length follows


def frame(payload: bytes | str) -> bytes:
    """A server's whole data frame: text for ``str`` (encoded as UTF-8), binary for bytes;
    the payload's length in 7, 16 or 64 bits, unmasked (§5.2)."""
    if isinstance(payload, str):
        first, data = TEXT, payload.encode()
    else:
        first, data = BINARY, payload
    n = len(data)
    if n < _LENGTH_16:
        head = bytes((first, n))
    elif n < 1 << 16:
        head = bytes((first, _LENGTH_16)) + n.to_bytes(2, "big")
    else:
        head = bytes((first, _LENGTH_64)) + n.to_bytes(8, "big")
    return head + data


class InvalidText(ValueError):
    """A text frame whose payload is not UTF-8 (§8.1: the connection fails with 1007).
    ``messages``: the whole messages read before it, in order."""

    def __init__(self, reason: str, messages: list[bytes | str]) -> None:
        super().__init__(reason)
        self.messages = messages


class SmallFrames:
    """Reads a client's small data frames from the bytes its socket gives.

    ``limit``: the largest payload read here (None: any a 16-bit length can say); a larger
    frame is handed on, for the full parser to refuse.
    """

    __slots__ = ("limit", "pending")

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.pending = b""  # the start of a frame not whole yet

    def read(self, data: bytes) -> tuple[list[bytes | str], bytes | None]:
        """The whole messages in ``data`` (after what was pending), text as ``str`` and binary
        as ``bytes``, in order; and None while every frame so far is a small data frame (the
        start of one not yet whole is kept for the next read), or else the bytes from the
        first frame that is not, which this reader no longer reads (``pending`` is empty).
        Raises ``InvalidText`` for text that is not UTF-8: nothing after it is read."""
        buffer = self.pending + data if self.pending else data
        end = len(buffer)
        at = 0
        messages: list[bytes | str] = []
        limit = self.limit
        while end - at >= 2:
            first, second = buffer[at], buffer[at + 1]
            code = length = second & 0x7F
            start = at + 2
            if code == _LENGTH_16:
                if end - start < 2:
                    break  # the rest of the header is still on its way
                length = int.from_bytes(buffer[start : start + 2], "big")
                start += 2
            if (
                (first != TEXT and first != BINARY)
                or not second & _MASKED
                or code == _LENGTH_64
                or (limit is not None and length > limit)
            ):
                self.pending = b""
                return messages, buffer[at:]
            stop = start + 4 + length
            if stop > end:
                break  # the rest of the frame is still on its way
            payload = apply_mask(buffer[start + 4 : stop], buffer[start : start + 4])
            at = stop
            if first == TEXT:
                try:
                    messages.append(payload.decode())
                except UnicodeDecodeError as error:
                    self.pending = b""
                    reason = f"invalid UTF-8 at position {error.start}"
                    raise InvalidText(reason, messages) from None
            else:
                messages.append(payload)
        self.pending = buffer[at:]
        return messages, None
