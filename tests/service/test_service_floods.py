"""What a hostile client can make a server hold or write, on real sockets.

- A client that pings and never reads: whatever the server must answer counts against the
  connection. Once the transport holds its high-water mark unsent, the server stops reading
  that socket (the kernel's buffers then stop the client), so its memory stays bounded; every
  other connection is served meanwhile. Pings are limited like messages: past the socket's
  rate and burst the socket is closed with 4429.
- A client that sends bad input: a socket closed for it (text not UTF-8, 1007) is logged once,
  at INFO, and counted in ``/metrics``; error frames are counted each and logged once per
  connection. No traceback, nothing at WARNING or above.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import select
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from process_harness import ServerProcess, wait_until
from service_harness import ServerThread, UvicornThread, WsClient, create_game
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket
from websockets.asyncio.client import connect

from olympus.server import Settings
from olympus.server.ws_protocol import CLOSE_FLOOD, PING_BURST, REFUSED_TOTAL, receiver

MIB = 1 << 20
FLOOD_BYTES = 48 * MIB  # of pings, more than the bound below by far
# What the server may hold for a client that never reads: the transport's high-water mark and
# the replies to one read of the socket, and the allocator's slack around them.
RSS_BOUND = 16 * MIB
STALL_SECONDS = 5.0  # no write taken for this long: the server stopped reading (checked below)


def masked(first: int, payload: bytes) -> bytes:
    """A client's small frame (RFC 6455 §5.2): masked, a 7-bit length."""
    assert len(payload) < 126
    mask = os.urandom(4)
    return bytes([first, 0x80 | len(payload)]) + mask + bytes(
        b ^ mask[i % 4] for i, b in enumerate(payload)
    )


PING = 0x89
TEXT = 0x81


def rss(pid: int) -> int:
    """The resident memory of process ``pid``, in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


def unread_by_server(server_port: int, client_port: int) -> int:
    """Bytes the server's end of the connection has received and not read (its socket's
    receive queue, from /proc/net/tcp)."""
    local = f"0100007F:{server_port:04X}"
    remote = f"0100007F:{client_port:04X}"
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[1] == local and fields[2] == remote:
            return int(fields[4].split(":")[1], 16)
    raise AssertionError("no such connection")


def open_raw(port: int, path: str = "/ws") -> socket.socket:
    """A websocket, opened by hand on a socket whose receive buffer is small; the response's
    head read, nothing after it ever."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        (
            f"GET {path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            "Sec-WebSocket-Protocol: olympus.json\r\n\r\n"
        ).encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(1)  # one byte at a time: nothing after the head is taken
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def flood(sock: socket.socket, frames: bytes, total: int) -> int:
    """Write ``frames`` over and over, ``total`` bytes at most; stop early once the socket
    takes nothing for ``STALL_SECONDS`` (the peer stopped reading). Returns the bytes sent."""
    sock.setblocking(False)
    sent = 0
    view = memoryview(frames)
    at = 0
    while sent < total:
        _, writable, _ = select.select([], [sock], [], STALL_SECONDS)
        if not writable:
            break
        n = sock.send(view[at:])
        sent += n
        at = (at + n) % len(frames)
        if at:
            view = memoryview(frames)  # (the rest of the chunk first, then whole chunks)
    return sent


@pytest.fixture
async def service(tmp_path: Path) -> AsyncIterator[ServerProcess]:
    """``olympus serve`` as a real process with its embedded Redis, its rate limit lifted (the
    harness's): what bounds a flood of pings here is the write side, not the limiter."""
    server = ServerProcess("flooded", None, "floods", tmp_path).spawn()
    try:
        await server.wait_healthy()
        yield server
    finally:
        server.kill()


async def test_a_client_that_pings_and_never_reads_cannot_grow_the_server(
    service: ServerProcess,
) -> None:
    """48 MiB of masked 125-byte pings from a spectator whose socket is never read: the server
    stops reading it (its receive queue stays full while the server answers others), and its
    resident memory grows by less than ``RSS_BOUND``; another client's ping is answered."""
    async with httpx.AsyncClient(base_url=service.url) as http:
        game = await create_game(http)
    sock = open_raw(service.port)
    try:
        sock.sendall(masked(TEXT, f'{{"type":"hello","spectate":"{game.room}"}}'.encode()))
        await asyncio.sleep(0)
        before = rss(service.pid)
        chunk = masked(PING, b"p" * 125) * 8000  # ~1 MiB
        sent = await asyncio.to_thread(flood, sock, chunk, FLOOD_BYTES)
        assert sent < FLOOD_BYTES, "the server read every ping: nothing held it back"
        other = await WsClient.open(service.ws_url)  # served meanwhile
        await other.hello(spectate=game.room, last_seq=0, epoch=game.epoch)
        await other.send({"type": "ping"})
        await other.expect("pong")
        client_port = sock.getsockname()[1]
        assert unread_by_server(service.port, client_port) > 0  # held, not merely slow
        grown = rss(service.pid) - before
        assert grown < RSS_BOUND, f"{grown / MIB:.1f} MiB held for a client that never reads"
        await other.close()
    finally:
        sock.close()


def pinged() -> Starlette:
    """Accepts, limits the socket's pings to a small burst as the service does, then reads
    until the socket is gone."""

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept()
        ws.scope["extensions"]["olympus.frames"]["limit_pings"](1.0, PING_BURST)
        receive = receiver(ws)
        while (await receive())["type"] != "websocket.disconnect":
            pass

    return Starlette(routes=[WebSocketRoute("/ws", endpoint)])


async def test_pings_beyond_the_rate_close_the_socket_with_4429(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``PING_BURST`` pings at once are answered; the pings after them, at a rate far above
    the socket's, close it with 4429, once logged and counted."""
    server = UvicornThread(pinged(), Settings(redis_url="unused")).start()
    before = REFUSED_TOTAL.get(str(CLOSE_FLOOD))
    try:
        with caplog.at_level(logging.INFO):
            async with connect(server.ws_url, ping_interval=None) as client:
                burst = await asyncio.gather(*(client.ping(str(n)) for n in range(PING_BURST)))
                await asyncio.wait_for(asyncio.gather(*burst), 30)  # every one answered
                client.transport.write(masked(PING, b"more") * (4 * PING_BURST))
                await asyncio.wait_for(client.wait_closed(), 30)
            assert client.close_code == CLOSE_FLOOD
    finally:
        await server.aclose()
    assert REFUSED_TOTAL.get(str(CLOSE_FLOOD)) == before + 1
    said = [r for r in caplog.records if r.name == "olympus.server.ws_protocol"]
    assert [(r.levelno, getattr(r, "code", None)) for r in said] == [(logging.INFO, CLOSE_FLOOD)]


async def test_bad_input_is_logged_once_per_connection_and_counted(
    server: ServerThread, caplog: pytest.LogCaptureFixture
) -> None:
    """Twenty connections each send text that is not UTF-8 (each closed, 1007), and one sends
    thirty malformed frames (thirty error frames): one INFO line for each connection, no
    traceback and nothing at WARNING or above from any logger; ``/metrics`` counts them all."""
    refused_before = int(REFUSED_TOTAL.get("1007"))
    with caplog.at_level(logging.DEBUG):
        for _ in range(20):
            async with connect(server.ws_url, ping_interval=None) as client:
                client.transport.write(masked(TEXT, b"\xff\xfe not UTF-8"))
                await asyncio.wait_for(client.wait_closed(), 30)
            assert client.close_code == 1007
        chatty = await WsClient.open(server.ws_url)
        for _ in range(30):
            await chatty.ws.send("{not json")
            assert (await chatty.expect("error"))["code"] == "bad_frame"
        await chatty.close()
    assert REFUSED_TOTAL.get("1007") == refused_before + 20
    loud = [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert loud == [], [r.getMessage() for r in loud]
    closed = [r for r in caplog.records if r.name == "olympus.server.ws_protocol"]
    assert [(r.levelno, getattr(r, "code", None)) for r in closed] == [(logging.INFO, 1007)] * 20
    refusals = [r for r in caplog.records if r.getMessage().startswith("refused: ")]
    assert [r.levelno for r in refusals] == [logging.INFO] + [logging.DEBUG] * 29
    async with httpx.AsyncClient(base_url=server.url) as http:
        metrics = (await http.get("/metrics")).text
    assert f'olympus_ws_refused_total{{code="1007"}} {refused_before + 20}' in metrics
    assert 'olympus_ws_errors_total{code="bad_frame"} 30' in metrics


async def test_a_malformed_request_is_logged_at_info(service: ServerProcess) -> None:
    """uvicorn's line for a request it cannot parse (answered 400) comes at INFO in the
    process's JSON log: the client's fault, once per connection, not an alert."""
    reader, writer = await asyncio.open_connection("127.0.0.1", service.port)
    writer.write(b"NOT HTTP AT ALL\r\n\r\n")
    answer = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    assert answer.startswith(b"HTTP/1.1 400")

    def lines() -> list[dict]:
        said = [json.loads(line) for line in service.log_tail(1 << 20).splitlines() if line]
        return [line for line in said if line.get("msg") == "Invalid HTTP request received."]

    await wait_until(lambda: bool(lines()), what="the malformed request's log line")
    assert [line["level"] for line in lines()] == ["info"]
