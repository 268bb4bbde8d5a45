"""Rated games on PostgreSQL across processes: a rated game whose seats two server processes
serve changes the ratings once; a rating pass killed (``kill -9``) at each of its steps, in
the middle of its transaction included, leaves the game rated once by the next pass."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable

import asyncpg
import httpx
import pytest
from service_harness import TIMEOUT, ServerThread
from test_service_archive import until
from test_service_players import play_rated_game, sign_up

from olympus.ratings import glicko2
from olympus.server import Settings
from olympus.store import EventStore, open_backend

STEPS = ("read", "rating", "rated", "done")


@pytest.fixture
async def two_browsers(
    settings: Settings,
) -> AsyncIterator[Callable[[ServerThread], httpx.AsyncClient]]:
    opened: list[httpx.AsyncClient] = []

    def new(server: ServerThread) -> httpx.AsyncClient:
        client = httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT)
        opened.append(client)
        return client

    yield new
    for client in opened:
        await client.aclose()


async def rows(database_url: str) -> dict[str, list[tuple[object, ...]]]:
    connection = await asyncpg.connect(database_url)
    try:
        return {
            "rated_games": [
                tuple(r) for r in await connection.fetch("SELECT room_id, result FROM rated_games")
            ],
            "rating_changes": [
                tuple(r)
                for r in await connection.fetch(
                    "SELECT room_id, seat, rating_after FROM rating_changes ORDER BY seat"
                )
            ],
            "accounts": [
                tuple(r)
                for r in await connection.fetch(
                    "SELECT name, rated_games, rating FROM accounts ORDER BY name"
                )
            ],
        }
    finally:
        await connection.close()


def expected_ratings(result: str) -> dict[str, float]:
    """Each seat's rating after one game between two new players, by the paper's formulas."""
    score = {"olympians": 1.0 if result == "olympians" else 0.5 if result == "draw" else 0.0}
    score["chthonians"] = 1.0 - score["olympians"]
    fresh = glicko2.DEFAULT
    return {seat: glicko2.rate(fresh, [glicko2.Outcome(fresh, s)]).r for seat, s in score.items()}


async def test_a_rated_game_served_by_two_processes_is_rated_once(
    start_server: Callable[..., ServerThread],
    two_browsers: Callable[[ServerThread], httpx.AsyncClient],
    store: EventStore,
    database_url: str,
    settings: Settings,
) -> None:
    options = {"archive_url": database_url, "rating_poll_seconds": 0.05}
    servers = (start_server(**options), start_server(**options))
    ann, bo = two_browsers(servers[0]), two_browsers(servers[1])
    csrf = (await sign_up(ann, "Ann"), await sign_up(bo, "Bo"))
    game = await play_rated_game(servers, store, ann, bo, csrf)
    await until(lambda: _rated(database_url))
    first = await rows(database_url)
    result = first["rated_games"][0][1]
    assert first["rated_games"] == [(game.room, result)]
    expected = expected_ratings(str(result))
    assert [(r[1], round(r[2], 6)) for r in first["rating_changes"]] == [
        (seat, round(expected[seat], 6)) for seat in ("chthonians", "olympians")
    ]
    assert [a[1] for a in first["accounts"]] == [1, 1]
    # the room queued again, as a process that died before its "done" would leave it: both
    # processes' raters pass over it, and nothing changes
    backend = open_backend(settings.store_config())
    await backend.rating_queue.set_due(game.room, 0)
    await until(lambda: _unqueued(backend, game.room))
    await backend.aclose()
    assert await rows(database_url) == first


async def _rated(database_url: str) -> bool:
    return bool((await rows(database_url))["rated_games"])


async def _unqueued(backend: object, room: str) -> bool:
    return room not in await backend.rating_queue.overdue(2**62)  # type: ignore[attr-defined]


# The rating process of the kill test: one pass over the due rooms, killed (SIGKILL, by itself)
# at the step its argument names, if any ("rating": inside the transaction).
RATING = """
import asyncio, json, os, signal, sys
from olympus.server import Settings
from olympus.server.metrics import ServiceMetrics
from olympus.server.rater import Rater
from olympus.store import open_backend

args = json.loads(sys.argv[1])

def kill_at(step, room):
    if step == args["kill_at"]:
        os.kill(os.getpid(), signal.SIGKILL)

async def main():
    settings = Settings(
        redis_url=args["redis"], prefix=args["prefix"], archive_url=args["archive"],
        rating_lease_seconds=0,  # a room claimed by a killed pass is due again at once
    )
    backend = open_backend(settings.store_config())
    print(await Rater(backend, settings, ServiceMetrics(), on_step=kill_at).pass_once())
    await backend.aclose()

asyncio.run(main())
"""


def rating_pass(
    settings: Settings, database_url: str, kill_at: str | None
) -> subprocess.CompletedProcess[str]:
    args = {
        "redis": settings.redis_url,
        "prefix": settings.prefix,
        "archive": database_url,
        "kill_at": kill_at,
    }
    return subprocess.run(
        [sys.executable, "-c", RATING, json.dumps(args)], capture_output=True, text=True
    )


async def test_a_rating_pass_killed_at_any_step_rates_the_game_once(
    start_server: Callable[..., ServerThread],
    two_browsers: Callable[[ServerThread], httpx.AsyncClient],
    store: EventStore,
    database_url: str,
    settings: Settings,
) -> None:
    # the servers never rate: the test's own processes do, and are killed
    server = start_server(archive_url=database_url, rating_poll_seconds=3600.0)
    ann, bo = two_browsers(server), two_browsers(server)
    csrf = (await sign_up(ann, "Ann"), await sign_up(bo, "Bo"))
    game = await play_rated_game((server, server), store, ann, bo, csrf, seed=9)
    for step in STEPS:
        killed = rating_pass(settings, database_url, kill_at=step)
        assert killed.returncode == -signal.SIGKILL, (step, killed.stderr)
        held = await rows(database_url)
        committed = step in ("rated", "done")  # killed in the transaction: nothing of it kept
        assert len(held["rated_games"]) == (1 if committed else 0), step
        assert len(held["rating_changes"]) == (2 if committed else 0), step
        assert sorted(a[1] for a in held["accounts"]) == ([1, 1] if committed else [0, 0]), step
    finished = rating_pass(settings, database_url, kill_at=None)
    assert finished.returncode == 0, finished.stderr
    held = await rows(database_url)
    assert [r[0] for r in held["rated_games"]] == [game.room]
    expected = expected_ratings(str(held["rated_games"][0][1]))
    assert [(r[1], round(r[2], 6)) for r in held["rating_changes"]] == [
        (seat, round(expected[seat], 6)) for seat in ("chthonians", "olympians")
    ]
    backend = open_backend(settings.store_config())
    assert await _unqueued(backend, game.room)
    await backend.aclose()
