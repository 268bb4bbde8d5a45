"""``OLYMPUS_APPEND_REPLICAS=1`` on a real Redis Cluster: a resent command is acknowledged on
the terms of a first send.

The service acknowledges a command once a replica of the room's master has its events; if none
confirms in time the command gets ``unavailable`` though its events are on the master, and the
client sends it again under its id. That resend is a duplicate, found one of two ways: the
room's cache already folded the events (a hint made it read them), so the command is judged
illegal and its id found applied; or the cache has not, and the append script finds the id
applied. Either way its ``ack`` must wait for a replica as the first one did
(docs/operations.md, "On a Redis Cluster").
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from service_harness import (
    TIMEOUT,
    Oracle,
    ServerThread,
    WsClient,
    create_game,
    seat,
    setup_command,
)

from olympus.bots import choose
from olympus.rules import Faction, GameState, IllegalCommand, execute_steps, legal_actions
from olympus.rules.legal import LegalAction
from olympus.server import Settings
from olympus.store import EventStore, StoreConfig
from olympus.store.local_cluster import LocalCluster, Node
from olympus.store.redis_clients import cluster_url, command_client

REPLICA_SECONDS = 60.0  # how long a replica may take to go, or to come back and sync


@pytest.fixture
def own_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    """A cluster of the test's own: it kills a replica and starts it again."""
    cluster = LocalCluster(tmp_path_factory.mktemp("replicas")).start()
    try:
        yield cluster
    finally:
        cluster.stop()


def replicas_online(master: Node) -> int:
    """The replicas the master counts online (their sync done): the ones WAIT may count."""
    info = master.cli("info", "replication")
    return len(re.findall(r"^slave\d+:.*state=online", info, re.MULTILINE))


def replica_of(cluster: LocalCluster, master: Node) -> Node:
    """The master's one replica, as the master names it."""
    ports = re.findall(r"^slave\d+:.*port=(\d+)", master.cli("info", "replication"), re.MULTILINE)
    [port] = ports
    [node] = [n for n in cluster.nodes if n.port == int(port)]
    return node


async def until(condition: Callable[[], bool], what: str) -> None:
    """Until ``condition()`` holds: a positive signal, within ``REPLICA_SECONDS``."""
    deadline = time.monotonic() + REPLICA_SECONDS
    while not await asyncio.to_thread(condition):
        assert time.monotonic() < deadline, f"no {what} in {REPLICA_SECONDS} s"
        await asyncio.sleep(0.05)


def applied_once(state: GameState) -> LegalAction:
    """A legal action that its own events make illegal: sent again once they are folded, it
    is judged illegal, and found applied by its id."""
    for side in Faction:
        for action in legal_actions(state, side):
            _, states = execute_steps(state, action.command)
            try:
                execute_steps(states[-1], action.command)
            except IllegalCommand:
                return action
    raise AssertionError("every legal action stays legal after itself")


def appends(metrics: str) -> int:
    """The store appends a process made (``olympus_append_seconds_count``)."""
    [count] = re.findall(r"^olympus_append_seconds_count (\d+)$", metrics, re.MULTILINE)
    return int(count)


def refused(reply: dict[str, Any]) -> bool:
    """The reply is ``unavailable``: the command may be applied, but was not acknowledged."""
    return reply["type"] == "error" and reply["code"] == "unavailable"


async def acknowledged(client: WsClient, command_id: str, command: dict[str, Any]) -> Any:
    """Send the command again under its id while it gets ``unavailable`` (as a client does);
    the reply that is not."""
    deadline = time.monotonic() + REPLICA_SECONDS
    while (reply := await client.command(command_id, command))["type"] == "error":
        assert refused(reply), reply
        assert time.monotonic() < deadline, f"{command_id} unavailable for {REPLICA_SECONDS} s"
    return reply


async def test_a_resent_command_is_acknowledged_only_once_a_replica_has_it(
    own_cluster: LocalCluster,
    start_server: Callable[..., ServerThread],
    settings: Settings,
) -> None:
    """The room's master loses its replica (``kill -9``), so no WAIT can confirm. A command
    gets ``unavailable``, its events on the master; the room's cache folds them (a hint) and
    the resend, judged illegal now, finds its id applied: ``unavailable`` again, not an
    ``ack``. Another command, sent on two sockets of its seat at once: the second is judged on
    the cache without the first one's events, and the append script finds its id applied:
    ``unavailable`` for both. The replica comes back and syncs: both commands, sent again, get
    their ``ack`` (duplicates), and the log holds each once."""
    url = cluster_url(own_cluster.startup)
    server = start_server(redis_url=url, append_replicas=1, append_replica_timeout_ms=2000)
    redis = command_client(StoreConfig(url))
    store = EventStore(redis, prefix=settings.prefix)
    sockets: list[WsClient] = []
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT) as http:
            game = await create_game(http)
            for faction in Faction:
                sockets.append(await seat(server.ws_url, game, faction))
            rng = random.Random(3)
            for faction in Faction:
                reply = await game.seats[faction].command("setup", setup_command(rng, faction))
                assert reply["type"] == "ack", reply
            oracle = Oracle(store, game.room)
            before = (await oracle.sync()).version

            master = own_cluster.master_of(store.keys(game.room).events)
            lost = replica_of(own_cluster, master)
            lost.kill()
            await until(lambda: replicas_online(master) == 0, "replica gone")

            # The cache's path: the events folded, the resend judged illegal, its id applied.
            first = applied_once(oracle.state)
            mover = game.seats[first.command.side]
            reply = await mover.command("a1", first.wire)
            assert refused(reply), reply
            assert (await oracle.sync()).version > before  # on the master, on no replica
            await mover.wait_seq(len(oracle.messages(first.command.side)))  # in the cache
            made = appends((await http.get("/metrics")).text)
            reply = await mover.command("a1", first.wire)
            assert refused(reply), reply
            assert appends((await http.get("/metrics")).text) == made  # judged, not appended

            # The append's path: two sockets of a seat send one command at once; the second
            # waits for the room while the first waits for a replica (the WAIT's 2 s), then is
            # judged on the cache without the first one's events, and appended: a duplicate.
            after_first = oracle.state.version
            second = choose(rng, oracle.state)
            assert second is not None
            side = second.command.side
            twin = await WsClient.open(server.ws_url)
            sockets.append(twin)
            welcome = await twin.hello(token=game.tokens[side])
            assert welcome["type"] == "welcome", welcome
            made = appends((await http.get("/metrics")).text)
            message = {"type": "command", "id": "b1", "command": second.wire}
            await game.seats[side].send(message)
            await twin.send(message)
            replies = [await client.expect("error", "ack") for client in (game.seats[side], twin)]
            assert all(refused(r) for r in replies), replies
            assert appends((await http.get("/metrics")).text) == made + 2  # both appended
            assert (await oracle.sync()).version > after_first  # once, on the master

            # The replica comes back (it rejoins as the master's replica and syncs): the
            # resends are acknowledged, as duplicates.
            lost.start()
            await until(lambda: replicas_online(master) == 1, "replica back in sync")
            acks = [
                await acknowledged(mover, "a1", first.wire),
                await acknowledged(game.seats[side], "b1", second.wire),
            ]
            assert [a["type"] for a in acks] == ["ack", "ack"], acks
            metrics = (await http.get("/metrics")).text
            assert 'olympus_commands_total{result="duplicate"} 2' in metrics, metrics

        # The log: each command once, every event from exactly one command id.
        state = await oracle.sync()
        records = await redis.hgetall(store.keys(game.room).commands)
        applied = {
            key.decode(): tuple(int(v) for v in value.split(b":")[:2])
            for key, value in records.items()
        }
        ids = {f"{first.command.side.value}:a1", f"{side.value}:b1"}
        assert ids <= applied.keys()
        covered = sorted(v for low, high in applied.values() for v in range(low, high + 1))
        assert covered == list(range(1, state.version + 1))
    finally:
        for client in sockets:
            await client.close()
        await store.aclose()
        await redis.aclose()
