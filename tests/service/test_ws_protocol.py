"""Frames written straight to the transport (server/ws_protocol.py), on a real uvicorn.

What a client receives must be what it would have received through ASGI: the same payloads, in
the same order, text or binary, at every length where a frame's header changes its form
(RFC 6455 §5.2: 7-bit, 16-bit, 64-bit lengths). Once the websocket closes, the short way out
declines, and ``FrameSender`` goes through ASGI, as it does on a server without it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from service_harness import UvicornThread
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket
from websockets.asyncio.client import connect

from olympus.server import Settings
from olympus.server.ws_protocol import EXTENSION, FrameSender

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
