"""Rooms against the computer through the real service: real ``olympus serve``
processes with their bots worker (``olympus bots``), a real Redis, real websockets.

A person's seat is driven by the test (the harness's random client); the computer plays the
other seat over the websocket as a client. The bots' budgets are tiny and their reply delay
is off (``OLYMPUS_BOT_ITERATIONS``, ``OLYMPUS_BOT_REPLY_SECONDS``): these tests are about the
plumbing, not the play.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from process_harness import Player, ServerProcess, wait_until
from service_harness import Oracle, setup_command
from test_service_processes import Cluster, check_stream, cluster_on

from olympus.bots_worker import WorkerConfig
from olympus.rules import Faction, Phase, legal_actions
from olympus.server import Settings
from olympus.store import BOT_BUCKETS, EmbeddedRedis, bot_hash
from olympus.store.local_cluster import LocalCluster
from olympus.store.redis_clients import cluster_url
from olympus.store.redis_indexes import RedisBotSeats

BOT_ENV = {"OLYMPUS_BOT_ITERATIONS": "3", "OLYMPUS_BOT_REPLY_SECONDS": "0"}
GAME_TIMEOUT = 120.0


async def start(cluster: Cluster, name: str) -> ServerProcess:
    process = ServerProcess(
        name, cluster.redis_url, cluster.prefix, cluster.work_dir, env=cluster.env, bots=True
    )
    cluster.processes.append(process.spawn())
    await process.wait_healthy()
    return process


async def person_against_computer(
    cluster: Cluster, process: ServerProcess, **options: object
) -> tuple[Player, dict]:
    async with httpx.AsyncClient(base_url=process.url, timeout=10) as http:
        reply = await http.post("/rooms/computer", json=options)
        assert reply.status_code == 201, reply.text
        room = reply.json()
        summary = (await http.get(f"/rooms/{room['room']}")).json()
    person = Faction(room["seat"])
    assert summary["computer"] == {person.enemy.value: options.get("level", "normal")}
    # The computer's seat is recorded in its room's bucket, where the workers look. (The game
    # cannot end before the test's person plays.)
    field = f"{room['room']}:{person.enemy.value}"
    assert field in await RedisBotSeats(cluster.redis, cluster.prefix).read(range(BOT_BUCKETS))
    assert summary["seats"] == {"olympians": True, "chthonians": True}
    player = await cluster.player(
        person.value[:3], room["room"], room["epoch"], [process.ws_url], token=room["token"]
    )
    if not options.get("random_setup"):
        reply = await (await player.command(setup_command(random.Random(1), person), "setup"))
        assert reply["type"] == "ack", reply
    return player, room


@pytest.fixture
async def cluster(redis_server: EmbeddedRedis, tmp_path: Path) -> AsyncIterator[Cluster]:
    async with cluster_on(redis_server.url, tmp_path, env=BOT_ENV) as c:
        yield c


@pytest.mark.parametrize(
    ("shards", "reads"), [(1, 64), (2, 64), (3, 192), (64, 64), (128, 128)], ids=str
)
def test_each_seat_is_in_a_bucket_its_shard_reads(shards: int, reads: int) -> None:
    """``olympus bots --shard I/N``: each room's seats belong to one worker, which reads the
    bucket that holds them. The workers together read each bucket N / gcd(N, BOT_BUCKETS)
    times: once when N divides the buckets, twice for 128, three times for 3."""
    assert BOT_BUCKETS == 64  # the reads above
    settings = Settings(redis_url="redis://unused", prefix="p")
    workers = [WorkerConfig("ws://unused", settings, shard=i, shards=shards) for i in range(shards)]
    for n in range(2000):
        room = f"room{n}"
        [owner] = [worker for worker in workers if worker.mine(room)]
        assert bot_hash(room) % BOT_BUCKETS in owner.record_buckets()
    assert sum(len(worker.record_buckets()) for worker in workers) == reads


@pytest.mark.parametrize(
    "options",
    [
        {"side": "olympians", "level": "hard"},
        {"side": "random", "level": "easy", "open_combat": True, "random_setup": True},
    ],
    ids=["hard", "random_setup"],
)
async def test_a_person_plays_the_computer_to_the_end(cluster: Cluster, options: dict) -> None:
    process = await start(cluster, "a")
    person, room = await person_against_computer(cluster, process, **options)
    await watched_to_the_end(cluster, person, room, process)


async def watched_to_the_end(
    cluster: Cluster, person: Player, room: dict, spectating: ServerProcess
) -> Oracle:
    """The game played to its end with a spectator on ``spectating``: both streams are what the
    log says to each, and the computer's record goes once its worker saw the end."""
    spectator = await cluster.player("spec", room["room"], room["epoch"], [spectating.ws_url])
    players = [person, spectator]
    await wait_until(lambda: person.over is not None, GAME_TIMEOUT, "the game's end", players)
    await wait_until(lambda: spectator.over is not None, GAME_TIMEOUT, "the spectator's end")
    oracle = Oracle(cluster.store, room["room"])
    await oracle.sync()
    assert oracle.state.result is not None
    check_stream(person, oracle, Faction(room["seat"]))
    check_stream(spectator, oracle, None)
    async with asyncio.timeout(GAME_TIMEOUT):
        bots = RedisBotSeats(cluster.redis, cluster.prefix)
        while any(f.startswith(f"{room['room']}:") for f in await bots.read(range(BOT_BUCKETS))):
            await asyncio.sleep(0.05)
    return oracle


async def test_the_computer_resumes_after_a_server_restart(cluster: Cluster) -> None:
    """The server (and its bots worker) stops mid-game; a new one starts on the same port:
    the bot's memory is rebuilt from its seat's events and the game goes on to its end."""
    process = await start(cluster, "a")
    person, room = await person_against_computer(cluster, process, side="chthonians")
    await wait_until(lambda: (person.last_seq or 0) >= 20, GAME_TIMEOUT, "some moves", [person])
    process.stop()  # SIGTERM: the service and its bots worker go
    oracle = Oracle(cluster.store, room["room"])
    await oracle.sync()
    stopped_at = oracle.state.version
    process.spawn()
    await process.wait_healthy()
    await wait_until(lambda: person.over is not None, GAME_TIMEOUT, "the game's end", [person])
    await oracle.sync()
    assert oracle.state.result is not None
    check_stream(person, oracle, Faction.CHTHONIANS)
    applied = await cluster.redis.hgetall(cluster.store.keys(room["room"]).commands)
    by_the_bot = [
        int(value.split(b":")[0]) for key, value in applied.items() if key.startswith(b"olympians:")
    ]
    assert min(by_the_bot) <= stopped_at, "the computer played before the restart"
    # and after it, wherever the game asked it to (it may have ended on the person's moves)
    asked = any(
        legal_actions(state, Faction.OLYMPIANS)
        for state in oracle.states[stopped_at:-1]
        if state.phase is not Phase.OVER
    )
    assert max(by_the_bot) > stopped_at or not asked, "the computer played after the restart"


async def test_the_computer_plays_itself_for_spectators(cluster: Cluster) -> None:
    process = await start(cluster, "a")
    async with httpx.AsyncClient(base_url=process.url, timeout=10) as http:
        reply = await http.post("/rooms/watch", json={"olympians": "easy", "chthonians": "hard"})
        assert reply.status_code == 201, reply.text
        room = reply.json()
        listed = [
            r
            for status in ("live", "finished")
            for r in (await http.get("/rooms", params={"status": status})).json()["rooms"]
        ]
    [summary] = [r for r in listed if r["room"] == room["room"]]
    assert summary["computer"] == {"olympians": "easy", "chthonians": "hard"}
    spectator = await cluster.player("spec", room["room"], room["epoch"], [process.ws_url])
    await wait_until(lambda: spectator.over is not None, GAME_TIMEOUT, "the end", [spectator])
    oracle = Oracle(cluster.store, room["room"])
    await oracle.sync()
    check_stream(spectator, oracle, None)


async def test_the_computer_plays_on_a_redis_cluster(
    redis_cluster: LocalCluster, tmp_path: Path
) -> None:
    """``olympus serve --redis-cluster`` starts its bots worker on the cluster too: the worker
    reads the computer's seat there, plays it to the end over process A (a spectator watches
    on B), and deletes its record."""
    async with cluster_on(cluster_url(redis_cluster.startup), tmp_path, env=BOT_ENV) as cluster:
        a = await start(cluster, "a")
        [b] = await cluster.start("b")
        person, room = await person_against_computer(cluster, a, side="olympians", level="easy")
        await watched_to_the_end(cluster, person, room, b)
        applied = await cluster.redis.hgetall(cluster.store.keys(room["room"]).commands)
        by_the_bot = [key for key in applied if key.startswith(b"chthonians:bot-")]
        assert len(by_the_bot) >= 5, applied
