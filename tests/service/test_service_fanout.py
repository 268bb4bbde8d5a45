"""Fan-out between processes survives a lost pub/sub connection; idle rooms and slow sockets go."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
import uuid
from collections.abc import Callable
from typing import Any

import httpx
from process_harness import wait_until
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot
from service_harness import ServerThread, WsClient, create_game, live_game, seat

from olympus.rules import Faction, legal_actions
from olympus.server import Settings
from olympus.store import EmbeddedRedis, EventStore, StoreConfig, StoredEvent, chain_next
from olympus.store.local_cluster import LocalCluster
from olympus.store.redis_clients import cluster_url, command_client, pubsub_client
from olympus.store.redis_hints import RedisHints
from olympus.store.sharded_hints import ShardedHints


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


async def test_sharded_hints_follow_a_slot_that_moves(redis_cluster: LocalCluster) -> None:
    """A room's slot moves to another master twice: first before the process subscribes, so
    its map of the slots is stale and the SSUBSCRIBE is refused (MOVED); then while it is
    subscribed, so the old master unsubscribes it. Each time the process reads the map again,
    subscribes on the slot's new master (the confirmation: the fan-out reads the room's tail),
    and hears the room's next append there."""
    settings = StoreConfig(cluster_url(redis_cluster.startup))
    cluster = command_client(settings)
    assert isinstance(cluster, RedisCluster)
    store = EventStore(cluster, prefix=f"moved-{uuid.uuid4().hex[:8]}")
    room = redis_cluster.room_in_an_empty_slot(lambda room: store.keys(room).events)
    channel = store.hint_channel(room).encode()
    slot = key_slot(channel)
    home = redis_cluster.master_of(store.keys(room).events)
    away = next(m for m in redis_cluster.live_masters if m is not home)
    messages: list[dict[str, Any]] = []
    wanted: dict[bytes, str] = {}
    lost: list[None] = []  # a connection lost or a subscription moved, each
    hints = ShardedHints(
        cluster,
        functools.partial(pubsub_client, settings),
        wanted,
        messages.append,
        lambda: lost.append(None),
    )
    await hints.start()
    try:
        for to, version in ((away, 1), (home, 2)):
            redis_cluster.move_slot(slot, to)
            if not wanted:  # the first move: subscribed after it, on the stale map
                wanted[channel] = room
                await hints.subscribe(channel)
            # Subscribed there, and its confirmation dispatched (by the connection's reader,
            # which may run after the subscription is recorded): the fan-out's cue to read.
            await wait_until(
                lambda: hints.connected
                and hints.where(channel) == to.address  # noqa: B023
                and confirmations(messages) >= version,  # noqa: B023
                30,
                f"a confirmed subscription at {to.address}",
            )
            await store.create_room(room, b"meta")
            await store.append(room, 0, [f"e{version}".encode()])
            await store.delete_room(room)  # the slot empty again, so that it may move
            await wait_until(lambda: messages[-1]["type"] == "smessage", 30, "the hint")
            assert messages[-1]["data"] == b"1"
        # At least one gap per move: a move is a SETSLOT on each node in turn, so a regroup in
        # the middle of one may read a map that is still old and meet one more gap.
        assert len(lost) >= 2
    finally:
        await hints.stop()
        redis_cluster.move_slot(slot, home)
        await store.delete_room(room)
        await cluster.aclose()


def confirmations(messages: list[dict[str, Any]]) -> int:
    return sum(m["type"] == "ssubscribe" for m in messages)


async def test_sharded_hints_follow_a_live_room_whose_slot_migrates(
    redis_cluster: LocalCluster,
) -> None:
    """A live room's slot is resharded with its keys (``migrate_slot``) while the process is
    subscribed to the room's hints on its master. Once the keys are all on the new master, but
    before it owns the slot, an append is sent there (ASK) and its SPUBLISH runs there, where
    nobody listens: that hint is lost. When the slot is given away, the old master unsubscribes
    the process; it reads the map of the slots again, subscribes on the new master, and the
    confirmation makes it read the room's tail, as the fan-out does: the lost event arrives.
    The next append's hint is heard on the new master. A follower doing what the fan-out does
    (read the tail after every hint and every confirmation) gets every event once, in order."""
    settings = StoreConfig(cluster_url(redis_cluster.startup))
    cluster = command_client(settings)
    assert isinstance(cluster, RedisCluster)
    store = EventStore(cluster, prefix=f"migrates-{uuid.uuid4().hex[:8]}")
    room = redis_cluster.room_in_an_empty_slot(lambda room: store.keys(room).events)
    keys = store.keys(room)
    channel = store.hint_channel(room).encode()
    slot = key_slot(channel)
    await store.create_room(room, b"meta")
    chain = ""
    for n in range(3):
        await store.append(room, n, [f"e{n + 1}".encode()], f"c{n + 1}", chain)
        chain = chain_next(chain, f"e{n + 1}".encode())
    home = redis_cluster.master_of(keys.events)
    away = next(m for m in redis_cluster.live_masters if m is not home)
    messages: list[dict[str, Any]] = []
    wake = asyncio.Event()
    got: list[StoredEvent] = []

    def dispatch(message: dict[str, Any]) -> None:
        messages.append(message)
        wake.set()

    def heard() -> list[bytes]:
        return [m["data"] for m in messages if m["type"] == "smessage"]

    async def follow() -> None:  # the fan-out's rule: the stream is the truth, hints wake it
        while True:
            await wake.wait()
            wake.clear()
            got.extend(await store.read(room, got[-1].version if got else 0))

    lost: list[None] = []  # a connection lost or a subscription moved, each
    hints = ShardedHints(
        cluster,
        functools.partial(pubsub_client, settings),
        {channel: room},
        dispatch,
        lambda: lost.append(None),
    )
    await hints.start()
    follower = asyncio.create_task(follow())
    loop = asyncio.get_running_loop()
    moved: list[str] = []

    def between(key: str) -> None:
        """Once the room's four keys are all on the new master: an append, served there."""
        moved.append(key)
        if len(moved) == 4:
            append = store.append(room, 3, [b"e4"], "c4", chain)
            assert asyncio.run_coroutine_threadsafe(append, loop).result(30).version == 4

    try:
        await wait_until(lambda: len(got) == 3, 30, "the room's events")
        assert hints.where(channel) == home.address
        assert await asyncio.to_thread(redis_cluster.migrate_slot, slot, away, between) == 4
        await wait_until(
            lambda: hints.connected and hints.where(channel) == away.address,
            30,
            f"a subscription at {away.address}",
        )
        await wait_until(lambda: len(got) == 4, 30, "the event whose hint was lost")
        await store.append(room, 4, [b"e5"], "c5", chain_next(chain, b"e4"))
        await wait_until(lambda: len(got) == 5, 30, "the next event")
        await wait_until(lambda: b"5" in heard(), 30, "its hint")
        assert heard() == [b"5"]  # not b"4": published where nobody listened
        assert got == await store.read(room)  # each event once, in order
        assert [e.data for e in got] == [b"e1", b"e2", b"e3", b"e4", b"e5"]
        assert len(lost) >= 1
    finally:
        follower.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await follower
        await hints.stop()
        await store.delete_room(room)
        redis_cluster.move_slot(slot, home)
        await cluster.aclose()


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
    assert server.services.fanout.hints.channels == {}  # type: ignore[attr-defined]  # unsubscribed
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


def noop(*_: object) -> None:
    """A handler of hints that does nothing with them."""


async def test_a_room_watched_while_the_hints_reconnect_is_subscribed_after(
    store: EventStore, settings: Settings
) -> None:
    """After a loss, the fan-out connects again and then subscribes to its channels. A room
    watched while it connects (when there is nowhere to subscribe) must be among them, or its
    hints, and other processes' moves in it, would never reach this process."""
    client = Redis.from_url(settings.redis_url)
    fanout = RedisHints(
        store.redis, [client], lambda url: client, store, noop, noop, lambda: None
    )
    late = "late"
    channel = store.hint_channel(late)
    try:
        await fanout._resubscribe()
        fanout.pubsub.close()  # lost
        reconnecting = asyncio.get_running_loop().create_task(fanout._resubscribe())
        await asyncio.sleep(0)  # it waits for its new connection
        assert not fanout._subscribed
        await fanout.watch(late)
        await reconnecting
        deadline = asyncio.get_running_loop().time() + 10
        while (await store.redis.pubsub_numsub(channel))[0][1] != 1:
            assert asyncio.get_running_loop().time() < deadline, "never subscribed"
            await asyncio.sleep(0.01)
    finally:
        await fanout.stop()
