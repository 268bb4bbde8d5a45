"""The coach through the service (api.md, bots.md): a finished game's analysis, made once off
the command path and served to players and spectators alike; hints in a game against the
computer only. Real servers on the session's real Redis; the search's budget is tiny
(``coach_iterations``): these tests are about the plumbing, tests/bot about the search."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from dataclasses import replace

import httpx
import pytest
from service_harness import ServerThread, drive, live_game, played_game

from olympus.rules import Faction, decode, legal_actions, replay
from olympus.server import Settings
from olympus.store import MEMORY_URL, EventStore, open_archive, open_backend

TIMEOUT = 120.0  # the pool's process starts, then analyses (a bound, not a pace)


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def analysed(http: httpx.AsyncClient, room: str) -> httpx.Response:
    """Ask until the analysis is there: each answer before it is a 202 with Retry-After."""
    async with asyncio.timeout(TIMEOUT):
        while True:
            reply = await http.get(f"/rooms/{room}/analysis")
            if reply.status_code != 202:
                return reply
            assert reply.json()["code"] == "analysis_pending"
            assert int(reply.headers["retry-after"]) > 0
            await asyncio.sleep(0.2)


async def test_a_finished_game_is_analysed_once_for_everyone(
    start_server: Callable[..., ServerThread], store: EventStore
) -> None:
    server = start_server(coach_iterations=4)
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        game, oracle = await live_game(http, server.ws_url, store, seed=3)
        early = await http.get(f"/rooms/{game.room}/analysis")
        assert early.status_code == 409 and early.json()["code"] == "not_finished"
        watchers = [(f, game.seats[f]) for f in Faction]
        await drive(game, oracle, random.Random(3), watchers, setup=False)

        first = await http.get(f"/rooms/{game.room}/analysis")
        assert first.status_code == 202  # started now: nothing was made before the end
        reply = await analysed(http, game.room)
        assert reply.status_code == 200, reply.text
        body = reply.json()
        assert body["room"] == game.room and body["epoch"] == game.epoch
        assert body["thresholds"] == {"mistake": 0.1, "blunder": 0.2}
        moves = body["moves"]
        assert {m["seat"] for m in moves} == {"olympians", "chthonians"}
        for move in moves:
            assert 0 <= move["before"] <= 1 and 0 <= move["after"] <= 1
            assert move["mark"] in (None, "mistake", "blunder")
            assert 1 <= move["first"] <= move["last"] <= len(oracle.events)
        kept = await store.redis.get(store.analysis_key(game.room))
        assert kept is not None  # beside the room's keys, in its hash slot

    # Another process serves the one kept, never makes it again.
    other = start_server(coach_iterations=4)
    async with httpx.AsyncClient(base_url=other.url, timeout=10) as http:
        again = await http.get(f"/rooms/{game.room}/analysis")
        assert again.status_code == 200 and again.json() == body
        hint = await http.post(
            f"/rooms/{game.room}/hint", headers=_bearer(game.tokens[Faction.OLYMPIANS])
        )
        assert hint.status_code == 403 and hint.json()["code"] == "hints_not_allowed"


async def test_hints_against_the_computer_only_and_recorded(
    start_server: Callable[..., ServerThread], store: EventStore
) -> None:
    server = start_server(coach_iterations=4)
    async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT) as http:
        # The Random Setup is drawn at once; the Chthonians move first: the person's seat has
        # options without the computer playing (no computer's worker runs here).
        created = await http.post(
            "/rooms/computer", json={"side": "chthonians", "random_setup": True, "level": "easy"}
        )
        room = created.json()
        assert (await http.get(f"/rooms/{room['room']}")).json()["hints"] == []

        refused = await http.post(f"/rooms/{room['room']}/hint")
        assert refused.status_code == 401 and refused.json()["code"] == "token_required"
        reply = await http.post(f"/rooms/{room['room']}/hint", headers=_bearer(room["token"]))
        assert reply.status_code == 200, reply.text
        hint = reply.json()
        position = replay([decode(e.data) for e in await store.read(room["room"])])
        offered = [a.wire for a in legal_actions(position, Faction.CHTHONIANS)]
        assert hint["command"] in offered and hint["forced"] is False
        assert 0 <= hint["chance"] <= 1
        summary = (await http.get(f"/rooms/{room['room']}")).json()
        assert summary["hints"] == ["chthonians"]

        two_people = await http.post("/rooms", json={"side": "olympians"})
        token = two_people.json()["token"]
        other = await http.post(f"/rooms/{two_people.json()['room']}/hint", headers=_bearer(token))
        assert other.status_code == 403 and other.json()["code"] == "hints_not_allowed"
        wrong = await http.post(f"/rooms/{room['room']}/hint", headers=_bearer(token))
        assert wrong.status_code == 403 and wrong.json()["code"] == "wrong_room"


@pytest.mark.memory_store
async def test_an_analysis_asked_once_the_game_is_archived_is_kept_there(
    start_server: Callable[..., ServerThread], settings: Settings, store: EventStore
) -> None:
    """A game nobody asked about before it moved to the archive: asked then, its analysis is
    made from the archived log, kept in the archive (the live store holds nothing of the room
    any more), and served from there: again by the process that made it, and at once by
    another that never held the game, without making it again."""
    archived = replace(
        settings, archive_url=MEMORY_URL, archive_grace_seconds=3600.0, archive_poll_seconds=0.05
    )
    options = {
        "archive_url": archived.archive_url,
        "archive_grace_seconds": archived.archive_grace_seconds,
        "archive_poll_seconds": archived.archive_poll_seconds,
        "coach_iterations": 4,
    }
    server = start_server(**options)
    game, _ = await played_game(server, store, commands=None, seed=5)
    backend = open_backend(archived.store_config())
    await backend.archive_queue.set_due(game.room, 0)  # its grace period is over now
    archive = open_archive(archived.store_config())

    async def moved() -> bool:
        return await archive.head(game.room) is not None and not await store.room_exists(game.room)

    async with asyncio.timeout(TIMEOUT):
        while not await moved():
            await asyncio.sleep(0.05)
    assert await archive.analysis(game.room) is None  # nobody asked before the move

    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        first = await http.get(f"/rooms/{game.room}/analysis")
        assert first.status_code == 202  # made now, from the archived log
        reply = await analysed(http, game.room)
        assert reply.status_code == 200, reply.text
        body = reply.json()
        assert body["room"] == game.room and body["moves"]
        again = await http.get(f"/rooms/{game.room}/analysis")
        assert again.status_code == 200 and again.json() == body
    kept = await archive.analysis(game.room)
    assert kept is not None and json.loads(kept) == {
        k: v for k, v in body.items() if k not in ("room", "epoch")
    }
    assert not await store.room_exists(game.room)  # nothing of it made live again

    other = start_server(**options)  # never held the game: reads the archive's analysis
    async with httpx.AsyncClient(base_url=other.url, timeout=10) as http:
        second = await http.get(f"/rooms/{game.room}/analysis")
        assert second.status_code == 200 and second.json() == body
    assert other.services.coach._analysing == {} and other.services.coach._pool is None
    await archive.aclose()
    await backend.aclose()
