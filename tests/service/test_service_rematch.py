"""A rematch (api.md): once a game is over either player asks for it with their seat token; it
has the same options, the sides swapped, both seats held for the two players (nobody else can
take one), and the first to ask creates it."""

from __future__ import annotations

import random
import secrets

import httpx
import pytest
from service_harness import Oracle, ServerThread, WsClient, drive, live_game

from olympus.rules import Faction
from olympus.store import EventStore


def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.mark.memory_store
async def test_rematch_swaps_sides_with_the_same_options(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    game, oracle = await live_game(http, server.ws_url, store, seed=5, open_combat=True)
    early = await http.post(
        f"/rooms/{game.room}/rematch", headers=_bearer(game.tokens[Faction.OLYMPIANS])
    )
    assert early.status_code == 409 and early.json()["code"] == "not_finished"

    watchers = [(f, game.seats[f]) for f in Faction]
    await drive(game, oracle, random.Random(5), watchers, setup=False)

    first = await http.post(
        f"/rooms/{game.room}/rematch", headers=_bearer(game.tokens[Faction.OLYMPIANS])
    )
    assert first.status_code == 200, first.text
    rematch = first.json()
    assert rematch["seat"] == "chthonians" and rematch["room"] != game.room
    old = (await http.get(f"/rooms/{game.room}")).json()
    assert old["rematch"] == rematch["room"]

    summary = (await http.get(f"/rooms/{rematch['room']}")).json()
    assert summary["status"] == "live"
    assert summary["seats"] == {"olympians": True, "chthonians": True}
    assert summary["options"] == old["options"] and summary["options"]["open_combat"] is True
    taken = await http.post(f"/rooms/{rematch['room']}/join", json={})
    assert taken.status_code == 409  # held for the two players

    second = await http.post(
        f"/rooms/{game.room}/rematch", headers=_bearer(game.tokens[Faction.CHTHONIANS])
    )
    assert second.json()["room"] == rematch["room"] and second.json()["seat"] == "olympians"
    again = await http.post(
        f"/rooms/{game.room}/rematch", headers=_bearer(game.tokens[Faction.OLYMPIANS])
    )
    assert again.json() == rematch  # asking twice gives the same seat

    for seated in (rematch, second.json()):
        client = await WsClient.open(server.ws_url)
        welcome = await client.hello(token=seated["token"])
        assert welcome["seat"] == seated["seat"]
        view = await client.expect("view")
        assert view["view"]["phase"] == "setup" and view["view"]["honor"]["olympians"] == 10
        await client.close()
    await Oracle(store, rematch["room"]).sync()


@pytest.mark.memory_store
async def test_rematch_needs_a_finished_game_and_a_seat_token(http: httpx.AsyncClient) -> None:
    created = (await http.post("/rooms", json={"side": "olympians", "name": "Ann"})).json()
    joined = (await http.post(f"/rooms/{created['room']}/join", json={"name": "Bob"})).json()
    refused = await http.post(
        f"/rooms/{created['room']}/rematch", headers=_bearer(joined["token"])
    )
    assert refused.json()["code"] == "not_finished"
    bad = await http.post(f"/rooms/{created['room']}/rematch", headers=_bearer("t1.x.y.1.z"))
    assert bad.status_code == 401


async def test_a_rematch_whose_claim_was_written_before_a_lost_reply_is_still_made(
    http: httpx.AsyncClient, store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The HSETNX that claims the rematch is sent again when its connection is lost after
    Redis ran it (store/redis_clients.py): the resend finds the claim already there, and it is this
    request's own id, so the request makes the rematch instead of answering "being set up"
    to everyone for ever. (The first sending's write is made here by hand.)"""
    created = (await http.post("/rooms", json={"side": "olympians", "name": "Ann"})).json()
    await http.post(f"/rooms/{created['room']}/join", json={"name": "Bob"})
    await store.set_room_status(created["room"], "finished")
    seats = f"{store.prefix}:room:{{{created['room']}}}:seats"
    claimed = "claimedXXXXX"
    await store.redis.hset(seats, "rematch", claimed)
    monkeypatch.setattr(secrets, "token_urlsafe", lambda _n: claimed)
    made = await http.post(f"/rooms/{created['room']}/rematch", headers=_bearer(created["token"]))
    assert made.status_code == 200, made.text
    assert made.json()["room"] == claimed and await store.room_exists(claimed)
