"""Whole games over real websockets, checked message by message against the log in Redis.

Two server processes share the Redis: one seat plays on each, so every event reaches the other
seat through the pub/sub fan-out. A random bot picks every command from ``legal_actions`` of
the true state, and the seat's last ``legal`` message must list exactly those actions.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import httpx
from service_harness import (
    Oracle,
    ServerThread,
    WsClient,
    check_feed,
    create_game,
    drive,
    seat,
)

from olympus.rules import Faction, Phase
from olympus.store import EventStore


async def test_two_processes_play_a_game_to_the_end(
    http: httpx.AsyncClient,
    server: ServerThread,
    start_server: Callable[..., ServerThread],
    store: EventStore,
) -> None:
    other = start_server()
    game = await create_game(http)
    oracle = Oracle(store, game.room)
    # Resuming from 0 in the room's epoch: every message from the first one.
    start = {"last_seq": 0, "epoch": game.epoch}
    olympians = await seat(server.ws_url, game, Faction.OLYMPIANS, "olympus.json", **start)
    chthonians = await seat(other.ws_url, game, Faction.CHTHONIANS, "olympus.msgpack", **start)
    watch_json = await WsClient.open(other.ws_url, "olympus.json")
    watch_msgpack = await WsClient.open(server.ws_url, "olympus.msgpack")
    for spectator in (watch_json, watch_msgpack):
        welcome = await spectator.hello(spectate=game.room, **start)
        assert welcome["resumed"] is True
    watchers = [
        (Faction.OLYMPIANS, olympians),
        (Faction.CHTHONIANS, chthonians),
        (None, watch_json),
        (None, watch_msgpack),
    ]

    commands = await drive(game, oracle, random.Random(7), watchers)
    assert commands > 5
    assert any(e.TYPE == "combat_committed" for e in oracle.events)  # R8 was exercised

    for audience, client in watchers:
        check_feed(client, audience, oracle)
        await client.wait_for(lambda c=client: any(m["type"] == "game_over" for m in c.messages))
        [over] = [m for m in client.messages if m["type"] == "game_over"]
        assert over["result"] == oracle.state.result
        assert over["log"] == oracle.log()  # everything revealed at the end (R7)
    assert isinstance(chthonians.frames[-1], bytes) and isinstance(olympians.frames[-1], str)
    # The same messages whichever the codec.
    assert watch_json.messages == watch_msgpack.messages

    log = (await http.get(f"/rooms/{game.room}/log")).json()
    assert log["over"] is True and log["events"] == oracle.log()
    finished = (await http.get("/rooms", params={"status": "finished"})).json()["rooms"]
    assert [r["room"] for r in finished] == [game.room]
    for client in (olympians, chthonians, watch_json, watch_msgpack):
        await client.close()


async def test_random_setup_is_drawn_when_both_seats_are_taken(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    created = (await http.post("/rooms", json={"random_setup": True})).json()
    oracle = Oracle(store, created["room"])
    assert (await oracle.sync()).phase is Phase.SETUP and oracle.state.version == 1
    await http.post(f"/rooms/{created['room']}/join", json={})
    state = await oracle.sync()
    assert state.phase is Phase.TURN
    types = [e.TYPE for e in oracle.events]
    assert types[:3] == ["game_created", "random_setup_drawn", "setup_submitted"]
    assert types.count("random_setup_drawn") == 1

    spectator = await WsClient.open(server.ws_url)
    await spectator.hello(spectate=created["room"])
    view = (await spectator.expect("view"))["view"]
    assert view["phase"] == "turn"
    assert all(unit["name"] is None for unit in view["units"])  # nobody revealed yet (R7)
    assert not any(m["event"]["t"] == "random_setup_drawn" for m in spectator.events())
    await spectator.close()
