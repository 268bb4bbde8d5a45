"""The glue between uvicorn's websocket protocol and the frames the service reads and writes
itself (``frames.py``: bytes in, bytes out).

The way out: a frame sent through ASGI passes Starlette's ``WebSocket``, its exception wrapper,
uvicorn's ``send`` and websockets' frame builder, ~10 µs of Python per frame, and a command
sends four or five (docs/performance.md). This protocol offers, in the ASGI scope's extensions
(``EXTENSION``: ``{"write": …, "receive": …, "limit_pings": …}``), a ``write`` that puts a
whole frame (``frames.frame``) onto the transport at once, while the websocket is open and the
transport is not paused for flow control; otherwise it declines, and ``FrameSender`` sends
through ASGI, which waits for the transport.

The way in: while the websocket is open and websockets' parser waits at the start of a frame,
the clients' small data frames are read here (``SmallFrames``) and queued for the application
as uvicorn queues them, in an ``Inbox`` (asyncio's ``Queue`` is Python) that the application
reads with the protocol's ``receive``. From the first other frame (a ping, a close, a
fragment, a large one) on, websockets parses, from the start of that frame; the short way
resumes once its parser waits at a frame's start again.

Flow control: uvicorn stops reading the transport after every message. Here a small message
stops it only once ``UNREAD_LIMIT`` wait unread, a large one (``SMALL_BYTES``) at once; reading
starts again when the application has taken every message. While the transport holds more
than its high-water mark unsent (``pause_writing``), nothing is read either, so no reply (a
pong, an error frame, a close) piles up behind a client that does not read. Pings take a token
each from a bucket of the socket's own rate (``limit_pings``); a ping that finds it empty
closes the socket with 4429 (``CLOSE_FLOOD``). Input refused (text not UTF-8: 1007;
websockets' verdicts: 1002, 1009; a ping flood: 4429) closes the socket, is logged once at
INFO and counted by close code in ``REFUSED_TOTAL`` (``/metrics``).

The way into the websocket (``UpgradeProtocol``, uvicorn's HTTP protocol): the opening request
goes over as httptools parsed it (``WriteFrameProtocol.upgrade``), not written out as bytes for
websockets to parse again, and is checked by websockets' ``accept``. One answer differs: a
request with a body gets a 400, where uvicorn's way left it unanswered.

What this rides of uvicorn's and websockets' internals is listed in ``INTERNALS`` and checked
by tests/service/test_ws_protocol.py, which fails loudly if their shape changes; the versions
it was tested on are pinned in pyproject.toml. Closing is uvicorn's own.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from starlette.websockets import WebSocket
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.datastructures import Headers
from websockets.http11 import Request
from websockets.protocol import Protocol, State
from websockets.streams import StreamReader

from .frames import InvalidText, SmallFrames, frame
from .logs import address
from .metrics import Counter
from .ratelimit import TokenBucket

if TYPE_CHECKING:
    from uvicorn._types import ASGIReceiveEvent

EXTENSION = "olympus.frames"  # the protocol's own ways in and out: {"write": …, "receive": …}

Write = Callable[[bytes | str], bool]
Message = Mapping[str, Any]  # an ASGI message
Receive = Callable[[], Awaitable[Message]]

_WAITING_FOR_A_FRAME = StreamReader.at_eof.__code__

# Small messages a client may have waiting unread before its transport stops being read.
UNREAD_LIMIT = 16
SMALL_BYTES = 1 << 16  # bytes: a message the short way reads has a 7- or 16-bit length
# Pings a socket may send, per second and at once, until the application sets its own rate
# (``limit_pings``); the service's defaults for messages (settings.py).
PING_RATE, PING_BURST = 20.0, 40
CLOSE_FLOOD = 4429  # as the service closes a socket that floods it with messages (protocol.py)
CLOSE_INVALID_DATA = 1007  # RFC 6455 §7.4.1: text that is not UTF-8

# What this module rides beyond uvicorn's and websockets' public APIs: the attributes and
# methods of their objects it reads, sets or overrides, by the class whose instances have them.
# tests/service/test_ws_protocol.py checks each on live objects, so that a release that
# changes one fails there, loudly, instead of running slower (the short ways declining) or
# wrong; pyproject.toml pins the versions that passed.
INTERNALS: dict[str, tuple[str, ...]] = {
    "uvicorn WebSocketsSansIOProtocol": (
        "conn", "queue", "frames", "curr_msg_data_type", "close_sent", "read_paused",
        "transport", "loop", "client", "scope", "data_received", "handle_connect",
        "handle_ping", "handle_parser_exception", "send_receive_event_to_app",
        "pause_writing", "resume_writing", "receive",
    ),
    "uvicorn HttpToolsProtocol": (
        "headers", "url", "scope", "ws_protocol_class", "connections", "config",
        "server_state", "app_state", "transport", "send_400_response",
        "handle_websocket_upgrade",
    ),
    "websockets ServerProtocol": (
        "parser", "reader", "parser_exc", "current_size", "max_message_size", "state",
        "close_sent", "send_close", "fail", "data_to_send",
    ),
}  # fmt: skip

# Sockets closed for input the protocol refused, by close code (/metrics adds up every worker's,
# metrics.py; ``REFUSED_TOTAL.get(code)``: this process's).
REFUSED_TOTAL = Counter(
    "olympus_ws_refused_total",
    "Websockets closed for input refused (1002 protocol error, 1007 text not UTF-8, "
    "1009 too large, 4429 ping flood), by close code.",
    ("code",),
)

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
    _write_paused: bool = False  # the transport is over its high-water mark (flow control)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._inbox = Inbox(self.loop)
        self.queue = self._inbox  # type: ignore[assignment]
        self._pings = TokenBucket(PING_RATE, PING_BURST)
        self._small = SmallFrames(self.conn.max_message_size)

    def limit_pings(self, rate: float, burst: int) -> None:
        """Let the socket ping ``rate`` times per second on average, ``burst`` at once (the
        rate of its messages); a ping beyond closes it with ``CLOSE_FLOOD``."""
        self._pings = TokenBucket(rate, burst)

    def data_received(self, data: bytes) -> None:
        """The frames in ``data``: the small data frames read here (``SmallFrames``) while
        websockets' parser waits at a frame's start on an open websocket; from the first
        other frame on, websockets'."""
        if not self._direct or self.conn.state is not State.OPEN:
            self._to_websockets(data)
            return
        try:
            messages, rest = self._small.read(data)
        except InvalidText as invalid:
            self._give_all(invalid.messages)
            if not self.close_sent:
                self.conn.send_close(CLOSE_INVALID_DATA, "invalid UTF-8")
                self._refuse(str(invalid))
            return
        self._give_all(messages)
        if rest is not None:
            self._direct = False
            self._to_websockets(rest)

    def _give_all(self, messages: list[bytes | str]) -> None:
        for message in messages:
            if isinstance(message, str):
                self._give({"type": "websocket.receive", "text": message}, len(message))
            else:
                self._give({"type": "websocket.receive", "bytes": message}, len(message))

    def _give(self, message: Message, size: int) -> None:
        """Queue ``message`` (``size`` long) for the application. uvicorn stops reading after
        each message; here a small one stops it only once ``UNREAD_LIMIT`` wait, a large one
        at once. ``receive`` starts reading again once every message waiting is taken. Past
        the application's close, messages are dropped (reading goes on, for the client's
        close)."""
        if self.close_sent:
            return
        self._inbox.put_nowait(message)
        if not self.read_paused and (size >= SMALL_BYTES or len(self._inbox) >= UNREAD_LIMIT):
            self.read_paused = True
            self.transport.pause_reading()

    def send_receive_event_to_app(self) -> None:
        """uvicorn's hook for a message websockets parsed (its frames in ``frames``): text
        that is not UTF-8 closes the socket (1007, ``_refuse``)."""
        frames = self.frames
        data = frames[0] if len(frames) == 1 else b"".join(frames)
        self.frames = []
        if self.curr_msg_data_type != "text":
            self._give({"type": "websocket.receive", "bytes": data}, len(data))
            return
        try:
            text = data.decode()
        except UnicodeDecodeError as error:
            if not self.close_sent:
                self.conn.send_close(CLOSE_INVALID_DATA, "invalid UTF-8")
                self._refuse(f"invalid UTF-8 at position {error.start}")
            return
        self._give({"type": "websocket.receive", "text": text}, len(data))

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
        in ``REFUSED_TOTAL``, logged once at INFO (the socket is gone after it), then closed as
        uvicorn closes on a parser's error."""
        sent = self.conn.close_sent
        if sent is None or self.close_sent:  # nothing to say, or closing already
            self.close_sent = True
            self.transport.close()
            return
        REFUSED_TOTAL.inc(str(sent.code))
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
                "write_wire": self.write_wire,
                "receive": self.receive,  # without Starlette's on top
                "limit_pings": self.limit_pings,
                "paused": self.paused,
                "buffered": self.transport.get_write_buffer_size,
                "high_water": self.high_water,
                "abort": self.transport.abort,
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
        return self.write_wire(frame(data))

    def write_wire(self, data: bytes) -> bool:
        """Put ``data``, whole data frames already built (``frames.frame``: the same bytes may
        go to many sockets), on the transport; False, having written nothing, unless the
        websocket is open and the transport takes writes."""
        if (
            self._write_paused
            or self.conn.state is not State.OPEN
            or self.transport.is_closing()
        ):
            return False
        self.transport.write(data)
        return True

    def paused(self) -> bool:
        """The transport holds more than its high-water mark unsent (``pause_writing``)."""
        return self._write_paused

    def high_water(self, high: int, kernel: int | None) -> None:
        """Pause writing once the transport holds more than ``high`` bytes unsent (and
        resume below a quarter of it), instead of the event loop's default (64 KiB); with
        ``kernel``, the socket's own send buffer (SO_SNDBUF) instead of the kernel's
        autotuning."""
        self.transport.set_write_buffer_limits(high=high)
        if kernel is not None:
            sock = self.transport.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, kernel)


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


def _no(_: bytes) -> bool:
    return False


class FrameSender:
    """Sends a socket's frames: written at once when its protocol can (``WriteFrameProtocol``),
    else through ASGI (another server, a paused transport, a closing socket). Where the
    protocol offers them: frames already built written at once (``write_wire``), the bytes
    its transport holds unsent (``buffered``), its high-water mark set (``high_water``), and
    the connection dropped without a close handshake (``abort``)."""

    def __init__(self, ws: WebSocket) -> None:
        self.ws = ws
        offered = _offered(ws)
        self._write: Write | None = offered.get("write")
        self.write_wire: Callable[[bytes], bool] = offered.get("write_wire", _no)
        self._paused: Callable[[], bool] | None = offered.get("paused")
        self._buffered: Callable[[], int] | None = offered.get("buffered")
        self._high_water: Callable[[int, int | None], None] | None = offered.get("high_water")
        self._abort: Callable[[], None] | None = offered.get("abort")

    def paused(self) -> bool:
        """The transport is over its high-water mark (False where the protocol cannot say)."""
        return self._paused is not None and self._paused()

    def buffered(self) -> int:
        """Bytes the transport holds unsent (0 where the protocol cannot say)."""
        return 0 if self._buffered is None else self._buffered()

    def high_water(self, high: int, kernel: int | None) -> None:
        """``WriteFrameProtocol.high_water``, where the protocol offers it."""
        if self._high_water is not None:
            self._high_water(high, kernel)

    def abort(self) -> None:
        """Drop the TCP connection at once, and what its transport holds unsent."""
        if self._abort is not None:
            self._abort()

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
