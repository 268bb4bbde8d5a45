"""What a seat may do is always said: its actions, its setup options, or why it waits.

During setup a seat gets what a setup is made of (its 12 characters with the leader marked,
its realm's regions, how many to place), derived from the rules that judge ``submit_setup``;
whenever a seat has nothing to do its ``legal`` says why (``waiting``), so that a client can
tell "nothing to do now" from "options still coming". Spectators get no ``legal``.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

import httpx
import pytest
from service_harness import Oracle, ServerThread, WsClient, create_game, seat, setup_from

from olympus.rules import BOARD, Faction
from olympus.rules.characters import LEADER, PICKED_PER_SIDE, ROSTER
from olympus.rules.setup import random_placements
from olympus.store import EventStore

# The service's own logic: on the memory backend (tests/store shows both backends alike).
pytestmark = pytest.mark.memory_store


def legals(client: WsClient) -> list[dict]:
    return [m for m in client.messages if m["type"] == "legal"]


async def test_setup_options_then_waiting_then_actions(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    game = await create_game(http)
    start = {"last_seq": 0, "epoch": game.epoch}
    seats = {f: await seat(server.ws_url, game, f, **start) for f in Faction}
    spectator = await WsClient.open(server.ws_url)
    await spectator.hello(spectate=game.room, **start)
    for faction, client in seats.items():
        options = await client.latest_legal()
        assert options["actions"] == [] and "waiting" not in options
        setup = options["setup"]
        assert [c["name"] for c in setup["characters"]] == list(ROSTER[faction])
        assert [c["name"] for c in setup["characters"] if c["leader"]] == [LEADER[faction]]
        assert setup["regions"] == list(BOARD.realm_regions(faction.realm))
        assert setup["count"] == PICKED_PER_SIDE

    # A setup made of nothing but those options is accepted; the seat then waits.
    first = Faction.OLYMPIANS
    reply = await seats[first].command("s1", setup_from(await seats[first].latest_legal()))
    assert reply["type"] == "ack", reply
    waiting = await seats[first].latest_legal()
    assert (waiting["actions"], waiting["waiting"]) == ([], "opponent_setup")
    assert "setup" not in waiting
    assert "setup" in await seats[first.enemy].latest_legal()  # still its to submit

    second = seats[first.enemy]
    assert (await second.command("s1", setup_from(await second.latest_legal())))["type"] == "ack"
    oracle = Oracle(store, game.room)
    state = await oracle.sync()
    for faction, client in seats.items():  # each seat has every event of both setups
        await client.wait_seq(len(oracle.messages(faction)))
    to_move = await seats[state.turn].latest_legal()
    assert to_move["actions"] and "waiting" not in to_move
    other = await seats[state.turn.enemy].latest_legal()
    assert (other["actions"], other["waiting"]) == ([], "opponent_turn")
    await spectator.wait_seq(seats[first].seq)
    assert legals(spectator) == []


async def test_seats_of_a_random_setup_wait_for_the_draw(
    http: httpx.AsyncClient, server: ServerThread
) -> None:
    created = (await http.post("/rooms", json={"random_setup": True, "side": "olympians"})).json()
    client = await WsClient.open(server.ws_url)
    assert (await client.hello(token=created["token"]))["type"] == "welcome"
    waiting = await client.latest_legal()
    assert (waiting["actions"], waiting["waiting"]) == ([], "random_setup")
    assert "setup" not in waiting

    # The second seat taken, the service draws both setups; then the turn's side has actions.
    joined = (await http.post(f"/rooms/{created['room']}/join", json={})).json()
    other = await WsClient.open(server.ws_url)
    assert (await other.hello(token=joined["token"]))["type"] == "welcome"
    await other.wait_for(lambda: bool(other.legal()))  # R2: the Chthonians begin
    await client.wait_for(lambda: legals(client)[-1].get("waiting") == "opponent_turn")
    assert legals(client)[-1]["actions"] == []


async def test_setup_messages_do_not_depend_on_the_opponents_sealed_setup(
    start_server: Callable[..., ServerThread],
) -> None:
    """R7: through the setup, a seat's messages (its options, the opponent's sealed
    submission, the options after it) are the same bytes whichever setup the opponent sealed;
    so are the spectators'. Two processes whose secret seeds come out the same, one setup each."""
    observer, hidden = Faction.OLYMPIANS, Faction.CHTHONIANS
    rng = random.Random(10)
    setups = [random_placements(rng, hidden) for _ in range(2)]
    assert setups[0] != setups[1]
    seen: list[dict[str, list[str | bytes]]] = []
    for placements in setups:
        server = start_server(seed_source=itertools.count(4242).__next__)
        async with httpx.AsyncClient(base_url=server.url) as http:
            game = await create_game(http)
        start = {"last_seq": 0, "epoch": game.epoch}
        seats = {f: await seat(server.ws_url, game, f, **start) for f in Faction}
        spectator = await WsClient.open(server.ws_url)
        await spectator.hello(spectate=game.room, **start)
        before = (await seats[observer].latest_legal())["seq"]
        command = {"type": "submit_setup", "placements": placements}
        assert (await seats[hidden].command("s1", command))["type"] == "ack"
        await seats[observer].wait_seq(before + 1)  # the sealed submission
        assert "setup" in await seats[observer].latest_legal()  # still the observer's to submit
        await spectator.wait_seq(before + 1)
        audiences = {"observer": seats[observer], "spectator": spectator, "hidden": seats[hidden]}
        seen.append({name: client.raw[1:] for name, client in audiences.items()})
    assert seen[0]["observer"] == seen[1]["observer"]
    assert seen[0]["spectator"] == seen[1]["spectator"]
    assert seen[0]["hidden"] != seen[1]["hidden"]  # its own placements: the comparison can fail
