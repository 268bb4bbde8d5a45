"""Spectator counts across processes and the lobby's featured game (server/watchers.py).

Two servers on one Redis prefix are two processes of one deployment: each writes its own
counts, and each lobby answer sums everyone's. Nothing here waits a fixed time: each test waits
for what it expects, with a timeout.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from service_harness import ServerThread, WsClient, create_game

PERIOD = 0.2  # seconds between two writes of a process's counts (Settings.watcher_seconds)
WAIT = 20.0


async def eventually(
    read: Callable[[], Awaitable[Any]], holds: Callable[[Any], bool], what: str
) -> Any:
    """``read()`` again until ``holds`` its answer (the counts are eventually consistent)."""
    deadline = time.monotonic() + WAIT
    while True:
        value = await read()
        if holds(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: still {value!r}")
        await asyncio.sleep(0.05)


async def spectate(server: ServerThread, room: str, **hello: Any) -> WsClient:
    client = await WsClient.open(server.ws_url)
    welcome = await client.hello(spectate=room, **hello)
    assert welcome["type"] == "welcome", welcome
    return client


async def test_spectator_counts_are_summed_over_processes(
    start_server: Callable[..., ServerThread],
) -> None:
    """Spectators of one game on two processes: the live list, the room's summary and the
    featured game say how many watch, on either process; a spectator who leaves is counted
    out, and a room nobody watches counts 0."""
    a, b = start_server(watcher_seconds=PERIOD), start_server(watcher_seconds=PERIOD)
    async with (
        httpx.AsyncClient(base_url=a.url, timeout=10) as on_a,
        httpx.AsyncClient(base_url=b.url, timeout=10) as on_b,
    ):
        game = await create_game(on_a)
        quiet = await create_game(on_a)
        watchers = [await spectate(a, game.room), *[await spectate(b, game.room) for _ in "xy"]]

        async def live(http: httpx.AsyncClient) -> dict[str, int]:
            rooms = (await http.get("/rooms", params={"status": "live"})).json()["rooms"]
            return {r["room"]: r["spectators"] for r in rooms}

        for http in (on_a, on_b):
            counts = await eventually(
                lambda h=http: live(h), lambda c: c.get(game.room) == 3, "three watch"
            )
            assert counts[quiet.room] == 0
        summary = (await on_b.get(f"/rooms/{game.room}")).json()
        assert summary["spectators"] == 3 and summary["status"] == "live"
        featured = (await on_a.get("/rooms/featured")).json()["room"]
        assert featured["room"] == game.room and featured["spectators"] == 3

        await watchers[2].close()  # one leaves process b
        for http in (on_a, on_b):
            await eventually(lambda h=http: live(h), lambda c: c.get(game.room) == 2, "two")
        await watchers[0].close()  # and the one of process a
        await eventually(lambda: live(on_b), lambda c: c.get(game.room) == 1, "one")


async def test_a_stopped_process_stops_counting(
    start_server: Callable[..., ServerThread],
) -> None:
    """A process that stops takes its spectators out of the counts at once."""
    a, b = start_server(watcher_seconds=PERIOD), start_server(watcher_seconds=PERIOD)
    async with httpx.AsyncClient(base_url=a.url, timeout=10) as on_a:
        game = await create_game(on_a)
        await spectate(a, game.room)
        await spectate(b, game.room)

        async def count() -> int:
            return int((await on_a.get(f"/rooms/{game.room}")).json()["spectators"])

        await eventually(count, lambda n: n == 2, "both processes' spectators")
        await b.aclose()
        await eventually(count, lambda n: n == 1, "the stopped process's spectator gone")


async def test_the_featured_game_is_the_most_watched_else_the_latest_moved(
    start_server: Callable[..., ServerThread],
) -> None:
    """No live game: none featured. Nobody watching: the game moved last. Then the game most
    watched, whichever moved last."""
    server = start_server(watcher_seconds=PERIOD)
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:

        async def featured() -> str | None:
            room = (await http.get("/rooms/featured")).json()["room"]
            return None if room is None else str(room["room"])

        assert await featured() is None
        first = await create_game(http)
        await eventually(featured, lambda r: r == first.room, "the only live game")
        second = await create_game(http)  # created (moved) after the first
        await eventually(featured, lambda r: r == second.room, "the latest game")
        await spectate(server, first.room)
        await eventually(featured, lambda r: r == first.room, "the watched game")
        assert (await http.get("/rooms/featured")).json()["room"]["spectators"] == 1
