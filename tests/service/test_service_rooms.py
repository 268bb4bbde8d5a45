"""Rooms over HTTP (docs/api.md): create, join, Challenge seating, lobby lists, logs, health."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable

import httpx
import pytest
from service_harness import (
    Game,
    Oracle,
    ServerThread,
    WsClient,
    create_game,
    seat,
    setup_command,
)

from olympus.rules import COMPILED, Faction, Phase, decode
from olympus.store import EventStore


@pytest.mark.memory_store
async def test_create_join_and_spectate(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    created = await http.post("/rooms", json={"side": "chthonians", "open_combat": True})
    assert created.status_code == 201, created.text
    room = created.json()
    assert room["seat"] == "chthonians" and room["token"].startswith("t1.")
    # GameCreated is appended at creation, with a secret token seed (R7).
    [first] = await store.read(room["room"])
    created_event = decode(first.data)
    assert created_event.open_combat and created_event.token_seed != 0

    listed = (await http.get("/rooms", params={"status": "open"})).json()["rooms"]
    assert [r["room"] for r in listed] == [room["room"]]
    assert listed[0]["seats"] == {"olympians": False, "chthonians": True}

    taken = await http.post(f"/rooms/{room['room']}/join", json={"side": "chthonians"})
    assert taken.status_code == 409 and taken.json()["code"] == "seat_taken"
    joined = await http.post(f"/rooms/{room['room']}/join", json={})
    assert joined.json()["seat"] == "olympians"
    assert joined.json()["epoch"] == room["epoch"]  # (the join script's reply)
    full = await http.post(f"/rooms/{room['room']}/join", json={})
    assert full.status_code == 409

    assert (await http.get("/rooms", params={"status": "open"})).json()["rooms"] == []
    live = (await http.get("/rooms", params={"status": "live"})).json()["rooms"]
    assert [r["room"] for r in live] == [room["room"]]

    spectator = await WsClient.open(server.ws_url)
    welcome = await spectator.hello(spectate=room["room"])
    assert welcome["seat"] is None and welcome["epoch"] == room["epoch"]
    view = await spectator.expect("view")
    assert view["view"]["phase"] == "setup" and view["view"]["options"]["open_combat"] is True
    await spectator.close()


@pytest.mark.memory_store
async def test_challenge_creator_sets_honor_other_player_picks_side(
    http: httpx.AsyncClient, store: EventStore
) -> None:
    bad = await http.post("/rooms", json={"challenge": 3, "side": "olympians"})
    assert bad.status_code == 422  # the creator of a Challenge does not pick a side (R2)
    assert (await http.post("/rooms", json={"challenge": 6})).status_code == 422

    created = (await http.post("/rooms", json={"challenge": -4})).json()
    assert created["seat"] == "host"
    room = created["room"]
    host = {"authorization": f"Bearer {created['token']}"}
    early = await http.post(f"/rooms/{room}/join", headers=host)
    assert early.status_code == 409 and early.json()["code"] == "no_opponent_yet"
    no_side = await http.post(f"/rooms/{room}/join", json={})
    assert no_side.status_code == 422 and no_side.json()["code"] == "side_required"

    joiner = (await http.post(f"/rooms/{room}/join", json={"side": "chthonians"})).json()
    assert joiner["seat"] == "chthonians" and joiner["epoch"] == created["epoch"]
    creator = (await http.post(f"/rooms/{room}/join", headers=host)).json()
    assert creator["seat"] == "olympians" and creator["token"].startswith("t1.")
    [first] = await store.read(room)
    assert decode(first.data).chthonian_honor == -4


@pytest.mark.memory_store
async def test_bad_requests(http: httpx.AsyncClient) -> None:
    assert (await http.post("/rooms", content=b"{nope")).json()["code"] == "bad_json"
    unknown = await http.post("/rooms", json={"colour": "red"})
    assert unknown.status_code == 422 and unknown.json()["code"] == "bad_request"
    missing = await http.post("/rooms/no-such-room/join", json={})
    assert missing.status_code == 404
    assert (await http.get("/rooms/no-such-room/log")).status_code == 404
    assert (await http.get("/rooms", params={"status": "lost"})).status_code == 422
    forged = await http.post(
        "/rooms/abc/revoke", headers={"authorization": "Bearer t1.abc.olympians.1.AAAA"}
    )
    assert forged.status_code == 401


@pytest.mark.memory_store
async def test_live_log_is_the_spectator_view(http: httpx.AsyncClient, server: ServerThread):
    game = await create_game(http)
    log = (await http.get(f"/rooms/{game.room}/log")).json()
    assert log["over"] is False and "events" not in log
    [message] = log["messages"]
    assert message["seq"] == 1 and message["event"]["t"] == "game_created"
    assert "token_seed" not in message["event"]  # secret until the end (R7)
    snapshot = (await http.get(f"/rooms/{game.room}/view")).json()
    assert snapshot["seq"] == 1 and snapshot["view"]["phase"] == "setup"
    assert snapshot["view"]["setup"]["mine"] is None  # a spectator has no side
    assert (await http.get("/rooms/nope/view")).status_code == 404
    summary = (await http.get(f"/rooms/{game.room}")).json()
    assert summary["status"] == "live" and summary["seats"] == {f.value: True for f in Faction}


@pytest.mark.memory_store
async def test_health_and_metrics(http: httpx.AsyncClient) -> None:
    health = await http.get("/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    metrics = await http.get("/metrics")
    assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
    for name in ("olympus_rooms_loaded", "olympus_append_seconds_bucket", "olympus_commands_total"):
        assert name in metrics.text
    assert f"\nolympus_compiled {int(COMPILED)}\n" in metrics.text


async def test_an_overloaded_process_refuses_new_rooms_and_serves_its_games(
    start_server: Callable[..., ServerThread], store: EventStore
) -> None:
    """Load shedding: while a process is overloaded it refuses to create rooms (503
    ``overloaded``, with Retry-After), and only that; its players' joins, sockets and commands
    go on, and another process of the deployment takes the new room. Negative
    ``overload_seconds`` makes the process overloaded whatever its load (a drained process)."""
    busy = start_server(overload_seconds=-1.0)
    calm = start_server()
    async with (
        httpx.AsyncClient(base_url=busy.url, timeout=10) as busy_http,
        httpx.AsyncClient(base_url=calm.url, timeout=10) as calm_http,
    ):
        refused = await busy_http.post("/rooms", json={"side": "olympians"})
        assert refused.status_code == 503, refused.text
        assert refused.json()["code"] == "overloaded" and refused.json()["sentence"]
        assert int(refused.headers["retry-after"]) >= 1
        assert await store.rooms_by_status("open") == []  # nothing was created

        created = await calm_http.post("/rooms", json={"side": "olympians"})
        assert created.status_code == 201, created.text
        room = created.json()
        joined = await busy_http.post(f"/rooms/{room['room']}/join", json={})
        assert joined.status_code == 200 and joined.json()["seat"] == "chthonians"
        game = Game(
            room["room"],
            room["epoch"],
            {Faction.OLYMPIANS: room["token"], Faction.CHTHONIANS: joined.json()["token"]},
        )
        rng = random.Random(3)
        for faction in Faction:
            client = await seat(busy.ws_url, game, faction)
            reply = await client.command(f"setup-{faction.value}", setup_command(rng, faction))
            assert reply["type"] == "ack", reply
        assert (await Oracle(store, game.room).sync()).phase is not Phase.SETUP

        health = await busy_http.get("/healthz")
        assert health.status_code == 200  # overload is reported, not failed
        assert health.json()["overloaded"] is True
        assert (await calm_http.get("/healthz")).json()["overloaded"] is False
        metrics = (await busy_http.get("/metrics")).text
        assert 'olympus_shed_total{request="create_room"} 1' in metrics
        assert "olympus_loop_lag_seconds " in metrics


async def test_the_time_of_the_last_move_is_kept(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    """"Your games" shows the time since the last move (api.md): ``moved_ms`` is the creation
    time until a command is applied, then the server's time of the last one, written within
    about a second."""
    game = await create_game(http)
    seats_key = f"{store.prefix}:room:{{{game.room}}}:seats"
    summary = (await http.get(f"/rooms/{game.room}")).json()
    assert summary["moved_ms"] == summary["created_ms"]
    assert not await store.redis.hexists(seats_key, "moved_ms")
    client = await seat(server.ws_url, game, Faction.OLYMPIANS)
    reply = await client.command("s", setup_command(random.Random(3), Faction.OLYMPIANS))
    assert reply["type"] == "ack"
    # Written about a second after the command (services.MOVED_SECONDS), not on its path.
    for _ in range(200):
        if await store.redis.hexists(seats_key, "moved_ms"):
            break
        await asyncio.sleep(0.05)
    moved = int(await store.redis.hget(seats_key, "moved_ms"))
    assert (await http.get(f"/rooms/{game.room}")).json()["moved_ms"] == moved
    assert moved >= summary["created_ms"]
    await client.close()


class _Monitor:
    """The commands Redis runs meanwhile, as MONITOR reports them (a script's own commands
    marked ``lua``), up to the ``ECHO`` that ``stop`` sends."""

    def __init__(self, store: EventStore) -> None:
        self._monitor = store.redis.monitor()
        self.commands: list[tuple[str, str]] = []  # (client type: lua, unix or tcp; command)
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self._monitor.__aenter__()
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while True:
            entry = await self._monitor.next_command()
            if entry["command"] == "ECHO monitor-stop":
                return
            self.commands.append((entry["client_type"], entry["command"]))

    async def stop(self, store: EventStore) -> list[tuple[str, str]]:
        await store.redis.echo("monitor-stop")
        assert self._task is not None
        await asyncio.wait_for(self._task, 10)
        await self._monitor.__aexit__(None, None, None)
        return self.commands


async def test_a_room_is_set_up_without_reading_again_what_it_just_read(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    """Creating and joining a room does not look up whether the room it just made or joined
    exists before writing its lobby status, nor load the room (without Random Setup there is
    nothing to draw). The first hello loads it (epoch and events in one script) and does not
    read the epoch again; a hello that finds the room loaded checks the epoch (the room may
    have been made anew meanwhile). (MONITOR sees every client of the Redis: only this
    server's keys are looked at.)"""
    monitor = _Monitor(store)
    await monitor.start()
    try:
        room = (await create_game(http)).room
    finally:
        set_up = await monitor.stop(store)
    ours = f"EXISTS {store.prefix}:"
    assert not [c for origin, c in set_up if origin != "lua" and c.startswith(ours)], set_up
    assert len([c for origin, c in set_up if origin == "lua" and "by-status" in c]) >= 2

    meta = store.keys(room).meta
    for epoch_reads in (0, 1):  # the first hello loads the room, the second finds it loaded
        monitor = _Monitor(store)
        await monitor.start()
        client = await WsClient.open(server.ws_url)
        try:
            await client.hello(spectate=room)
            await client.expect("view")
        finally:
            commands = await monitor.stop(store)
        reads = [c for origin, c in commands if origin != "lua" and c == f"HGET {meta} epoch"]
        assert len(reads) == epoch_reads, commands
        await client.close()
