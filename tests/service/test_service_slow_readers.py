"""A socket that stops reading holds a bounded buffer, delays nobody, and is closed (4413).

The stalled client is a real TCP socket with a tiny receive buffer that says ``hello`` and then
reads nothing. Nothing here is timed: the game is played to its end, each socket that reads
waits for every message it is owed, and the server's own state is sampled between commands.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import socket
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from service_harness import (
    Oracle,
    ServerThread,
    WsClient,
    check_feed,
    create_game,
    drive,
    seat,
)

from olympus.rules import Faction
from olympus.server.connection import Connection
from olympus.store import EventStore

HIGH_WATER = 1024  # the transport's high-water mark here (bytes)
BOUND = 4096  # the socket's queue while its transport is full (bytes)
# What one turn of the loop may write at once past the high-water mark, whatever the bound:
# the largest frame of a game (``game_over`` with the whole log) and a turn's other frames.
ONE_TURN = 256 * 1024


class StalledClient:
    """A websocket (JSON) that says ``hello`` and never reads again."""

    def __init__(self, port: int, hello: dict[str, Any]) -> None:
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
        self.sock.connect(("127.0.0.1", port))
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (
                f"GET /ws HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
                "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                f"Sec-WebSocket-Key: {key}\r\n\r\n"
            ).encode()
        )
        response = b""
        while b"\r\n\r\n" not in response:  # nothing follows it before the hello
            response += self.sock.recv(1)
        assert b" 101 " in response.split(b"\r\n")[0], response
        payload = json.dumps(hello).encode()
        mask = os.urandom(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        assert len(payload) < 126
        self.sock.sendall(bytes((0x81, 0x80 | len(payload))) + mask + masked)

    @property
    def address(self) -> str:
        host, port = self.sock.getsockname()
        return f"{host}:{port}"


def connection_of(server: ServerThread, address: str) -> Connection | None:
    """The server's end of the client at ``address``, while it has one."""
    found = [c for c in list(server.services.connections) if c.client == address]
    return found[0] if found else None


@pytest.mark.parametrize("stalled_kind", ["spectator", "seat"])
async def test_a_stalled_reader_delays_nobody_and_its_buffer_stays_bounded(
    start_server: Callable[..., ServerThread], store: EventStore, stalled_kind: str
) -> None:
    """A spectator, or a second socket of a seat, that stops reading: every other socket gets
    every message of a whole game, what the server holds for the stalled one never passes the
    bound (its queue ``send_buffer_bytes``; its transport the high-water mark and one turn's
    frames), and it is closed as too slow (4413, counted) and then dropped."""
    server = start_server(
        send_buffer_bytes=BOUND,
        send_high_water=HIGH_WATER,
        socket_send_buffer=4096,
        close_grace_seconds=0.5,
    )
    rng = random.Random(7)
    async with httpx.AsyncClient(base_url=server.url) as http:
        game = await create_game(http)
    for faction in Faction:
        await seat(server.ws_url, game, faction, last_seq=0, epoch=game.epoch)
    reader = await WsClient.open(server.ws_url)
    welcome = await reader.hello(spectate=game.room, last_seq=0, epoch=game.epoch)
    assert welcome["resumed"], welcome
    hello: dict[str, Any] = (
        {"type": "hello", "spectate": game.room}
        if stalled_kind == "spectator"
        else {"type": "hello", "token": game.tokens[Faction.OLYMPIANS]}
    )
    stalled = StalledClient(server.port, hello)
    oracle = Oracle(store, game.room)
    watchers: list[tuple[Faction | None, WsClient]] = [
        *((f, game.seats[f]) for f in Faction),
        (None, reader),
    ]
    held: list[tuple[int, int]] = []  # (queued, in the transport), sampled between commands

    def sample() -> None:
        conn = connection_of(server, stalled.address)
        if conn is not None:
            held.append((conn.queued_bytes, conn.sender.buffered()))

    sample()
    assert held, "the stalled client's connection was not found"
    await drive(game, oracle, rng, watchers, commands=0)  # both setups
    while True:
        played = await drive(game, oracle, rng, watchers, setup=False, commands=4)
        sample()
        if played < 4:
            break
    check_feed(reader, None, oracle)
    await reader.expect("game_over")
    for faction in Faction:
        check_feed(game.seats[faction], faction, oracle)
    assert all(queued <= BOUND for queued, _ in held), max(held)
    assert all(unsent <= HIGH_WATER + ONE_TURN for _, unsent in held), max(held)
    metrics = server.services.metrics
    deadline = asyncio.get_running_loop().time() + 30
    while connection_of(server, stalled.address) is not None:
        assert asyncio.get_running_loop().time() < deadline, "the stalled socket was kept"
        await asyncio.sleep(0.05)
    assert metrics.slow_closed.get(stalled_kind) == 1
    stalled.sock.close()
    await reader.close()
