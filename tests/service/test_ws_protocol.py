"""Frames written straight to the transport and read straight from it (server/ws_protocol.py),
on a real uvicorn.

What a client receives must be what it would have received through ASGI: the same payloads, in
the same order, text or binary, at every length where a frame's header changes its form
(RFC 6455 §5.2: 7-bit, 16-bit, 64-bit lengths). Once the websocket closes, the short way out
declines, and ``FrameSender`` goes through ASGI, as it does on a server without it.

What the application receives must be what websockets would have given it, however the bytes
are cut into reads, with control frames and frames the short way in leaves to websockets
between them; and a frame websockets refuses is refused as before.

The way in (``UpgradeProtocol``): a websocket's opening request is parsed once, by httptools,
and answered as uvicorn's own protocols answer it, refusals included.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import httpx
import pytest
import websockets.frames
import websockets.http11
from service_harness import UvicornThread
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.asyncio.client import connect

from olympus.server import Settings
from olympus.server.ws_protocol import (
    EXTENSION,
    INTERNALS,
    SMALL_BYTES,
    UNREAD_LIMIT,
    FrameSender,
    Inbox,
    receiver,
)

LENGTHS = (0, 1, 125, 126, 127, 65_535, 65_536, 70_000)
PAYLOADS: list[bytes | str] = [
    *(bytes([n % 251]) * n for n in LENGTHS),
    *("é" * (n // 2) + "x" * (n % 2) for n in LENGTHS),  # 2 bytes per "é": the length is bytes
]


def app(said: list[Any]) -> Starlette:
    """Sends ``PAYLOADS`` the short way if the protocol offers it (``said`` gets each answer),
    else with ``FrameSender`` (through ASGI); closes, then tries the short way once more."""

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        write = ws.scope["extensions"].get(EXTENSION, {}).get("write")
        sender = FrameSender(ws)
        for payload in PAYLOADS:
            if write is not None:
                said.append(write(payload))
            else:
                await sender.send(payload)
        await ws.close(1000)
        said.append(None if write is None else write(b"after the close"))

    return Starlette(routes=[WebSocketRoute("/ws", endpoint)])


@pytest.mark.parametrize("ws", ["olympus", "websockets-sansio"])
async def test_frames_arrive_as_sent(ws: str) -> None:
    """With the service's protocol (``uvicorn_config``) and with uvicorn's own."""
    said: list[Any] = []
    overrides = {} if ws == "olympus" else {"ws": ws}
    server = UvicornThread(app(said), Settings(redis_url="unused"), **overrides).start()
    try:
        async with connect(server.ws_url, max_size=None) as client:
            received = [await asyncio.wait_for(client.recv(), 30) for _ in PAYLOADS]
            await client.wait_closed()
        assert client.close_code == 1000
        assert received == PAYLOADS
        if ws == "olympus":  # each frame went the short way; none once closing
            assert said == [True] * len(PAYLOADS) + [False]
        else:
            assert said == [None]
    finally:
        await server.aclose()


async def test_the_short_way_declines_while_the_transport_is_paused() -> None:
    """A client that reads nothing fills the kernel's buffers, then the transport's, and the
    transport pauses writing (flow control): the short way then declines, the frame goes
    through ASGI, which waits for the transport to drain, and everything arrives in order.
    Once drained, the short way takes frames again."""
    payload = 1 << 16
    declined = asyncio.Event()
    said: list[Any] = []
    loop = asyncio.get_running_loop()

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        write = ws.scope["extensions"][EXTENSION]["write"]
        n = 0
        while n < 1024 and write(n.to_bytes(4, "big") * (payload // 4)):  # (64 KiB each)
            n += 1
        said.append(n)
        loop.call_soon_threadsafe(declined.set)
        await FrameSender(ws).send(n.to_bytes(4, "big") * (payload // 4))
        await ws.receive()  # the client has read everything: the transport took it all
        said.append(write(b"again"))  # resumed: the short way again
        await ws.close(1000)

    server = UvicornThread(
        Starlette(routes=[WebSocketRoute("/ws", endpoint)]), Settings(redis_url="unused")
    ).start()
    try:
        async with connect(server.ws_url, max_size=None, ping_interval=None) as client:
            await asyncio.wait_for(declined.wait(), 60)  # read nothing until it declined
            written = said[0]
            assert 0 < written < 1024  # declined, with the websocket open: paused
            received = [await asyncio.wait_for(client.recv(), 30) for _ in range(written + 1)]
            await client.send(b"read")
            assert await asyncio.wait_for(client.recv(), 30) == b"again"
            await client.wait_closed()
        assert [int.from_bytes(r[:4], "big") for r in received] == list(range(written + 1))
        assert all(len(r) == payload for r in received)
        assert said[1] is True
    finally:
        await server.aclose()


@pytest.fixture
def websockets_parsed(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """Each frame websockets' own parser read on the server's side (a client's frames are
    masked), as (opcode, payload length): the frames ``WriteFrameProtocol`` did not read
    itself."""
    noted: list[tuple[int, int]] = []
    parse = websockets.frames.Frame.parse.__func__  # type: ignore[attr-defined]

    def watched(cls: type[websockets.frames.Frame], *args: Any, **kwargs: Any) -> Any:
        parsed = yield from parse(cls, *args, **kwargs)
        if kwargs["mask"]:  # the server's parser: the test's client parses unmasked frames
            noted.append((parsed.opcode.value, len(parsed.data)))
        return parsed

    monkeypatch.setattr(websockets.frames.Frame, "parse", classmethod(watched))
    return noted


def frame(first: int, payload: bytes, *, masked: bool = True) -> bytes:
    """A client's frame (RFC 6455 §5.2): ``first`` its first byte (FIN, RSV, opcode)."""
    n = len(payload)
    if n < 126:
        head = bytes([first, (0x80 if masked else 0) | n])
    elif n < 1 << 16:
        head = bytes([first, (0x80 if masked else 0) | 126]) + n.to_bytes(2, "big")
    else:
        head = bytes([first, (0x80 if masked else 0) | 127]) + n.to_bytes(8, "big")
    if not masked:
        return head + payload
    mask = os.urandom(4)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


TEXT, BINARY, PING = 0x81, 0x82, 0x89
SMALL = (0, 1, 125, 126, 1000, 65_535)  # 7- and 16-bit lengths: the short way's
# What the short way leaves to websockets: 64-bit lengths, a ping.
LARGE: list[tuple[int, bytes]] = [
    (BINARY, b"\x07" * 65_536),
    (PING, b"between"),
    (TEXT, b"x" * 70_000),
]


def small(first: int) -> list[tuple[int, bytes]]:
    """A frame of each small length, with text in two bytes per "é" (lengths are of bytes)."""
    if first == BINARY:
        return [(first, bytes([n % 251]) * n) for n in SMALL]
    return [(first, ("é" * (n // 2) + "x" * (n % 2)).encode()) for n in SMALL]


def echo() -> Starlette:
    """Sends back every message as it was received, text or binary; read as the service reads
    (``receiver``: the protocol's own ``receive`` where it offers it)."""

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        receive = receiver(ws)
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            if message.get("bytes") is not None:
                await ws.send_bytes(message["bytes"])
            else:
                await ws.send_text(message["text"])

    return Starlette(routes=[WebSocketRoute("/ws", endpoint)])


@pytest.mark.parametrize("cut", [1, 3, 7, 1000, None])
async def test_frames_in_are_read_as_websockets_reads_them(
    cut: int | None, websockets_parsed: list[tuple[int, int]]
) -> None:
    """Three volleys of frames, each written at once or cut into writes of ``cut`` bytes:
    small frames, then what the short way leaves to websockets (long frames, a ping), then
    small frames again. Each data frame reaches the application whole and in order, the ping
    is websockets' (the client's own ping is still answered after it), and the short way reads
    the small frames, also after websockets had to read, and from the first (the handshake
    leaves websockets' parser waiting at a frame's start: ``WriteFrameProtocol.upgrade``)."""
    server = UvicornThread(echo(), Settings(redis_url="unused")).start()
    try:
        async with connect(server.ws_url, max_size=None, ping_interval=None) as client:
            await client.send(b"first")
            assert await client.recv() == b"first"
            for volley in (small(BINARY), LARGE, small(TEXT)):
                stream = b"".join(frame(first, payload) for first, payload in volley)
                step = cut or len(stream)
                for at in range(0, len(stream), step):
                    client.transport.write(stream[at : at + step])
                    if cut is not None and cut < 10:
                        await asyncio.sleep(0)  # the server reads between the pieces
                data = [(first, payload) for first, payload in volley if first != PING]
                received = [await asyncio.wait_for(client.recv(), 30) for _ in data]
                assert received == [p if first == BINARY else p.decode() for first, p in data]
            pong = await client.ping(b"still there")
            await asyncio.wait_for(pong, 30)
            parsed = list(websockets_parsed)  # (before the client's close)
        # websockets read what the short way leaves to it (the client's ping last), no more
        left = [(first & 0x0F, len(payload)) for first, payload in LARGE]
        assert parsed == [*left, (PING & 0x0F, len(b"still there"))]
    finally:
        await server.aclose()


@pytest.mark.parametrize(
    ("writes", "code"),
    [
        ([frame(TEXT, b"\xff\xfe not UTF-8")], 1007),
        ([frame(BINARY, b"unmasked", masked=False)], 1002),
        ([frame(0xC2, b"compressed, not negotiated")], 1002),
        ([frame(0x02, b"a fragment") + frame(0x80, b"its end")], None),
        # RFC 6455 §5.4: no data frame until a fragmented message ends
        ([frame(0x01, b"the first fragment"), frame(TEXT, b"a message inside")], 1002),
    ],
)
async def test_frames_websockets_refuses_are_refused(writes: list[bytes], code: int | None) -> None:
    """After a frame read the short way, ``writes`` (each read by the server before the next
    is written: a ping sent after it is answered): invalid text closes with 1007; an unmasked
    frame, unknown extension bits or a data frame between the fragments of a message with 1002
    (websockets' verdicts); a fragmented message is joined by websockets and given whole."""
    server = UvicornThread(echo(), Settings(redis_url="unused")).start()
    try:
        async with connect(server.ws_url, ping_interval=None) as client:
            for _ in range(2):  # the second is read by the short way
                await client.send(b"fine")
                assert await client.recv() == b"fine"
            for at, data in enumerate(writes):
                if at:
                    await asyncio.wait_for(await client.ping(b"read it?"), 30)
                client.transport.write(data)
            if code is None:
                assert await asyncio.wait_for(client.recv(), 30) == b"a fragmentits end"
                return
            await asyncio.wait_for(client.wait_closed(), 30)
        assert client.close_code == code
    finally:
        await server.aclose()


def held_back(counts: tuple[int, ...]) -> Starlette:
    """Reads nothing until ``counts[0]``, then ``counts[1]``… messages wait unread, telling the
    client each time whether its transport is being read; then takes them all and tells that,
    with what it took; then echoes one more message."""

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        receive = receiver(ws)
        protocol = ws.scope["extensions"][EXTENSION]["receive"].__self__
        for waiting in counts:
            async with asyncio.timeout(30):
                while len(protocol.queue) < waiting:
                    await asyncio.sleep(0.005)  # the protocol reads them meanwhile
            reading = protocol.transport.is_reading()
            await ws.send_json({"reading": reading, "waiting": len(protocol.queue)})
        taken = [len((await receive())["bytes"]) for _ in range(counts[-1])]
        await ws.send_json({"reading": protocol.transport.is_reading(), "taken": taken})
        await ws.send_bytes((await receive())["bytes"])

    return Starlette(routes=[WebSocketRoute("/ws", endpoint)])


async def test_a_client_is_read_until_too_many_of_its_messages_wait() -> None:
    """Reading stops once ``UNREAD_LIMIT`` small messages wait unread (not after each, as
    uvicorn does) and starts again when the application has taken them; none is lost or
    reordered. The first message is websockets' to read (the short way starts after it)."""
    counts = (UNREAD_LIMIT - 1, UNREAD_LIMIT)
    server = UvicornThread(held_back(counts), Settings(redis_url="unused")).start()
    try:
        async with connect(server.ws_url, ping_interval=None) as client:
            for n in range(UNREAD_LIMIT - 1):
                await client.send(b"x" * (n + 1))
            assert json.loads(await client.recv()) == {"reading": True, "waiting": UNREAD_LIMIT - 1}
            await client.send(b"x" * UNREAD_LIMIT)
            assert json.loads(await client.recv()) == {"reading": False, "waiting": UNREAD_LIMIT}
            taken = list(range(1, UNREAD_LIMIT + 1))
            assert json.loads(await client.recv()) == {"reading": True, "taken": taken}
            await client.send(b"after")
            assert await asyncio.wait_for(client.recv(), 30) == b"after"
    finally:
        await server.aclose()


async def test_a_large_message_stops_reading_at_once() -> None:
    """A message of ``SMALL_BYTES`` or more (websockets reads it) stops reading at once, as
    uvicorn does: what a client can make the process hold stays bounded in bytes."""
    server = UvicornThread(held_back((2,)), Settings(redis_url="unused")).start()
    try:
        async with connect(server.ws_url, ping_interval=None, max_size=None) as client:
            await client.send(b"small")
            await client.send(b"x" * SMALL_BYTES)
            assert json.loads(await client.recv()) == {"reading": False, "waiting": 2}
            assert json.loads(await client.recv()) == {"reading": True, "taken": [5, SMALL_BYTES]}
            await client.send(b"after")
            assert await asyncio.wait_for(client.recv(), 30) == b"after"
    finally:
        await server.aclose()


async def test_an_inbox_keeps_order_through_a_cancelled_wait_and_has_one_reader() -> None:
    """What uvicorn asks of its queue (put_nowait, get, empty), as asyncio.Queue does it: a
    wait cancelled (the hello timeout's ``wait_for``) takes nothing, messages come out in the
    order they went in; and a second reader at once is refused instead of left waiting."""
    inbox = Inbox(asyncio.get_running_loop())
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(inbox.get(), 0.01)
    assert inbox.empty()
    waiting = asyncio.ensure_future(inbox.get())
    await asyncio.sleep(0)  # it waits
    with pytest.raises(RuntimeError, match="one reader"):  # (not stuck, were it let wait)
        await asyncio.wait_for(inbox.get(), 5)
    inbox.put_nowait({"type": "websocket.receive", "text": "1"})
    inbox.put_nowait({"type": "websocket.receive", "text": "2"})
    assert (await waiting)["text"] == "1"
    assert not inbox.empty()
    assert (await inbox.get())["text"] == "2"
    assert inbox.empty()


def scope_echo() -> Starlette:
    """Accepts with the first subprotocol offered and sends back what the scope says of the
    request, as JSON."""

    async def endpoint(ws: WebSocket) -> None:
        offered = ws.scope["subprotocols"]
        await ws.accept(subprotocol=offered[0] if offered else None)
        said = {
            "path": ws.scope["path"],
            "query_string": ws.scope["query_string"].decode(),
            "subprotocols": offered,
            "headers": [[n.decode(), v.decode("latin-1")] for n, v in ws.scope["headers"]],
        }
        await ws.send_text(json.dumps(said))
        await ws.close(1000)

    return Starlette(routes=[WebSocketRoute("/ws", endpoint)])


KEY = "dGhlIHNhbXBsZSBub25jZQ=="  # RFC 6455 §1.3's example: its answer below
ANSWER = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
OPENING = (
    "GET /ws?room=r1 HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: {version}\r\n"
    "Sec-WebSocket-Protocol: olympus.msgpack, olympus.json\r\nX-Note: caf\xe9\r\n{more}\r\n"
)
REQUESTS = {
    "accepted": OPENING.format(key=KEY, version=13, more=""),
    "a bad key": OPENING.format(key="short", version=13, more=""),
    "another version": OPENING.format(key=KEY, version=8, more=""),
    "an empty body": OPENING.format(key=KEY, version=13, more="Content-Length: 0\r\n"),
    # httptools keeps what ends a header's value, websockets' parser strips it (RFC 9110 §5.5)
    "spaces after values": OPENING.format(key=KEY + " \t", version="13 ", more=""),
    "a target not ASCII": OPENING.format(key=KEY, version=13, more="").replace("r1", "r\xe9", 1),
    "HTTP/1.0": OPENING.format(key=KEY, version=13, more="").replace("HTTP/1.1", "HTTP/1.0", 1),
    "not a GET": "POST" + OPENING.format(key=KEY, version=13, more="")[3:],
}


async def exchange(port: int, request: str) -> tuple[list[str], bytes]:
    """``request``'s bytes on a new connection: the response's head (without its Date), and
    what followed it until the server closed."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request.encode("latin-1"))
    try:
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        rest = await asyncio.wait_for(reader.read(), 30)
    finally:
        writer.close()
    lines = head.decode("latin-1").split("\r\n")
    return [line for line in lines if not line.lower().startswith("date:")], rest


@pytest.mark.parametrize("case", list(REQUESTS))
async def test_an_opening_request_is_parsed_once_and_answered_as_uvicorn_answers_it(
    case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same request, to the service's protocols (``uvicorn_config``) and to uvicorn's own
    (httptools, then websockets parsing the request again): the same response and the same
    scope for the application, while websockets' request parser runs only for uvicorn's (a
    target not ASCII is refused by httptools, before either)."""
    parsed: list[str] = []
    parse = websockets.http11.Request.parse.__func__  # type: ignore[attr-defined]

    def watched(cls: type[websockets.http11.Request], read_line: Any) -> Any:
        request = yield from parse(cls, read_line)  # (begun with every protocol: counted once done)
        parsed.append(request.path)
        return request

    monkeypatch.setattr(websockets.http11.Request, "parse", classmethod(watched))
    answers, parses = {}, {}
    for http in ("olympus", "httptools"):
        overrides = {} if http == "olympus" else {"http": http}
        server = UvicornThread(scope_echo(), Settings(redis_url="unused"), **overrides).start()
        try:
            parsed.clear()
            answers[http] = await exchange(server.port, REQUESTS[case])
            parses[http] = len(parsed)
        finally:
            await server.aclose()
    assert answers["olympus"] == answers["httptools"]
    assert parses == {"olympus": 0, "httptools": 0 if case == "a target not ASCII" else 1}
    head, rest = answers["olympus"]
    if case in ("accepted", "an empty body", "spaces after values", "HTTP/1.0"):  # (1.0 as 1.1)
        assert head[0] == "HTTP/1.1 101 Switching Protocols"
        assert f"Sec-WebSocket-Accept: {ANSWER}" in head
        assert "Sec-WebSocket-Protocol: olympus.msgpack" in head
        assert rest[:2] == bytes([TEXT, 126])  # unmasked, a 16-bit length (RFC 6455 §5.2)
        said = json.loads(rest[4 : 4 + int.from_bytes(rest[2:4], "big")])
        assert said["path"] == "/ws" and said["query_string"] == "room=r1"
        assert said["subprotocols"] == ["olympus.msgpack", "olympus.json"]
        assert ["x-note", "café"] in said["headers"]
    else:
        assert head[0].startswith(("HTTP/1.1 4", "HTTP/1.0 4")), head


@pytest.mark.parametrize("body", ["Content-Length: 2\r\n", "Transfer-Encoding: chunked\r\n"])
async def test_an_opening_request_with_a_body_is_refused_clearly(body: str) -> None:
    """websockets' parser refuses a request with a body; on uvicorn's way the refusal was never
    written and the client waited. Here: a 400 that says why, and the connection closed."""
    server = UvicornThread(scope_echo(), Settings(redis_url="unused")).start()
    try:
        head, rest = await exchange(server.port, OPENING.format(key=KEY, version=13, more=body))
    finally:
        await server.aclose()
    assert head[0] == "HTTP/1.1 400 Bad Request"
    assert rest == b"A websocket's opening request has no body."


async def test_the_internals_the_protocol_rides_are_there() -> None:
    """Every attribute and method of uvicorn's and websockets' objects that ``ws_protocol``
    reads, sets or overrides (``INTERNALS``) is there on live objects: the websocket's protocol
    and its websockets connection while a socket is open, the HTTP protocol of a kept-alive
    connection after a request. A release that renames one fails here, not in production."""
    seen: dict[str, object] = {}

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        protocol = ws.scope["extensions"][EXTENSION]["receive"].__self__
        seen["uvicorn WebSocketsSansIOProtocol"] = protocol
        seen["websockets ServerProtocol"] = protocol.conn
        await ws.send_text("seen")
        await receiver(ws)()

    async def page(request: Any) -> Any:
        return PlainTextResponse("page")

    app = Starlette(routes=[WebSocketRoute("/ws", endpoint), Route("/", page)])
    server = UvicornThread(app, Settings(redis_url="unused")).start()
    try:
        async with connect(server.ws_url) as client:
            assert await asyncio.wait_for(client.recv(), 30) == "seen"
        async with httpx.AsyncClient(base_url=server.url) as http:
            assert (await http.get("/")).text == "page"
            kept = [p for p in server.server.server_state.connections if hasattr(p, "parser")]
            seen["uvicorn HttpToolsProtocol"] = next(iter(kept))
    finally:
        await server.aclose()
    assert set(seen) == set(INTERNALS)
    missing = {
        owner: [name for name in names if not hasattr(seen[owner], name)]
        for owner, names in INTERNALS.items()
    }
    assert missing == {owner: [] for owner in INTERNALS}
    # the names the protocols override are uvicorn's own methods, not new ones
    for name in ("handle_ping", "handle_parser_exception", "send_receive_event_to_app"):
        assert callable(getattr(WebSocketsSansIOProtocol, name))
    assert callable(HttpToolsProtocol.handle_websocket_upgrade)
