"""uvicorn's websocket protocol, with a short way out for the frames the service sends.

A frame sent through ASGI passes Starlette's ``WebSocket``, its exception wrapper, uvicorn's
``send`` and websockets' frame builder before it reaches the transport: ~10 µs of Python per
frame, and a command sends four or five (docs/performance.md). A server's data frame is only a
header and the payload, unmasked (RFC 6455 §5.2), so this protocol offers, in the ASGI scope's
extensions (``EXTENSION``, an extension's dict: ``{"write": …}``), a ``write`` that serializes a
whole frame (websockets' own ``Frame.serialize``) onto the transport at once. It takes a frame
only while the websocket is open and the transport is not paused for flow control; otherwise
it declines, and ``FrameSender`` sends through ASGI, which waits for the transport as before.
Everything else (the handshake, receiving, pings, closing) is uvicorn's own.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.websockets import WebSocket
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.frames import Frame, Opcode
from websockets.http11 import Request
from websockets.protocol import State

EXTENSION = "olympus.write_frame"

Write = Callable[[bytes | str], bool]


class WriteFrameProtocol(WebSocketsSansIOProtocol):
    """``WebSocketsSansIOProtocol`` that also offers ``write_frame`` (``EXTENSION``)."""

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        if not self.close_sent:  # the handshake goes on: the scope is the app's
            self.scope["extensions"][EXTENSION] = {"write": self.write_frame}

    def write_frame(self, data: bytes | str) -> bool:
        """Put one whole data frame (binary for bytes, text for str) on the transport; False,
        having written nothing, unless the websocket is open and the transport takes writes."""
        if (
            self.conn.state is not State.OPEN
            or not self.writable.is_set()
            or self.transport.is_closing()
        ):
            return False
        if isinstance(data, str):
            frame = Frame(Opcode.TEXT, data.encode())
        else:
            frame = Frame(Opcode.BINARY, data)
        self.transport.write(frame.serialize(mask=False, extensions=[]))
        return True


class FrameSender:
    """Sends a socket's frames: written at once when its protocol can (``WriteFrameProtocol``),
    else through ASGI (another server, a paused transport, a closing socket)."""

    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        offered = ws.scope.get("extensions", {}).get(EXTENSION, {})
        self._write: Write | None = offered.get("write")

    def write(self, frame: bytes | str) -> bool:
        """Write ``frame`` at once if the protocol can; False, having written nothing, if not."""
        return self._write is not None and self._write(frame)

    async def send(self, frame: bytes | str) -> None:
        if self.write(frame):
            return
        if isinstance(frame, bytes):
            await self.ws.send_bytes(frame)
        else:
            await self.ws.send_text(frame)
