"""uvicorn's websocket protocol, with a short way out for the frames the service sends and a
short way in for the frames the clients send.

A frame sent through ASGI passes Starlette's ``WebSocket``, its exception wrapper, uvicorn's
``send`` and websockets' frame builder before it reaches the transport: ~10 µs of Python per
frame, and a command sends four or five (docs/performance.md). A server's data frame is only a
header and the payload, unmasked (RFC 6455 §5.2), so this protocol offers, in the ASGI scope's
extensions (``EXTENSION``, an extension's dict: ``{"write": …, "receive": …, …}``), a ``write``
that puts a whole frame (``_frame``: the header made here, not by websockets' ``Frame``) onto
the transport at once. It takes a frame only while the websocket is open and the transport
is not paused for flow control; otherwise it declines, and ``FrameSender`` sends through ASGI,
which waits for the transport as before.

The way in: websockets parses what a client sends with generators (a frame's header, mask and
payload each a ``read_exact``), several µs of Python per frame. A client's command is one
small data frame: unfragmented, masked, without extension bits, shorter than 64 KiB. While the
websocket is open and websockets' own parser waits at the start of a frame, this protocol reads
such frames itself (RFC 6455 §5.2, the payload unmasked by websockets' own C ``apply_mask``) and
gives each to the application as uvicorn does (``send_receive_event_to_app``: the same ASGI
message and queue). The queue is an ``Inbox`` (asyncio's ``Queue`` is Python), and the
application may read it with the protocol's ``receive``, offered beside ``write``, rather than
through Starlette's ``WebSocket.receive``.

Anything else (a ping, a pong, a close, a fragment, a compressed or large frame) is handed,
with everything after it, to websockets, which then parses from the start of that frame as if
it had read all the ones before; the short way resumes once websockets waits at a frame's start
again.

Flow control: uvicorn stops reading the transport after every message and starts again once
the application has taken it, two changes to the event loop's watch of the socket per
message. Here a small message (under ``SMALL_BYTES``, a size the short way reads) stops it
only once ``UNREAD_LIMIT`` messages wait unread; a larger one, which websockets reads, stops it
at once, as uvicorn does. Reading starts again when the application has taken every message
waiting, as uvicorn's ``receive`` does. So a client can make the process hold at most
``UNREAD_LIMIT`` small messages, one large one and one read of the socket.

The way into the websocket (``UpgradeProtocol``, uvicorn's HTTP protocol): uvicorn parses a
websocket's opening request with httptools, then writes it out again as bytes for the websocket
protocol, where websockets parses it a second time, in Python (its parser is generators reading
lines), before its ``accept`` checks the handshake. Here the request goes over as httptools
parsed it (``WriteFrameProtocol.upgrade``): websockets' ``Request`` made of the parsed method,
target and headers, checked by the same ``accept``. One answer differs: a request with a body
gets a 400, where uvicorn's way left it unanswered (websockets refused it, and the refusal was
never written).

What a client can make the process write is bounded, whatever it sends: while the transport
is over its high-water mark (``pause_writing``), nothing more is read from the socket, so no
reply (a pong, an error frame, a close) piles up behind a client that does not read; reading
starts again once the transport drains. Pings take a token each from a bucket of the socket's
own rate (``limit_pings``: the application gives it the rate of its messages); a ping that
finds the bucket empty closes the socket with 4429 (``CLOSE_FLOOD``). Input the protocol
refuses (invalid UTF-8: 1007; websockets' verdicts: 1002, 1009; a ping flood: 4429) closes the
socket, is logged once at INFO (the socket is gone after it) and counted by close code in
``REFUSED`` (``/metrics``: ``olympus_ws_refused_total``).

Everything else (closing) is uvicorn's own.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from starlette.websockets import WebSocket
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.datastructures import Headers
from websockets.frames import Opcode
from websockets.http11 import Request
from websockets.protocol import Protocol, State
from websockets.streams import StreamReader

from .logs import address
from .ratelimit import TokenBucket

if TYPE_CHECKING:
    from uvicorn._types import ASGIReceiveEvent

try:  # websockets' own unmasking: in C where it was built, as its parser does
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover
    from websockets.utils import apply_mask

EXTENSION = "olympus.frames"  # the protocol's own ways in and out: {"write": …, "receive": …}

Write = Callable[[bytes | str], bool]
Message = Mapping[str, Any]  # an ASGI message
Receive = Callable[[], Awaitable[Message]]

# The first byte of a whole (FIN) text or binary frame without extension bits (RFC 6455 §5.2).
_TEXT, _BINARY = 0x80 | Opcode.TEXT.value, 0x80 | Opcode.BINARY.value
_MASKED = 0x80
_WAITING_FOR_A_FRAME = StreamReader.at_eof.__code__

# Small messages a client may have waiting unread before its transport stops being read.
UNREAD_LIMIT = 16
SMALL_BYTES = 1 << 16  # bytes: a message the short way reads has a 7- or 16-bit length
# Pings a socket may send, per second and at once, until the application sets its own rate
# (``limit_pings``); the service's defaults for messages (settings.py).
PING_RATE, PING_BURST = 20.0, 40
CLOSE_FLOOD = 4429  # as the service closes a socket that floods it with messages (protocol.py)
CLOSE_INVALID_DATA = 1007  # RFC 6455 §7.4.1: text that is not UTF-8

# Sockets closed for input the protocol refused, by close code, in this process (/metrics).
REFUSED: dict[int, int] = {}

log = logging.getLogger("olympus.server.ws_protocol")


class Inbox:
    """What the protocol queues for the application, in order: the part of ``asyncio.Queue``
    uvicorn uses (``put_nowait``, ``get``, ``empty``), compiled. asyncio's queue is Python,
    a cost on every message a client sends. One reader: the application's ``receive``."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop  # the protocol's: ``get_running_loop`` is a ``getpid`` per wait
        self._messages: deque[Message] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, message: Message) -> None:
        self._messages.append(message)
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def empty(self) -> bool:
        return not self._messages

    def __len__(self) -> int:
        return len(self._messages)

    async def get(self) -> Message:
        if self._waiter is not None:  # it would take the other's wake-up and strand it
            raise RuntimeError("an Inbox has one reader at a time")
        while not self._messages:  # a cancelled wait takes nothing
            self._waiter = self._loop.create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._messages.popleft()


class WriteFrameProtocol(WebSocketsSansIOProtocol):
    """``WebSocketsSansIOProtocol`` that also offers ``write_frame`` and its ``receive``
    (``EXTENSION``), reads the clients' small data frames itself and queues what it reads in
    an ``Inbox``."""

    # websockets' parser waits at a frame's start, outside a fragmented message: the frames
    # are ours to read.
    _direct: bool = False
    _pending: bytes = b""  # the start of a frame not whole yet (only while ``_direct``)
    _write_paused: bool = False  # the transport is over its high-water mark (flow control)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._inbox = Inbox(self.loop)
        self.queue = self._inbox  # type: ignore[assignment]
        self._pings = TokenBucket(PING_RATE, PING_BURST)

    def limit_pings(self, rate: float, burst: int) -> None:
        """Let the socket ping ``rate`` times per second on average, ``burst`` at once (the
        rate of its messages); a ping beyond closes it with ``CLOSE_FLOOD``."""
        self._pings = TokenBucket(rate, burst)

    def data_received(self, data: bytes) -> None:
        if not self._direct:
            self._to_websockets(data)
            return
        buffer = self._pending + data if self._pending else data
        end = len(buffer)
        at = 0
        while end - at >= 2:
            first, second = buffer[at], buffer[at + 1]
            code = length = second & 0x7F  # 126, 127: a 16-, 64-bit length follows
            start = at + 2
            if code == 126:
                if end - start < 2:
                    break  # the rest of the header is still on its way
                length = int.from_bytes(buffer[start : start + 2], "big")
                start += 2
            limit = self.conn.max_message_size
            if (
                (first != _TEXT and first != _BINARY)
                or not second & _MASKED
                or code == 127
                or (limit is not None and length > limit)
                or self.conn.state is not State.OPEN
            ):
                self._direct, self._pending = False, b""
                self._to_websockets(buffer[at:])
                return
            stop = start + 4 + length
            if stop > end:
                break  # the rest of the frame is still on its way
            payload = apply_mask(buffer[start + 4 : stop], buffer[start : start + 4])
            at = stop
            self.curr_msg_data_type = "text" if first == _TEXT else "bytes"
            self.frames = [payload]
            self.send_receive_event_to_app()  # uvicorn's: the app's message, below
        self._pending = buffer[at:]

    def send_receive_event_to_app(self) -> None:
        """The application's message (websockets' frames, or the short way's), as uvicorn's
        gives it; text that is not UTF-8 closes the socket (1007, ``_refuse``). uvicorn stops
        reading after each message; here a small one stops it only once ``UNREAD_LIMIT`` wait,
        a large one at once. ``receive`` starts reading again once every message waiting is
        taken."""
        frames = self.frames
        data = frames[0] if len(frames) == 1 else b"".join(frames)
        self.frames = []
        if self.close_sent:  # past the application's close: read on until the client's
            return
        if self.curr_msg_data_type == "text":
            try:
                self._inbox.put_nowait({"type": "websocket.receive", "text": data.decode()})
            except UnicodeDecodeError as error:
                self.conn.send_close(CLOSE_INVALID_DATA, "invalid UTF-8")
                self._refuse(f"invalid UTF-8 at position {error.start}")
                return
        else:
            self._inbox.put_nowait({"type": "websocket.receive", "bytes": data})
        if not self.read_paused and (len(data) >= SMALL_BYTES or len(self._inbox) >= UNREAD_LIMIT):
            self.read_paused = True
            self.transport.pause_reading()

    def handle_ping(self) -> None:
        """uvicorn's (the pong websockets made), within the socket's ping rate: a ping
        beyond it closes the socket (``CLOSE_FLOOD``). Nothing is written once closing."""
        if self.close_sent:
            self.conn.data_to_send()  # dropped: the socket is closing
            return
        if not self._pings.take():
            self.conn.fail(CLOSE_FLOOD, "ping flood")
            self._refuse("ping flood")
            return
        super().handle_ping()

    def handle_parser_exception(self) -> None:
        """uvicorn's, for a frame websockets refused (it chose the close code)."""
        self._refuse(str(self.conn.parser_exc))

    def _refuse(self, why: str) -> None:
        """Close for input refused, with the close frame websockets was told to send: counted
        in ``REFUSED``, logged once at INFO (the socket is gone after it), then closed as
        uvicorn closes on a parser's error."""
        sent = self.conn.close_sent
        if sent is None or self.close_sent:  # nothing to say, or closing already
            self.close_sent = True
            self.transport.close()
            return
        REFUSED[sent.code] = REFUSED.get(sent.code, 0) + 1
        fields = {"client": address(self.client), "code": sent.code, "error": why}
        log.info("websocket closed: input refused", extra=fields)
        super().handle_parser_exception()

    def _to_websockets(self, data: bytes) -> None:
        """uvicorn's way: websockets parses ``data``; then, if it waits at a frame's start on
        an open websocket, and not between the fragments of a message (where a data frame is
        a protocol error: websockets' to refuse), the frames that follow are read here."""
        super().data_received(data)
        conn = self.conn
        self._direct = (
            conn.state is State.OPEN
            and conn.parser_exc is None
            and conn.current_size is None
            and not conn.reader.buffer
            and not self.close_sent
            and _innermost(conn.parser) is _WAITING_FOR_A_FRAME
        )

    def upgrade(self, request: Request) -> None:
        """Open with ``request``, as the HTTP protocol parsed it (``UpgradeProtocol``): the
        same handshake as uvicorn's ``data_received`` of the request's bytes, without parsing
        them. websockets' parser, which would begin with the request, begins at the first
        frame instead (``Protocol.parse``: what ``ServerProtocol.parse`` goes on to once it
        has the request)."""
        conn = self.conn
        conn.parser = Protocol.parse(conn)
        next(conn.parser)
        self.handle_connect(request)
        # Frames are read here from the first: until the handshake is done they are handed
        # to websockets (the short way reads only on an open websocket), as after a request
        # websockets parsed.
        self._direct = not self.close_sent

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        if not self.close_sent:  # the handshake goes on: the scope is the app's
            self.scope["extensions"][EXTENSION] = {
                "write": self.write_frame,
                "receive": self.receive,  # without Starlette's on top
                "limit_pings": self.limit_pings,
            }

    async def receive(self) -> ASGIReceiveEvent:
        """uvicorn's, compiled (it is awaited for every message a client sends): the next
        message; reading starts again once none waits (and the transport takes writes)."""
        message = await self._inbox.get()
        if self.read_paused and self._inbox.empty():
            self.read_paused = False
            if not self._write_paused:
                self.transport.resume_reading()
        return cast("ASGIReceiveEvent", message)

    def pause_writing(self) -> None:
        """The transport holds more than its high-water mark unsent: nothing more is read
        until it drains, so that nothing read can add to it (a pong, an error, a close)."""
        self._write_paused = True  # a flag ``write_frame`` reads; asyncio's Event is Python
        super().pause_writing()
        self.transport.pause_reading()

    def resume_writing(self) -> None:
        self._write_paused = False
        super().resume_writing()
        if not self.read_paused and not self.transport.is_closing():
            self.transport.resume_reading()

    def write_frame(self, data: bytes | str) -> bool:
        """Put one whole data frame (binary for bytes, text for str) on the transport; False,
        having written nothing, unless the websocket is open and the transport takes writes."""
        if (
            self._write_paused
            or self.conn.state is not State.OPEN
            or self.transport.is_closing()
        ):
            return False
        if isinstance(data, str):
            self.transport.write(_frame(_TEXT, data.encode()))
        else:
            self.transport.write(_frame(_BINARY, data))
        return True


class UpgradeProtocol(HttpToolsProtocol):
    """uvicorn's HTTP protocol (httptools), which hands a websocket's opening request to
    ``WriteFrameProtocol`` as it parsed it, rather than as bytes to parse again."""

    def handle_websocket_upgrade(self) -> None:
        ws_class = self.ws_protocol_class
        if ws_class is None or not issubclass(ws_class, WriteFrameProtocol):
            super().handle_websocket_upgrade()  # the bytes, for websockets to parse
            return
        request = self._opening_request()
        if request is None:
            # uvicorn's way left such a request unanswered: websockets refuses it, and the
            # refusal was never written. A clear one here.
            self.send_400_response("A websocket's opening request has no body.")
            return
        self.connections.discard(self)
        protocol = ws_class(
            config=self.config, server_state=self.server_state, app_state=self.app_state
        )
        protocol.connection_made(self.transport)
        protocol.upgrade(request)
        self.transport.set_protocol(protocol)

    def _opening_request(self) -> Request | None:
        """The request as websockets' parser gives it (``Request.parse``) of the bytes uvicorn
        writes out: the method, the target, the headers (their values without the spaces and
        tabs around them, in ISO-8859-1), and HTTP/1.1 whatever the client said. None for a
        request with a body (a ``Content-Length`` other than 0, a ``Transfer-Encoding``),
        which that parser refuses. httptools has refused what else it would: a target that
        is not ASCII, a malformed line. The method is checked by websockets' ``accept``, as
        before. (websockets' limits of 128 headers and 8 KiB lines are not applied: on
        uvicorn's way their refusals were never written either, and the HTTP routes have no
        such limits.)"""
        headers = Headers()
        for name, raw in self.headers:  # names lowercased by uvicorn; Headers ignore case
            value = raw.strip(b" \t")
            if name == b"transfer-encoding" or (name == b"content-length" and value != b"0"):
                return None
            headers[name.decode("latin-1")] = value.decode("latin-1")
        return Request(self.url.decode("ascii"), headers, self.scope["method"])


def _frame(first: int, payload: bytes) -> bytes:
    """A server's whole frame (RFC 6455 §5.2): its first byte (FIN and opcode), the payload's
    length in 7, 16 or 64 bits, unmasked, and the payload."""
    n = len(payload)
    if n < 126:
        head = bytes((first, n))
    elif n < 1 << 16:
        head = bytes((first, 126)) + n.to_bytes(2, "big")
    else:
        head = bytes((first, 127)) + n.to_bytes(8, "big")
    return head + payload


def _innermost(generator: object) -> object:
    """The code of the generator ``generator`` waits in, through its ``yield from``s."""
    while (inner := getattr(generator, "gi_yieldfrom", None)) is not None:
        generator = inner
    return getattr(generator, "gi_code", None)


def receiver(ws: WebSocket) -> Receive:
    """How the application reads ``ws``'s messages: the protocol's ``receive`` where it offers
    it (``WriteFrameProtocol``), else Starlette's. Starlette's adds a check of the socket's
    state to every message, which the service's reader keeps itself (it stops at the
    disconnect)."""
    offered: Receive | None = _offered(ws).get("receive")
    return ws.receive if offered is None else offered


def limit_pings(ws: WebSocket, rate: float, burst: int) -> None:
    """Limit ``ws``'s pings to its messages' rate, where its protocol offers it
    (``WriteFrameProtocol.limit_pings``)."""
    limit: Callable[[float, int], None] | None = _offered(ws).get("limit_pings")
    if limit is not None:
        limit(rate, burst)


def _offered(ws: WebSocket) -> dict[str, Any]:
    offered: dict[str, Any] = ws.scope.get("extensions", {}).get(EXTENSION, {})
    return offered


class FrameSender:
    """Sends a socket's frames: written at once when its protocol can (``WriteFrameProtocol``),
    else through ASGI (another server, a paused transport, a closing socket)."""

    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        offered = _offered(ws)
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
