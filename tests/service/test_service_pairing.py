"""Quick pairing over real HTTP on two server processes sharing one Redis (api.md, "Quick
pairing"): seekers meet in one room whatever process each waits on, nobody is paired twice,
a seek whose waiter went away is never paired, a seek can be cancelled."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import replace

import httpx
import pytest
from service_harness import Game, ServerThread, seat
from test_service_archive import until
from test_service_players import error, sign_up

from olympus.rules import Faction
from olympus.server import Settings
from olympus.store import Seek, open_backend

POOL = "live.00.rated"


@pytest.fixture
def servers(start_server: Callable[..., ServerThread]) -> tuple[ServerThread, ServerThread]:
    return (start_server(archive_url="memory://"), start_server(archive_url="memory://"))


async def play_now(client: httpx.AsyncClient, csrf: str, **options: object) -> dict[str, object]:
    """Seek and wait until paired: the seat."""
    headers = {"x-csrf-token": csrf}
    made = await client.post("/seeks", json=options, headers=headers)
    assert made.status_code == 201, made.text
    seek = made.json()["seek"]
    while True:
        waited = await client.post(f"/seeks/{seek}/wait", headers=headers)
        assert waited.status_code == 200, waited.text
        if waited.json()["status"] == "paired":
            return dict(waited.json())


async def test_two_players_on_two_processes_meet_in_one_rated_room(
    servers: tuple[ServerThread, ServerThread],
    browsers: Callable[[ServerThread], httpx.AsyncClient],
) -> None:
    ann, bo = browsers(servers[0]), browsers(servers[1])
    csrf = [await sign_up(ann, "Ann"), await sign_up(bo, "Bo")]
    first, second = await asyncio.gather(play_now(ann, csrf[0]), play_now(bo, csrf[1]))
    assert first["room"] == second["room"]
    assert {first["seat"], second["seat"]} == {"olympians", "chthonians"}
    room = str(first["room"])
    summary = (await ann.get(f"/rooms/{room}")).json()
    assert summary["status"] == "live" and summary["options"]["rated"] is True
    assert summary["options"]["move_seconds"] == 120
    assert summary["names"] == {first["seat"]: "Ann", second["seat"]: "Bo"}
    for seated, server in ((first, servers[0]), (second, servers[1])):
        side = Faction(seated["seat"])
        game = Game(room, str(seated["epoch"]), {side: str(seated["token"])})
        client = await seat(server.ws_url, game, side)
        await client.close()
    games = (await bo.get("/account/games")).json()["games"]
    assert [(g["room"], g["seat"]) for g in games] == [(room, second["seat"])]
    counts = (await ann.get("/lobby")).json()
    assert counts["live_games"] == 1 and sorted(counts["players"]) == ["Ann", "Bo"]
    assert counts["computer"]["easy"] < counts["computer"]["normal"] < counts["computer"]["hard"]


async def test_many_seekers_across_processes_are_each_paired_once(
    servers: tuple[ServerThread, ServerThread],
    browsers: Callable[[ServerThread], httpx.AsyncClient],
) -> None:
    clients = [browsers(servers[n % 2]) for n in range(10)]
    csrfs = [await sign_up(c, f"Player {n}") for n, c in enumerate(clients)]
    seated = await asyncio.gather(*(play_now(c, t) for c, t in zip(clients, csrfs, strict=True)))
    rooms: dict[object, list[object]] = {}
    for s in seated:
        rooms.setdefault(s["room"], []).append(s["seat"])
    assert len(rooms) == 5
    assert all(sorted(map(str, seats)) == ["chthonians", "olympians"] for seats in rooms.values())


async def test_a_cancelled_seek_or_one_whose_waiter_left_is_never_paired(
    servers: tuple[ServerThread, ServerThread],
    browsers: Callable[[ServerThread], httpx.AsyncClient],
    settings: Settings,
) -> None:
    cy, dee, eve = browsers(servers[0]), browsers(servers[1]), browsers(servers[0])
    csrf = [await sign_up(cy, "Cy"), await sign_up(dee, "Dee"), await sign_up(eve, "Eve")]
    headers = [{"x-csrf-token": t} for t in csrf]
    # Cy seeks, then cancels: the seek is gone
    seek = (await cy.post("/seeks", json={}, headers=headers[0])).json()["seek"]
    assert (await cy.delete(f"/seeks/{seek}", headers=headers[0])).json() == {"cancelled": True}
    assert error(await cy.post(f"/seeks/{seek}/wait", headers=headers[0])) == (404, "seek_gone")
    # Dee seeks and waits, then closes the page in the middle of the wait: the seek goes
    seek = (await dee.post("/seeks", json={}, headers=headers[1])).json()["seek"]
    waiting = asyncio.ensure_future(dee.post(f"/seeks/{seek}/wait", headers=headers[1]))
    backend = open_backend(settings.store_config())
    await until(lambda: _waiting(backend, 1))
    waiting.cancel()
    await dee.aclose()  # the connection closes with it
    await until(lambda: _waiting(backend, 0))
    # Eve seeks now: nobody is there for her
    seek = (await eve.post("/seeks", json={}, headers=headers[2])).json()["seek"]
    answer = await eve.post(f"/seeks/{seek}/wait", headers=headers[2])
    assert answer.json() == {"status": "waiting"}
    await backend.aclose()


async def _waiting(backend: object, n: int) -> bool:
    return await backend.seeks.waiting(POOL) == n  # type: ignore[attr-defined]


async def test_seeking_needs_a_signed_in_player_and_a_good_body(
    servers: tuple[ServerThread, ServerThread],
    browsers: Callable[[ServerThread], httpx.AsyncClient],
) -> None:
    guest, fay = browsers(servers[0]), browsers(servers[0])
    assert error(await guest.post("/seeks", json={})) == (401, "sign_in_required")
    headers = {"x-csrf-token": await sign_up(fay, "Fay")}
    assert error(await fay.post("/seeks", json={})) == (403, "csrf_failed")
    assert error(await fay.post("/seeks", json={"clock": "blitz"}, headers=headers)) == (
        422,
        "bad_request",
    )
    assert error(await fay.post("/seeks", json={"rated": "yes"}, headers=headers)) == (
        422,
        "bad_request",
    )
    assert error(await fay.post("/seeks/nope/wait", headers=headers)) == (404, "seek_gone")


async def test_a_pair_whose_pairer_died_before_making_its_room_still_meets(
    servers: tuple[ServerThread, ServerThread],
    browsers: Callable[[ServerThread], httpx.AsyncClient],
    settings: Settings,
) -> None:
    """Paired in the store by a process that then died: no room, and no process told. Each
    waiter finds its match and, the room missing, makes it: once."""
    gus, hal = browsers(servers[0]), browsers(servers[1])
    csrf = [await sign_up(gus, "Gus"), await sign_up(hal, "Hal")]
    backend = open_backend(replace(settings, archive_url="memory://").store_config())
    assert backend.accounts is not None
    now = time.time_ns() // 1_000_000
    for n, name in enumerate(("gus", "hal")):
        account = await backend.accounts.find(name)
        assert account is not None
        await backend.seeks.add(Seek(f"seek-{n}", account.id, POOL, 1500.0, now, now + 60_000))
    ((_, _, room),) = await backend.seeks.pair(POOL, now)
    assert not await backend.events.room_exists(room)
    first, second = await asyncio.gather(
        gus.post("/seeks/seek-0/wait", headers={"x-csrf-token": csrf[0]}),
        hal.post("/seeks/seek-1/wait", headers={"x-csrf-token": csrf[1]}),
    )
    assert first.json()["room"] == second.json()["room"] == room
    assert {first.json()["seat"], second.json()["seat"]} == {"olympians", "chthonians"}
    assert (await gus.get(f"/rooms/{room}")).json()["names"][first.json()["seat"]] == "Gus"
    # the other's seek id is no use to a third player
    assert error(await hal.post("/seeks/seek-0/wait", headers={"x-csrf-token": csrf[1]})) == (
        403,
        "not_your_seek",
    )
    await backend.aclose()
