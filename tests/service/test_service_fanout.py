"""Fan-out between processes survives a lost pub/sub connection; idle rooms and slow sockets go."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import httpx
from redis.asyncio import Redis
from service_harness import ServerThread, WsClient, create_game, live_game, seat

from olympus.rules import Faction, legal_actions
from olympus.store import EmbeddedRedis, EventStore


async def test_events_reach_other_processes_after_the_pubsub_connection_dies(
    http: httpx.AsyncClient,
    server: ServerThread,
    start_server: Callable[..., ServerThread],
    store: EventStore,
    redis_server: EmbeddedRedis,
) -> None:
    other = start_server()
    game, oracle = await live_game(http, server.ws_url, store)
    watcher = await seat(other.ws_url, game, Faction.OLYMPIANS)  # hears of moves via pub/sub
    admin = Redis.from_url(redis_server.url)
    try:
        # Every pub/sub connection is cut: hints published now are lost for good.
        assert await admin.client_kill_filter(_type="pubsub") >= 2
        move = next(
            a.command
            for a in legal_actions(oracle.state, Faction.CHTHONIANS)
            if a.command.type == "move" and not a.command.fly and not a.command.reveal
        )
        command = move.model_dump(mode="json", exclude={"side", "at_ms"})
        reply = await game.seats[Faction.CHTHONIANS].command("m1", command)
        assert reply["type"] == "ack"
        await oracle.sync()
        # The other process resubscribes and reads what it missed.
        await watcher.wait_for(
            lambda: any(m["event"]["t"] == "units_moved" for m in watcher.events())
        )
        assert other.services.metrics.pubsub_reconnects.get() >= 1
        deadline = time.monotonic() + 5  # unhealthy while reconnecting, healthy after
        while (await http.get("/healthz")).status_code != 200:
            assert time.monotonic() < deadline, "the pub/sub connection did not come back"
            await asyncio.sleep(0.05)
        assert server.services.fanout.connected
    finally:
        await admin.aclose()


async def test_idle_rooms_are_dropped_and_reloaded(
    start_server: Callable[..., ServerThread],
) -> None:
    server = start_server(idle_seconds=0.2)
    async with httpx.AsyncClient(base_url=server.url) as http:
        game = await create_game(http)
    spectator = await WsClient.open(server.ws_url)
    await spectator.hello(spectate=game.room)
    assert game.room in server.services.rooms
    await spectator.close()
    deadline = time.monotonic() + 5
    while server.services.rooms:
        assert time.monotonic() < deadline, "the idle room stayed loaded"
        await asyncio.sleep(0.05)
    assert server.services.fanout.channels == {}  # unsubscribed too
    again = await WsClient.open(server.ws_url)
    assert (await again.hello(spectate=game.room))["type"] == "welcome"
    await again.close()


async def test_a_socket_too_far_behind_is_closed(
    http: httpx.AsyncClient,
    server: ServerThread,
    start_server: Callable[..., ServerThread],
    store: EventStore,
) -> None:
    game, oracle = await live_game(http, server.ws_url, store)
    for n, side in enumerate([Faction.CHTHONIANS, Faction.OLYMPIANS, Faction.CHTHONIANS]):
        assert (await game.seats[side].command(f"l{n}", {"type": "liturgy"}))["type"] == "ack"
    await oracle.sync()
    backlog = len(oracle.messages(None))
    small = start_server(send_queue=backlog // 2)
    # Resuming from 0 queues the whole backlog at once: more than this process allows.
    late = await WsClient.open(small.ws_url)
    await late.send({"type": "hello", "spectate": game.room, "last_seq": 0, "epoch": game.epoch})
    assert await late.wait_closed() == 4413
    assert len(late.messages) <= backlog // 2
