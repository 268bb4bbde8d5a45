"""Rated games on PostgreSQL across processes: a rated game whose seats two server processes
serve changes the ratings once; a rating pass killed (``kill -9``) at each of its steps, in
the middle of its transaction included, leaves the game rated once by the next pass."""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Callable
from typing import Any

import asyncpg
import httpx
from killed_pass import killed_pass
from service_harness import ServerThread
from test_service_archive import until
from test_service_players import play_rated_game, sign_up

from olympus.ratings import glicko2
from olympus.server import Settings
from olympus.store import EventStore, open_backend

STEPS = ("read", "rating", "rated", "done")


async def rows(database_url: str) -> dict[str, list[tuple[Any, ...]]]:
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


def assert_rated_once(held: dict[str, list[tuple[Any, ...]]], room: str) -> None:
    """The tables hold the room rated once: its row, both players' changes as the paper's
    formulas give them, one rated game on each account."""
    assert [r[0] for r in held["rated_games"]] == [room]
    expected = expected_ratings(str(held["rated_games"][0][1]))
    assert [(r[1], round(r[2], 6)) for r in held["rating_changes"]] == [
        (seat, round(expected[seat], 6)) for seat in ("chthonians", "olympians")
    ]
    assert [a[1] for a in held["accounts"]] == [1, 1]


async def test_a_rated_game_served_by_two_processes_is_rated_once(
    start_server: Callable[..., ServerThread],
    browsers: Callable[[ServerThread], httpx.AsyncClient],
    store: EventStore,
    database_url: str,
    settings: Settings,
) -> None:
    options = {"archive_url": database_url, "rating_poll_seconds": 0.05}
    servers = (start_server(**options), start_server(**options))
    ann, bo = browsers(servers[0]), browsers(servers[1])
    csrf = (await sign_up(ann, "Ann"), await sign_up(bo, "Bo"))
    game = await play_rated_game(servers, store, ann, bo, csrf)
    await until(lambda: _rated(database_url))
    first = await rows(database_url)
    assert_rated_once(first, game.room)
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


def rating_pass(
    settings: Settings, database_url: str, kill_at: str | None
) -> subprocess.CompletedProcess[str]:
    return killed_pass("rating", settings, database_url, kill_at)


async def test_a_rating_pass_killed_at_any_step_rates_the_game_once(
    start_server: Callable[..., ServerThread],
    browsers: Callable[[ServerThread], httpx.AsyncClient],
    store: EventStore,
    database_url: str,
    settings: Settings,
) -> None:
    # the servers never rate: the test's own processes do, and are killed
    server = start_server(archive_url=database_url, rating_poll_seconds=3600.0)
    ann, bo = browsers(server), browsers(server)
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
    assert_rated_once(await rows(database_url), game.room)
    backend = open_backend(settings.store_config())
    assert await _unqueued(backend, game.room)
    await backend.aclose()
