"""Real ``olympus serve`` OS processes on one Redis: whole games, crashes, a Redis restart.

Every other service test runs the app in threads of the test process; these start the CLI as
separate processes (``process_harness.py``) and kill them for real (``kill -9`` of the process
group), so what survives is only what the service put in Redis. Clients are bots that act on
the ``legal`` messages they receive and reconnect with their resume token, like a real client.

What is checked, against the room's log read straight from Redis (``Oracle``):

- every seat and spectator received exactly its observation of the log, numbered 1..n, each
  event once, across all its connections (no loss, no duplicate, no gap after a resume);
- every command a client saw acknowledged is in the log, and every event of the log belongs
  to exactly one command id (a retried command applied once);
- a spectator joining late gets a view that is the true position, and every process serves
  the same final view.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from process_harness import (
    Player,
    ServerProcess,
    has_commit,
    legal_actions_of,
    wait_until,
    wire_command,
)
from service_harness import Game, Oracle, WsClient, create_game, jsonable, seat, setup_command

from olympus.bots import pick_action
from olympus.lifetime import alive, children
from olympus.native import turned_off
from olympus.rules import COMPILED, Faction, legal_actions
from olympus.rules.observation import view
from olympus.store import EmbeddedRedis, EventStore, StoreConfig, StoredEvent
from olympus.store.local_cluster import LocalCluster
from olympus.store.redis_clients import cluster_url, command_client

OLY, CHT = Faction.OLYMPIANS, Faction.CHTHONIANS
GAME_TIMEOUT = 60.0


class Cluster:
    """Server processes of one deployment (one Redis, one key prefix) and their clients."""

    def __init__(
        self,
        redis_url: str,
        work_dir: Path,
        prefix: str | None = None,
        env: dict[str, str] | None = None,
    ) -> None:
        self.redis_url = redis_url
        self.env = env
        self.prefix = prefix or f"proc-{uuid.uuid4().hex[:10]}"
        self.work_dir = work_dir
        self.processes: list[ServerProcess] = []
        self.players: list[Player] = []
        # The service's own client: one Redis, or a Redis Cluster (redis+cluster://…).
        self.redis = command_client(StoreConfig(redis_url))
        self.store = EventStore(self.redis, prefix=self.prefix)

    async def start(self, *names: str) -> list[ServerProcess]:
        started = [
            ServerProcess(name, self.redis_url, self.prefix, self.work_dir, env=self.env).spawn()
            for name in names
        ]
        self.processes += started
        await asyncio.gather(*(p.wait_healthy() for p in started))
        return started

    async def restart(self, process: ServerProcess) -> None:
        process.spawn()
        await process.wait_healthy()

    async def player(self, *args: Any, **kwargs: Any) -> Player:
        player = Player(*args, **kwargs)
        self.players.append(player)
        return await player.start()

    async def seats(
        self, game: Game, urls: dict[Faction, list[str]], **kwargs: Any
    ) -> dict[Faction, Player]:
        return {
            faction: await self.player(
                faction.value[:3],
                game.room,
                game.epoch,
                urls[faction],
                token=game.tokens[faction],
                seed=7 + i,
                protocol=("olympus.json", "olympus.msgpack")[i],
                **kwargs,
            )
            for i, faction in enumerate(Faction)
        }

    async def close(self) -> None:
        for player in self.players:
            await player.close()
        await self.store.aclose()
        await self.redis.aclose()

    def kill_all(self) -> None:
        for process in self.processes:
            process.kill()


@pytest.fixture
def work_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("proc")  # short: the embedded Redis socket path is limited


@pytest.fixture
def durable_redis(work_dir: Path) -> Iterator[EmbeddedRedis]:
    """A Redis of the test's own, as the service runs it: AOF with ``appendfsync always``."""
    server = EmbeddedRedis(work_dir / "redis", appendfsync="always").start()
    yield server
    server.kill()


@contextlib.asynccontextmanager
async def cluster_on(
    redis_url: str, work_dir: Path, prefix: str | None = None, env: dict[str, str] | None = None
) -> AsyncIterator[Cluster]:
    cluster = Cluster(redis_url, work_dir, prefix, env)
    try:
        yield cluster
    finally:
        try:
            await cluster.close()
        finally:
            cluster.kill_all()  # kill -9 every process group, whatever happened


@pytest.fixture
async def cluster(redis_server: EmbeddedRedis, work_dir: Path) -> AsyncIterator[Cluster]:
    async with cluster_on(redis_server.url, work_dir) as c:
        yield c


@pytest.fixture
async def durable_cluster(durable_redis: EmbeddedRedis, work_dir: Path) -> AsyncIterator[Cluster]:
    async with cluster_on(durable_redis.url, work_dir) as c:
        yield c


# -- checks ---------------------------------------------------------------------------------


async def new_game(process: ServerProcess) -> Game:
    async with httpx.AsyncClient(base_url=process.url, timeout=10) as http:
        return await create_game(http)


async def setups(seats: dict[Faction, Player], seed: int = 3) -> None:
    rng = random.Random(seed)
    for faction, player in seats.items():
        reply = await (await player.command(setup_command(rng, faction), "setup"))
        assert reply["type"] == "ack", reply


async def play_to_the_end(cluster: Cluster, players: list[Player]) -> None:
    await wait_until(
        lambda: all(p.over is not None for p in players), GAME_TIMEOUT, "the game's end", players
    )


def check_stream(player: Player, oracle: Oracle, audience: Faction | None) -> None:
    """Everything the audience may know, each event once and in order, over all connections."""
    player.check()
    expected = oracle.messages(audience)
    first = player.views[0]["seq"] if player.views else 0
    assert all(w["resumed"] for w in player.welcomes[1:]), player.welcomes  # no gap: resumed
    assert [m["seq"] for m in player.events] == list(range(first + 1, len(expected) + 1))
    assert [m["event"] for m in player.events] == expected[first:]
    if oracle.state.result is not None:
        assert player.over is not None and player.over["result"] == oracle.state.result
        assert player.over["log"] == oracle.log()


def check_refusals(player: Player, expected: tuple[str, ...] = ()) -> None:
    """A bot acting on its ``legal`` is only refused when the room moved on meanwhile."""
    for refusal in player.refused:
        if refusal["error"]["id"] in expected:
            continue
        assert refusal["seq_then"] > refusal["sent_seq"], refusal


async def check_commands(cluster: Cluster, oracle: Oracle, players: list[Player]) -> None:
    """Each acked command is in the log; the log is exactly the commands, each applied once."""
    applied = {
        key.decode(): tuple(int(v) for v in value.split(b":")[:2])
        for key, value in (
            await cluster.redis.hgetall(cluster.store.keys(oracle.room).commands)
        ).items()
    }
    for player in players:
        seat = "olympians" if player.name == "oly" else "chthonians"
        for ack in player.acks:
            assert f"{seat}:{ack['id']}" in applied, ack
    # Every event came from exactly one command id (GameCreated from the lobby's).
    covered = sorted(v for first, last in applied.values() for v in range(first, last + 1))
    assert covered == list(range(1, oracle.state.version + 1))


def check_view(player: Player, oracle: Oracle) -> None:
    """A late spectator's view is the true position as of its ``seq`` (R7: as they see it)."""
    [message] = player.views
    seq, observed = message["seq"], oracle.observed(None)
    # The states in which the spectators' last message is number ``seq``.
    low = observed[seq - 1][0] + 1 if seq else 0
    high = observed[seq][0] if seq < len(observed) else len(oracle.events)
    candidates = [jsonable(view(oracle.states[k], None)) for k in range(low, high + 1)]
    assert message["view"] in candidates


def hint_subscribers(redis_cluster: LocalCluster, cluster: Cluster, room: str) -> dict[int, int]:
    """Each live node's SSUBSCRIBErs of the room's hints (PUBSUB SHARDNUMSUB)."""
    channel = cluster.store.hint_channel(room)
    nodes = redis_cluster.live
    return {n.port: int(n.cli("pubsub", "shardnumsub", channel).split()[1]) for n in nodes}


async def check_sharded_hints(redis_cluster: LocalCluster, cluster: Cluster, room: str) -> None:
    """Both processes hear the room's hints on the master that owns its slot now, and there
    only: sharded pub/sub, subscribed where the hints are published."""
    master = redis_cluster.master_of(cluster.store.keys(room).events)
    expected = {n.port: 2 if n is master else 0 for n in redis_cluster.live}
    await wait_until(
        lambda: hint_subscribers(redis_cluster, cluster, room) == expected,
        30,
        f"both processes subscribed at {master.address} only",
    )


def acked_ids(seats: dict[Faction, Player]) -> set[str]:
    """The commands the seats saw acknowledged so far, as the store names them."""
    return {f"{faction.value}:{ack['id']}" for faction, p in seats.items() for ack in p.acks}


async def report_survivors(
    report: Callable[[str], None],
    cluster: Cluster,
    room: str,
    seats: dict[Faction, Player],
    acked_before: set[str],
    log_before: list[StoredEvent],
) -> list[str]:
    """Which acknowledged commands, and which events of the log read just before the kill, are
    in the log the promoted replica serves: reported (conftest ``failover_report``). Returns
    the acknowledged commands lost."""
    applied = await cluster.redis.hgetall(cluster.store.keys(room).commands)
    acked = acked_ids(seats)
    lost = sorted(i for i in acked if i.encode() not in applied)
    log_after = await cluster.store.read(room)
    kept = 0  # the length of the history the two logs share
    while kept < min(len(log_before), len(log_after)) and log_before[kept] == log_after[kept]:
        kept += 1
    report(
        f"{len(acked)} commands acknowledged ({len(acked_before)} before the kill), "
        f"{len(acked) - len(lost)} in the log after the failover, lost: {lost or 'none'}; "
        f"of the {len(log_before)} events in the log just before the kill, the first {kept} "
        f"are in it after (of {len(log_after)})"
    )
    return lost


async def check_final_view(processes: list[ServerProcess], oracle: Oracle) -> None:
    expected = {"seq": len(oracle.messages(None)), "view": jsonable(view(oracle.state, None))}
    async with httpx.AsyncClient(timeout=10) as http:
        for process in processes:
            got = (await http.get(f"{process.url}/rooms/{oracle.room}/view")).json()
            assert {"seq": got["seq"], "view": got["view"]} == expected, process.name


# -- a game -----------------------------------------------------------------------------------


async def test_a_game_over_three_processes(cluster: Cluster) -> None:
    a, b, c = await cluster.start("a", "b", "c")
    game = await new_game(a)
    seats = await cluster.seats(game, {OLY: [a.ws_url], CHT: [b.ws_url]})
    spectator = await cluster.player("spec", game.room, game.epoch, [b.ws_url])
    await setups(seats)
    players = [*seats.values(), spectator]
    # A spectator joining mid-game (no resume token) on a third process: a view, then events.
    await wait_until(lambda: spectator.last_seq >= 12, GAME_TIMEOUT, "some moves", players)
    late = await cluster.player("late", game.room, game.epoch, [c.ws_url], from_start=False)
    await play_to_the_end(cluster, [*players, late])

    oracle = Oracle(cluster.store, game.room)
    await oracle.sync()
    assert oracle.state.result is not None and len(seats[OLY].acks) + len(seats[CHT].acks) > 10
    for audience, player in ((OLY, seats[OLY]), (CHT, seats[CHT]), (None, spectator), (None, late)):
        check_stream(player, oracle, audience)
        check_refusals(player)
    check_view(late, oracle)
    assert late.events, "the late spectator got nothing after its view"
    await check_commands(cluster, oracle, list(seats.values()))
    await check_final_view([a, b, c], oracle)


# -- faults ---------------------------------------------------------------------------------


async def test_a_server_killed_mid_combat_after_one_commitment(cluster: Cluster) -> None:
    """kill -9 right after a sealed commitment was acked; the combat goes on elsewhere."""
    a, b = await cluster.start("a", "b")
    for attempt in range(5):  # a random game almost always fights; if not, another one
        game = await new_game(a)
        # Both seats on A, so the crash cuts both; the spectator watches from B.
        seats = await cluster.seats(game, {OLY: [a.ws_url], CHT: [a.ws_url]})
        spectator = await cluster.player(f"spec{attempt}", game.room, game.epoch, [b.ws_url])
        players = [*seats.values(), spectator]
        for player in seats.values():
            player.hold = has_commit  # freeze the game when a combat needs commitments
        await setups(seats, seed=attempt)
        await wait_until(
            lambda: any(p.holding or p.over for p in players),  # noqa: B023
            GAME_TIMEOUT,
            "a combat",
            players,
        )
        if any(p.holding for p in seats.values()):
            break
    else:
        pytest.fail("no combat in five random games")

    first = next(p for p in seats.values() if p.holding)
    faction = next(f for f, p in seats.items() if p is first)
    other = seats[faction.enemy]
    actions = legal_actions_of(first.holding, faction.value)
    commits = [x for x in actions if x.command.type == "commit"]
    commitment = wire_command(pick_action(random.Random(1), commits))
    ack = await (await first.command(commitment, "sealed"))
    assert ack["type"] == "ack", ack
    oracle = Oracle(cluster.store, game.room)
    await oracle.sync()
    assert oracle.events[-1].TYPE == "combat_committed" and oracle.events[-1].faction is faction

    # The crash: A dies with both seats' sockets. The committed side comes back on a restarted
    # A, the other on B; both resume from their last seq.
    first.urls, other.urls = [a.ws_url], [b.ws_url]
    a.kill()
    await cluster.restart(a)
    await wait_until(
        lambda: first.connections == 2 and other.connections == 2, 30, "reconnects", players
    )
    assert first.welcomes[-1]["resumed"] and other.welcomes[-1]["resumed"]
    assert (first.welcomes[-1]["url"], other.welcomes[-1]["url"]) == (a.ws_url, b.ws_url)

    # The commitment is still pending: the committed side is told so, the other may commit.
    again = await (await first.command(commitment, "sealed-again"))
    assert again["type"] == "error" and again["code"] == "already_committed", again
    assert await (await first.command(commitment, "sealed")) == ack  # same id: same ack
    await wait_until(
        lambda: any(x.command.type == "commit" for x in other.current_legal()),
        30,
        "the other side's commitment",
        players,
    )
    assert first.current_legal() == []
    for player in seats.values():
        await player.release()
    await play_to_the_end(cluster, players)

    await oracle.sync()
    types = [e.TYPE for e in oracle.events]
    sealed_at = types.index("combat_committed", ack["seq"] - 1)
    assert "combat_round_resolved" in types[sealed_at:]
    for audience, player in ((OLY, seats[OLY]), (CHT, seats[CHT]), (None, spectator)):
        check_stream(player, oracle, audience)
        check_refusals(player, expected=("sealed-again",))
    await check_commands(cluster, oracle, list(seats.values()))


async def test_redis_killed_and_restarted_mid_game(
    durable_cluster: Cluster, durable_redis: EmbeddedRedis
) -> None:
    """kill -9 of redis-server (appendfsync always) while bots play: no acked event is lost."""
    cluster = durable_cluster
    a, b = await cluster.start("a", "b")
    game = await new_game(a)
    seats = await cluster.seats(game, {OLY: [a.ws_url, b.ws_url], CHT: [b.ws_url, a.ws_url]})
    spectator = await cluster.player("spec", game.room, game.epoch, [a.ws_url, b.ws_url])
    players = [*seats.values(), spectator]
    await setups(seats)
    await wait_until(lambda: spectator.last_seq >= 20, GAME_TIMEOUT, "some moves", players)

    durable_redis.kill()  # mid-game: the bots keep sending (their commands get `unavailable`)
    async with httpx.AsyncClient(timeout=5) as http:
        assert (await http.get(f"{a.url}/healthz")).status_code == 503
    await asyncio.sleep(0.3)
    await asyncio.to_thread(durable_redis.start)  # the same data dir: the AOF is replayed
    for player in seats.values():  # pause (a pending command still lands) until reconnected
        player.hold = lambda legal: True

    # Every command a client saw acknowledged, before or after the crash, is in the restarted
    # Redis with the very events the client was sent before its ack.
    await asyncio.sleep(0.2)
    oracle = Oracle(cluster.store, game.room)
    await oracle.sync()
    commands = await cluster.redis.hgetall(cluster.store.keys(game.room).commands)
    for faction, player in seats.items():
        assert player.acks
        for ack in list(player.acks):
            assert f"{faction.value}:{ack['id']}".encode() in commands, ack
            seen = [m["event"] for m in player.events[: ack["seq"]]]
            assert seen == oracle.messages(faction)[: ack["seq"]], ack

    # The clients move to the other process, resume, and play on.
    await seats[OLY].reconnect([b.ws_url])
    await seats[CHT].reconnect([a.ws_url])
    await spectator.reconnect([b.ws_url])
    await wait_until(
        lambda: all(p.connections == 2 or p.over for p in players), 30, "reconnects", players
    )
    for player in seats.values():
        await player.release()
    await play_to_the_end(cluster, players)

    await oracle.sync()
    for audience, player in ((OLY, seats[OLY]), (CHT, seats[CHT]), (None, spectator)):
        check_stream(player, oracle, audience)
        assert player.connections == 2 or len(player.events) == len(oracle.messages(audience))
        check_refusals(player)
    await check_commands(cluster, oracle, list(seats.values()))
    for process in (a, b):
        assert process.alive


def stopped(process: ServerProcess) -> bool:
    """Whether ``process`` is stopped (SIGSTOP): its state in /proc."""
    stat = Path(f"/proc/{process.pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] == "T"


def unread_by_server(client: WsClient) -> int:
    """Bytes that ``client`` sent and that wait, unread, in the server's end of its connection
    (the receive queue of that TCP socket, from /proc/net/tcp)."""
    client_port = client.ws.local_address[1]
    server_port = client.ws.remote_address[1]
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        local, remote, queues = fields[1], fields[2], fields[4]
        if int(local.split(":")[1], 16) == server_port and int(remote.split(":")[1], 16) == (
            client_port
        ):
            return int(queues.split(":")[1], 16)
    raise AssertionError(f"no server socket for the client's port {client_port}")


async def test_a_retried_command_after_a_lost_reply_applies_once(cluster: Cluster) -> None:
    """The same command id sent again to another process: applied once, the same ack."""
    a, b, c = await cluster.start("a", "b", "c")
    game = await new_game(b)
    seats = await cluster.seats(game, {OLY: [c.ws_url], CHT: [b.ws_url]})
    for player in seats.values():
        player.hold = lambda legal: True  # the test sends the commands itself for a while
    players = list(seats.values())
    await setups(seats)
    home = {OLY: c, CHT: b}
    commands_key = cluster.store.keys(game.room).commands
    sockets: list[WsClient] = []
    rng = random.Random(5)

    async def seat_socket(process: ServerProcess, faction: Faction) -> WsClient:
        socket = await WsClient.open(process.ws_url)
        sockets.append(socket)
        welcome = await socket.hello(token=game.tokens[faction])
        assert welcome["type"] == "welcome", welcome
        return socket

    async def next_command(faction: Faction) -> dict[str, Any]:
        player = seats[faction]
        await wait_until(lambda: player.current_legal() != [], 30, f"{faction}'s turn", players)
        return wire_command(pick_action(rng, player.current_legal()))

    try:
        # 1. Applied, and the reply lost: the process dies right after the append.
        await wait_until(lambda: any(p.current_legal() for p in players), 30, "a turn", players)
        mover = next(f for f in Faction if seats[f].current_legal())
        command = await next_command(mover)
        before = await cluster.store.version(game.room)
        socket = await seat_socket(a, mover)
        await socket.send({"type": "command", "id": "lost-1", "command": command})
        for _ in range(1000):
            if await cluster.redis.hexists(commands_key, f"{mover.value}:lost-1"):
                break
            await asyncio.sleep(0.005)
        a.kill()
        after = await cluster.store.version(game.room)
        assert after > before
        # The seat sends the same id again, to its own process: the same effect, not twice.
        reply = await (await seats[mover].command(command, "lost-1"))
        assert reply["type"] == "ack" and reply["seq"] == seats[mover].last_seq, reply
        assert await cluster.store.version(game.room) == after
        async with httpx.AsyncClient(timeout=10) as http:
            metrics = (await http.get(f"{home[mover].url}/metrics")).text
        assert 'olympus_commands_total{result="duplicate"} 1' in metrics, metrics
        # ...and to a third process: still the same ack, still nothing appended.
        third = home[mover.enemy]
        socket = await WsClient.open(third.ws_url)
        sockets.append(socket)
        await socket.hello(token=game.tokens[mover], last_seq=0, epoch=game.epoch)
        assert await socket.command("lost-1", command) == reply
        assert await cluster.store.version(game.room) == after

        # 2. Never applied: the process was frozen when the command reached it, then died.
        other = mover.enemy
        command = await next_command(other)
        await cluster.restart(a)
        socket = await seat_socket(a, other)
        a.signal(signal.SIGSTOP)
        await wait_until(lambda: stopped(a), 30, "a stopped")
        message = {"type": "command", "id": "lost-2", "command": command}
        await socket.send(message)
        sent = len(json.dumps(message))  # the frame's payload: its header comes on top
        await wait_until(lambda: unread_by_server(socket) >= sent, 30, "the command at a")
        a.kill()  # reaped: nothing of it runs any more
        assert not await cluster.redis.hexists(commands_key, f"{other.value}:lost-2")
        reply = await (await seats[other].command(command, "lost-2"))
        assert reply["type"] == "ack", reply
        applied = await cluster.store.version(game.room)
        assert applied > after
        assert await (await seats[other].command(command, "lost-2")) == reply
        assert await cluster.store.version(game.room) == applied
    finally:
        for socket in sockets:
            await socket.close()

    # The game goes on to its end.
    for player in players:
        await player.release()
    await play_to_the_end(cluster, players)
    oracle = Oracle(cluster.store, game.room)
    await oracle.sync()
    for faction, player in seats.items():
        check_stream(player, oracle, faction)
        check_refusals(player)
    await check_commands(cluster, oracle, players)


# -- olympus serve --workers N ----------------------------------------------------------------


async def answering_pids(process: ServerProcess, want: int, attempts: int = 400) -> set[int]:
    """The pids that answer ``/healthz`` on the port, over fresh connections, until ``want``
    distinct ones did (SO_REUSEPORT spreads connections by their source port)."""
    seen: set[int] = set()
    for _ in range(attempts):
        async with httpx.AsyncClient(timeout=10) as http:  # a new connection each time
            reply = await http.get(f"{process.url}/healthz")
        if reply.status_code == 200:
            seen.add(reply.json()["pid"])
        if len(seen) >= want:
            break
    return seen


def worker_pids(supervisor: int) -> set[int]:
    """Live children of the supervisor (its workers)."""
    return {pid for pid in children(supervisor) if alive(pid)}


async def test_workers_share_the_port_restart_and_die_with_their_supervisor(
    cluster: Cluster,
) -> None:
    server = ServerProcess("w", cluster.redis_url, cluster.prefix, cluster.work_dir, workers=2)
    cluster.processes.append(server.spawn())
    await server.wait_healthy()
    workers = worker_pids(server.pid)
    assert len(workers) == 2
    assert await answering_pids(server, 2) == workers  # both serve the one port

    # A game whose sockets land on either worker, as a load balancer would spread them.
    game = await new_game(server)
    seats = await cluster.seats(game, {OLY: [server.ws_url], CHT: [server.ws_url]})
    spectator = await cluster.player("spec", game.room, game.epoch, [server.ws_url])
    await setups(seats)
    players = [*seats.values(), spectator]
    await play_to_the_end(cluster, players)
    oracle = Oracle(cluster.store, game.room)
    await oracle.sync()
    for audience, player in ((OLY, seats[OLY]), (CHT, seats[CHT]), (None, spectator)):
        check_stream(player, oracle, audience)

    # A crashed worker is started again; the other one went on serving.
    crashed = min(workers)
    os.kill(crashed, signal.SIGKILL)
    await wait_until(lambda: len(worker_pids(server.pid) - {crashed}) == 2, 30, "a new worker")
    renewed = worker_pids(server.pid)
    await server.wait_healthy()
    assert await answering_pids(server, 2) == renewed

    # kill -9 of the supervisor alone: its workers do not serve on without it.
    os.kill(server.pid, signal.SIGKILL)
    server.proc.wait(10)
    await wait_until(lambda: not any(alive(pid) for pid in renewed), 30, "the workers' exit")


async def test_a_stopped_supervisor_drains_its_workers(cluster: Cluster) -> None:
    server = ServerProcess("w", cluster.redis_url, cluster.prefix, cluster.work_dir, workers=2)
    cluster.processes.append(server.spawn())
    await server.wait_healthy()
    workers = worker_pids(server.pid)
    os.kill(server.pid, signal.SIGTERM)  # the supervisor only: it passes the stop on
    assert server.proc.wait(40) == 0
    assert not any(alive(pid) for pid in workers)


async def test_kill_9_of_a_service_with_its_embedded_redis_then_a_restart(work_dir: Path) -> None:
    """``olympus serve --data-dir D`` with its embedded Redis, ``kill -9`` of the service
    alone mid-game: its redis-server does not live on holding D (it stops with its owner), the
    next ``olympus serve --data-dir D`` starts, and no acknowledged command is lost."""
    server = ServerProcess("emb", None, f"emb-{uuid.uuid4().hex[:8]}", work_dir)
    server.spawn()
    try:
        await server.wait_healthy()
        redis_dir = server.data_dir / "redis"
        url = f"unix://{redis_dir / 'redis.sock'}"
        async with cluster_on(url, work_dir, server.prefix) as cluster:
            game = await new_game(server)
            seats = await cluster.seats(game, {OLY: [server.ws_url], CHT: [server.ws_url]})
            await setups(seats)
            players = list(seats.values())
            await wait_until(lambda: sum(len(p.acks) for p in players) >= 8, 30, "moves", players)
            redis_pid = int((redis_dir / "redis.pid").read_text())
            os.kill(server.pid, signal.SIGKILL)  # the service alone, not its process group
            server.proc.wait(10)
            await wait_until(lambda: not alive(redis_pid), 30, "its redis-server's exit")

            server.spawn()  # the same data dir and port: refused while an orphan held D
            await server.wait_healthy()
            await play_to_the_end(cluster, players)
            oracle = Oracle(cluster.store, game.room)
            await oracle.sync()
            await check_commands(cluster, oracle, players)  # every ack survived
            for faction, player in seats.items():
                check_stream(player, oracle, faction)
    finally:
        server.stop()


async def test_the_first_command_after_redis_returns_is_taken(
    durable_cluster: Cluster, durable_redis: EmbeddedRedis
) -> None:
    """Redis dies under a serving process that holds several pooled connections: a command
    meanwhile gets ``unavailable``; once ``/healthz`` says 200 again, the very next command (the
    same one, resent under its id as the protocol says) is applied."""
    [a] = await durable_cluster.start("a")
    game = await new_game(a)
    rng = random.Random(5)
    for faction in Faction:
        client = await seat(a.ws_url, game, faction)
        assert (await client.command("setup", setup_command(rng, faction)))["type"] == "ack"
    oracle = Oracle(durable_cluster.store, game.room)
    state = await oracle.sync()
    command = jsonable(legal_actions(state, state.turn)[0].wire)
    mover = game.seats[state.turn]
    async with httpx.AsyncClient(timeout=10) as http:  # several pooled Redis connections
        views = [http.get(f"{a.url}/rooms/{game.room}/view") for _ in range(16)]
        assert {r.status_code for r in await asyncio.gather(*views)} == {200}

        durable_redis.kill()
        down = await mover.command("m1", command)
        assert (down["type"], down["code"]) == ("error", "unavailable"), down
        await asyncio.to_thread(durable_redis.start)  # the same data dir: the AOF is replayed
        for _ in range(1000):
            if (await http.get(f"{a.url}/healthz")).status_code == 200:
                break
            await asyncio.sleep(0.02)
        else:
            pytest.fail("the process never became healthy again")
    reply = await mover.command("m1", command)
    assert reply["type"] == "ack", reply
    assert (await oracle.sync()).version > state.version


# -- on a Redis Cluster -----------------------------------------------------------------------


async def test_games_over_two_processes_on_a_redis_cluster(
    redis_cluster: LocalCluster, work_dir: Path
) -> None:
    """``olympus serve --redis-cluster``: two processes play three games at once to their end
    on a cluster of 3 masters and 3 replicas, each game's seats on both processes (created on
    either) and a spectator on each; every stream is the log's."""
    async with cluster_on(cluster_url(redis_cluster.startup), work_dir) as cluster:
        a, b = await cluster.start("a", "b")
        tables = []
        for n in range(3):
            here, there = (a, b) if n % 2 == 0 else (b, a)
            game = await new_game(here)
            seats = await cluster.seats(game, {OLY: [here.ws_url], CHT: [there.ws_url]})
            spectators = [
                await cluster.player(f"spec-{server.name}", game.room, game.epoch, [server.ws_url])
                for server in (a, b)
            ]
            tables.append((game, seats, spectators))
        await asyncio.gather(*(setups(seats, seed=n) for n, (_, seats, _) in enumerate(tables)))
        await play_to_the_end(cluster, cluster.players)

        logs = []
        for game, seats, spectators in tables:
            oracle = Oracle(cluster.store, game.room)
            await oracle.sync()
            assert oracle.state.result is not None
            logs.append(oracle.log())
            for audience, player in ((OLY, seats[OLY]), (CHT, seats[CHT])):
                check_stream(player, oracle, audience)
                check_refusals(player)
            for spectator in spectators:
                check_stream(spectator, oracle, None)
            await check_commands(cluster, oracle, list(seats.values()))
            await check_final_view([a, b], oracle)
            await check_sharded_hints(redis_cluster, cluster, game.room)
            # Every key of the room is on one master: its scripts never cross slots.
            keys = cluster.store.keys(game.room)
            owners = {
                redis_cluster.master_of(k).port for k in (keys.meta, keys.events, keys.commands)
            }
            assert len(owners) == 1
        assert all(logs.count(log) == 1 for log in logs), "three games, not one game thrice"


async def test_a_master_killed_mid_game_fails_over_and_the_game_finishes(
    tmp_path_factory: pytest.TempPathFactory, work_dir: Path, failover_report: Callable[[str], None]
) -> None:
    """kill -9 of the master that owns a live room's slot: its replica is promoted, the two
    processes find it (MOVED, a fresh topology), the bots resend what got ``unavailable``, and
    the game finishes the same for everyone. Redis replicates asynchronously: an acknowledged
    event the replica had not received when its master died is lost with it. The test reports
    which acknowledged commands and events survived in the terminal summary's "failover
    report" (docs/operations.md, "On a Redis Cluster")."""
    redis_cluster = LocalCluster(tmp_path_factory.mktemp("failover")).start()
    try:
        async with cluster_on(cluster_url(redis_cluster.startup), work_dir) as cluster:
            a, b = await cluster.start("a", "b")
            game = await new_game(a)
            seats = await cluster.seats(
                game, {OLY: [a.ws_url, b.ws_url], CHT: [b.ws_url, a.ws_url]}
            )
            spectator = await cluster.player("spec", game.room, game.epoch, [a.ws_url, b.ws_url])
            players = [*seats.values(), spectator]
            await setups(seats)
            await wait_until(lambda: spectator.last_seq >= 10, GAME_TIMEOUT, "moves", players)

            for player in seats.values():  # pause, so that "acked before the kill" is exact
                player.hold = lambda legal: True
            await wait_until(
                lambda: all(p.pending is None for p in seats.values()), 30, "a pause", players
            )
            keys = cluster.store.keys(game.room)
            master = redis_cluster.master_of(keys.events)
            acked_before = acked_ids(seats)
            log_before = await cluster.store.read(game.room)
            master.kill()
            for player in seats.values():
                await player.release()  # commands now meet the failover
            assert redis_cluster.wait_served(keys.events) is not master  # its replica took over

            await play_to_the_end(cluster, players)
            oracle = Oracle(cluster.store, game.room)
            await oracle.sync()
            assert oracle.state.result is not None
            await check_final_view([a, b], oracle)
            await check_sharded_hints(redis_cluster, cluster, game.room)  # at the promoted one
            lost = await report_survivors(
                failover_report, cluster, game.room, seats, acked_before, log_before
            )
            assert set(lost) <= acked_before  # only what the dead master held alone
    finally:
        redis_cluster.stop()


async def test_with_append_replicas_a_failover_loses_no_acknowledged_command(
    tmp_path_factory: pytest.TempPathFactory, work_dir: Path, failover_report: Callable[[str], None]
) -> None:
    """``OLYMPUS_APPEND_REPLICAS=1``: a command is acknowledged only once a replica has its
    events, so killing the room's master while the bots play (commands in flight) loses no
    acknowledged command: every ack is in the log the promoted replica serves. The promoted
    master has no replica of its own until the dead node comes back (as Kubernetes restarts
    a pod) and rejoins as its replica: until then its room's commands get ``unavailable``."""
    redis_cluster = LocalCluster(tmp_path_factory.mktemp("failover-wait")).start()
    env = {"OLYMPUS_APPEND_REPLICAS": "1"}
    try:
        async with cluster_on(cluster_url(redis_cluster.startup), work_dir, env=env) as cluster:
            a, b = await cluster.start("a", "b")
            game = await new_game(a)
            seats = await cluster.seats(
                game, {OLY: [a.ws_url, b.ws_url], CHT: [b.ws_url, a.ws_url]}
            )
            players = list(seats.values())
            await setups(seats)
            await wait_until(lambda: sum(len(p.acks) for p in players) >= 8, 30, "moves", players)
            keys = cluster.store.keys(game.room)
            master = redis_cluster.master_of(keys.events)
            acked_before = acked_ids(seats)
            log_before = await cluster.store.read(game.room)
            master.kill()  # mid-game: commands in flight meet it
            assert redis_cluster.wait_served(keys.events) is not master
            master.start()  # back on its AOF and nodes.conf: a replica of the promoted one
            await play_to_the_end(cluster, players)
            oracle = Oracle(cluster.store, game.room)
            await oracle.sync()
            assert oracle.state.result is not None
            lost = await report_survivors(
                failover_report, cluster, game.room, seats, acked_before, log_before
            )
            assert lost == []
            await check_commands(cluster, oracle, players)  # every ack survived
            await check_final_view([a, b], oracle)
            await check_sharded_hints(redis_cluster, cluster, game.room)
    finally:
        redis_cluster.stop()


async def test_close_codes_a_client_meets_when_its_server_stops_or_dies(cluster: Cluster) -> None:
    """docs/protocol.md, "Close codes": a server that stops (SIGTERM) closes its sockets with
    1012, one killed (kill -9) closes none, so its clients see 1006; both mean "reconnect and
    resume", to any process."""
    [server] = await cluster.start("a")
    game = await new_game(server)
    seen: list[int | None] = []
    for end in (server.stop, server.kill):
        client = await WsClient.open(server.ws_url)
        assert (await client.hello(token=game.tokens[OLY]))["type"] == "welcome"
        await asyncio.to_thread(end)  # the loop runs on: the client answers the close
        seen.append(await client.wait_closed())
        await cluster.restart(server)
    assert seen == [1012, 1006]


async def test_what_a_process_logs_of_a_client_gone_mid_body_and_of_a_websocket(
    cluster: Cluster,
) -> None:
    """A client that leaves while its request's body is read is no error of the service's: an
    info line, no traceback (an error in the log pages an operator), nothing done. A websocket
    gets one line, the service's own ``hello`` with the client's address, not uvicorn's and
    websockets' lines about the same connection too."""
    [server] = await cluster.start("logs")

    def lines() -> list[dict[str, Any]]:  # the lines written whole, not one being written
        written = server.log_path.read_text().split("\n")[:-1]
        return [json.loads(line) for line in written if line.startswith("{")]

    _, writer = await asyncio.open_connection("127.0.0.1", server.port)
    head = b"POST /rooms HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"
    writer.write(head)
    await writer.drain()
    writer.close()
    await wait_until(lambda: any(line["msg"] == "request abandoned" for line in lines()))
    [abandoned] = [line for line in lines() if line["msg"] == "request abandoned"]
    assert abandoned["level"] == "info" and abandoned["client"].startswith("127.0.0.1:")
    assert not [line for line in lines() if line["level"] in ("error", "critical")]
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        assert (await http.get("/rooms")).json() == {"rooms": []}  # no room was made
    # how it runs, said once at the start: compiled, or why not (a warning unless asked for)
    [how] = [line for line in lines() if line["msg"].startswith("the rules and the command")]
    assert how["msg"].endswith(" run compiled") is COMPILED
    assert how["level"] == ("info" if COMPILED or turned_off() else "warning")

    game = await new_game(server)
    client = await WsClient.open(server.ws_url)
    welcome = await client.hello(token=game.tokens[Faction.OLYMPIANS])
    assert welcome["type"] == "welcome", welcome
    await client.close()
    [hello] = [line for line in lines() if line["msg"] == "hello"]
    assert hello["client"].startswith("127.0.0.1:") and hello["seat"] == "olympians"
    said = [line["msg"] for line in lines()]
    assert "connection open" not in said
    assert not [m for m in said if m.endswith("[accepted]")]
