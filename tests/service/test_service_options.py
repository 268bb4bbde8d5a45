"""What a seat may do is always said: its actions, its setup options, or why it waits.

During setup a seat gets what a setup is made of (its 12 characters with the leader marked,
its realm's regions, how many to place), derived from the rules that judge ``submit_setup``;
whenever a seat has nothing to do its ``legal`` says why (``waiting``), so that a client can
tell "nothing to do now" from "options still coming". Spectators get no ``legal``.
"""

from __future__ import annotations

import httpx
from service_harness import Oracle, ServerThread, WsClient, create_game, seat

from olympus.rules import BOARD, Faction
from olympus.rules.characters import LEADER, PICKED_PER_SIDE, ROSTER
from olympus.store import EventStore


def legals(client: WsClient) -> list[dict]:
    return [m for m in client.messages if m["type"] == "legal"]


async def latest_legal(client: WsClient) -> dict:
    """The ``legal`` about the client's newest message."""
    await client.wait_for(lambda: bool(legals(client)) and legals(client)[-1]["seq"] == client.seq)
    return legals(client)[-1]


def setup_from(legal: dict) -> dict:
    """A ``submit_setup`` built from a ``legal`` message's setup options alone: the leader and
    the next characters, each in a region of its own."""
    setup = legal["setup"]
    names = sorted(setup["characters"], key=lambda c: not c["leader"])[: setup["count"]]
    placements = {c["name"]: r for c, r in zip(names, setup["regions"], strict=False)}
    return {"type": "submit_setup", "placements": placements}


async def test_setup_options_then_waiting_then_actions(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    game = await create_game(http)
    start = {"last_seq": 0, "epoch": game.epoch}
    seats = {f: await seat(server.ws_url, game, f, **start) for f in Faction}
    spectator = await WsClient.open(server.ws_url)
    await spectator.hello(spectate=game.room, **start)
    for faction, client in seats.items():
        options = await latest_legal(client)
        assert options["actions"] == [] and "waiting" not in options
        setup = options["setup"]
        assert [c["name"] for c in setup["characters"]] == list(ROSTER[faction])
        assert [c["name"] for c in setup["characters"] if c["leader"]] == [LEADER[faction]]
        assert setup["regions"] == list(BOARD.realm_regions(faction.realm))
        assert setup["count"] == PICKED_PER_SIDE

    # A setup made of nothing but those options is accepted; the seat then waits.
    first = Faction.OLYMPIANS
    reply = await seats[first].command("s1", setup_from(await latest_legal(seats[first])))
    assert reply["type"] == "ack", reply
    waiting = await latest_legal(seats[first])
    assert (waiting["actions"], waiting["waiting"]) == ([], "opponent_setup")
    assert "setup" not in waiting
    assert "setup" in await latest_legal(seats[first.enemy])  # still its to submit

    second = seats[first.enemy]
    assert (await second.command("s1", setup_from(await latest_legal(second))))["type"] == "ack"
    state = await Oracle(store, game.room).sync()
    to_move = await latest_legal(seats[state.turn])
    assert to_move["actions"] and "waiting" not in to_move
    other = await latest_legal(seats[state.turn.enemy])
    assert (other["actions"], other["waiting"]) == ([], "opponent_turn")
    await spectator.wait_seq(seats[first].seq)
    assert legals(spectator) == []


async def test_seats_of_a_random_setup_wait_for_the_draw(
    http: httpx.AsyncClient, server: ServerThread
) -> None:
    created = (await http.post("/rooms", json={"random_setup": True, "side": "olympians"})).json()
    client = await WsClient.open(server.ws_url)
    assert (await client.hello(token=created["token"]))["type"] == "welcome"
    waiting = await latest_legal(client)
    assert (waiting["actions"], waiting["waiting"]) == ([], "random_setup")
    assert "setup" not in waiting
