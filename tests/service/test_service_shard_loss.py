"""One master of a Redis Cluster lost (``kill -9``) under two real ``olympus serve`` processes.

Three games are played at once across the two processes (each game's seats on different
processes, so that every move reaches the other seat through the other process's fan-out), in
rooms whose slots belong to the three different masters. One master is killed mid-game. What a
process must do (docs/operations.md, "Losing one shard"):

- stay ready: ``/healthz`` answers 200 on both processes throughout (polled), naming the lost
  node in ``shards_down`` while it is out;
- keep the games of the other shards at their pace: a move reaches the other process about as
  fast as before the kill (measured against the same run's moves before it, not against a
  fixed time, so that the box's speed does not decide);
- answer the lost shard's room ``unavailable`` until its replica is promoted, and then play on
  there, every seat getting every event once, in order.

The figures (the worst gap before the kill, after it on the other shards, and how long the lost
shard's room refused commands) go to the "failover report" of the test run's summary.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from process_harness import Player, ServerProcess, wait_until
from redis.asyncio import Redis
from redis.exceptions import ResponseError
from service_harness import Game, Oracle
from test_service_processes import (
    Cluster,
    check_sharded_hints,
    check_stream,
    cluster_on,
    new_game,
    setups,
)

from olympus.rules import Faction
from olympus.store.local_cluster import LocalCluster, Node
from olympus.store.redis_clients import cluster_url

OLY, CHT = Faction.OLYMPIANS, Faction.CHTHONIANS
# A seat waits this long before each command: the games then last through the failover, and
# the moves of the other shards are spread over it.
PACE = 0.2
# Commands each game plays before the kill: the moves the gap after it is compared with.
BEFORE = 12
# A move of another shard after the kill may take the pause of the whole cluster (measured in
# the same run, ``ClusterPause``), plus the longest wait between two tries of a command that the
# pause refused (STORE_RETRY + RESEND: the store's last pause, then the client's resend), plus
# GAP_FACTOR times the slowest move before the kill (the command's own work, and the map of the
# slots read again at each try). From the moment the nodes agree that the killed master failed
# until its replica is promoted (an election Redis starts 0.5 to 1 s later, with LocalCluster's
# ``cluster-node-timeout 1000``), some slots have no master; with Redis's default
# ``cluster-require-full-coverage yes`` every node would refuse every keyed command
# (CLUSTERDOWN), those of the other shards too. LocalCluster, like the deployments, says ``no``,
# and the pause measured is then nil: the bound is the slowest move before the kill, scaled.
GAP_FACTOR = 5.0
STORE_RETRY = 0.25  # store/cluster_calls.py: the pause before a call refused CLUSTERDOWN again
RESEND = 0.1  # process_harness.Player: the pause before a command refused unavailable again
PROBE_EVERY = 0.005  # seconds between two probes of the cluster's pause
HEALTH_POLL = 0.05  # seconds between two /healthz of one process
TIMEOUT = 60.0


class TimedPlayer(Player):
    """A seat that waits ``PACE`` before each command and notes when each of its commands was
    first sent, when each event arrived (by ``seq``), when each ack came, and each
    ``unavailable`` refusal."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sent: dict[str, float] = {}  # command id -> first sent
        self.arrived: dict[int, float] = {}  # event seq -> received
        self.acked_at: dict[str, float] = {}  # command id -> ack received
        self.unavailable: list[tuple[str, float]] = []  # (command id, refusal received)
        self._pacer: asyncio.Task[None] | None = None
        self._poked = False  # something arrived since the pacer last looked

    async def _send_pending(self) -> None:
        if self.pending is not None:
            self.sent.setdefault(self.pending["id"], time.monotonic())
        await super()._send_pending()

    async def _handle(self, message: dict[str, Any]) -> None:
        now = time.monotonic()
        kind = message["type"]
        if kind == "event":
            self.arrived[message["seq"]] = now
        elif kind == "ack":
            self.acked_at[message["id"]] = now
        elif kind == "error" and message.get("code") == "unavailable":
            self.unavailable.append((message["id"], now))
        await super()._handle(message)

    async def _maybe_act(self) -> None:
        self._poked = True
        if self._pacer is None or self._pacer.done():
            self._pacer = asyncio.get_running_loop().create_task(self._act_paced())

    async def _act_paced(self) -> None:
        """Act as ``Player`` does, ``PACE`` later, until nothing arrived meanwhile."""
        try:
            while self._poked:
                self._poked = False
                await asyncio.sleep(PACE)
                await Player._maybe_act(self)
        except Exception as error:
            self.failure = error

    async def close(self) -> None:
        if self._pacer is not None:
            self._pacer.cancel()
            with contextlib.suppress(BaseException):
                await self._pacer
        await super().close()


@dataclass
class Table:
    """A game whose room lives on ``master``: the Olympians on one process, the Chthonians
    on the other."""

    game: Game
    master: Node
    seats: dict[Faction, TimedPlayer] = field(default_factory=dict)

    @property
    def players(self) -> list[TimedPlayer]:
        return list(self.seats.values())

    def played(self) -> int:
        return sum(len(p.acks) for p in self.players)

    def gaps(self) -> list[tuple[float, float]]:
        """``(sent, gap)`` of each acknowledged command but the setups: from its first sending
        to the moment the seat on the other process had the events it made (the ack's ``seq``;
        every seat is sent the same number of messages, observation.py)."""
        found = []
        oly, cht = self.seats[OLY], self.seats[CHT]
        for sender, receiver in ((oly, cht), (cht, oly)):
            for ack in sender.acks:
                arrived = receiver.arrived.get(ack["seq"])
                if ack["id"] != "setup" and arrived is not None:
                    sent = sender.sent[ack["id"]]
                    found.append((sent, arrived - sent))
        return found

    def refused(self) -> list[tuple[str, float]]:
        return sorted((r for p in self.players for r in p.unavailable), key=lambda r: r[1])

    def recovered(self) -> tuple[float, float | None] | None:
        """When the first command refused ``unavailable`` was acknowledged, and when its events
        reached the seat on the other process (None: not yet); None if none was."""
        refused = {command_id for command_id, _ in self.refused()}
        oly, cht = self.seats[OLY], self.seats[CHT]
        acked = [
            (sender.acked_at[ack["id"]], receiver.arrived.get(ack["seq"]))
            for sender, receiver in ((oly, cht), (cht, oly))
            for ack in sender.acks
            if ack["id"] in refused
        ]
        return min(acked, key=lambda pair: pair[0], default=None)


@dataclass
class Health:
    """``/healthz`` of each process, polled until stopped."""

    processes: list[ServerProcess]
    replies: list[tuple[float, str, int, dict[str, Any]]] = field(default_factory=list)

    async def poll(self, stop: asyncio.Event) -> None:
        async with httpx.AsyncClient(timeout=10) as http:
            while not stop.is_set():
                for process in self.processes:
                    try:
                        reply = await http.get(f"{process.url}/healthz")
                        status, body = reply.status_code, reply.json()
                    except httpx.HTTPError as error:
                        status, body = 0, {"error": repr(error)}
                    self.replies.append((time.monotonic(), process.name, status, body))
                await asyncio.sleep(HEALTH_POLL)

    def failed(self) -> list[tuple[float, str, int, dict[str, Any]]]:
        return [r for r in self.replies if r[2] != 200]

    def down_for(self, name: str, node: str) -> float:
        """How long ``name`` reported ``node`` in ``shards_down`` (first to last such reply)."""
        times = [t for t, n, _, b in self.replies if n == name and node in b.get("shards_down", ())]
        return max(times) - min(times) if times else 0.0


Poll = Callable[[asyncio.Event], Coroutine[Any, Any, None]]  # runs until the event is set


@dataclass
class ClusterPause:
    """When the masters of the other shards refused a keyed command (CLUSTERDOWN): a read of a
    key of each other game's slot, sent straight to its master, every ``PROBE_EVERY``."""

    masters: list[tuple[Node, str]]  # a master and a key of its slot
    refused: list[float] = field(default_factory=list)

    async def probe(self, stop: asyncio.Event) -> None:
        clients = [(Redis(port=node.port, socket_timeout=5), key) for node, key in self.masters]
        try:
            while not stop.is_set():
                for client, key in clients:
                    try:
                        await client.exists(key)
                    except ResponseError:
                        self.refused.append(time.monotonic())
                await asyncio.sleep(PROBE_EVERY)
        finally:
            for client, _ in clients:
                await client.aclose()

    def seconds(self) -> float:
        """From the first refusal to the last (0: none)."""
        return max(self.refused) - min(self.refused) if self.refused else 0.0


@pytest.fixture
def work_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("proc")  # short: the embedded Redis socket path is limited


@contextlib.asynccontextmanager
async def running(
    poll: Callable[[asyncio.Event], Coroutine[Any, Any, None]],
) -> AsyncIterator[None]:
    """``poll`` runs in a task meanwhile, and is told to stop (not cancelled: a Redis call may
    take a cancellation in and go on)."""
    stop = asyncio.Event()
    task = asyncio.get_running_loop().create_task(poll(stop))
    try:
        yield
    finally:
        stop.set()
        await task


async def tables_on_every_master(
    redis_cluster: LocalCluster, cluster: Cluster, a: ServerProcess, b: ServerProcess
) -> list[Table]:
    """A game on each master: rooms are created until one lands in a slot of each."""
    tables: dict[int, Table] = {}
    for _ in range(200):
        game = await new_game(a)
        master = redis_cluster.master_of(cluster.store.keys(game.room).events)
        if master.port not in tables:
            tables[master.port] = Table(game, master)
        if len(tables) == len(redis_cluster.live_masters):
            break
    assert len(tables) == len(redis_cluster.live_masters), "no room landed on some master"
    for n, table in enumerate(tables.values()):
        for faction, here, seed in ((OLY, a, 7 + 2 * n), (CHT, b, 8 + 2 * n)):
            player = TimedPlayer(
                faction.value[:3],
                table.game.room,
                table.game.epoch,
                [here.ws_url],
                token=table.game.tokens[faction],
                seed=seed,
            )
            cluster.players.append(player)
            table.seats[faction] = await player.start()
    return list(tables.values())


def victim_of(redis_cluster: LocalCluster, cluster: Cluster, tables: list[Table]) -> Table:
    """The table whose master is killed: not the master of the lobby's keys (its loss also
    stops the creation of rooms, docs/scaling.md), and the first startup node if it can be (the
    node of the processes' classic pub/sub connection, which then moves to the next node)."""
    lobby = redis_cluster.master_of(f"{cluster.prefix}:{{rooms}}:status")
    candidates = [t for t in tables if t.master is not lobby]
    first = redis_cluster.nodes[0]
    return next((t for t in candidates if t.master is first), candidates[0])


def worst(gaps: list[tuple[float, float]]) -> float:
    return max(gap for _, gap in gaps)


async def test_one_master_lost_stalls_only_its_own_rooms(
    tmp_path_factory: pytest.TempPathFactory,
    work_dir: Path,
    failover_report: Callable[[str], None],
) -> None:
    """kill -9 of one master of three while three games (one per master) are played across two
    processes: both stay ready, the other two games keep their pace, and the lost shard's game
    gets ``unavailable`` until the failover and then plays on."""
    redis_cluster = LocalCluster(tmp_path_factory.mktemp("shard-loss")).start()
    try:
        async with cluster_on(cluster_url(redis_cluster.startup), work_dir) as cluster:
            a, b = await cluster.start("a", "b")
            tables = await tables_on_every_master(redis_cluster, cluster, a, b)
            lost = victim_of(redis_cluster, cluster, tables)
            others = [t for t in tables if t is not lost]
            players = [p for t in tables for p in t.players]
            health = Health([a, b])
            pause = ClusterPause(
                [(t.master, f"{cluster.prefix}:probe:{{{t.game.room}}}") for t in others]
            )
            async with running(health.poll), running(pause.probe):
                setup = asyncio.gather(*(setups(t.seats, seed=n) for n, t in enumerate(tables)))
                await asyncio.wait_for(setup, TIMEOUT)
                await wait_until(
                    lambda: all(t.played() >= BEFORE + 2 for t in tables),
                    TIMEOUT,
                    "moves before the kill",
                    players,
                )
                # The lost room waits with a seat holding its move, so that the move meets the
                # dead master; the other games go on.
                for player in lost.players:
                    player.hold = lambda legal: True
                await wait_until(
                    lambda: (
                        any(p.holding is not None for p in lost.players)
                        and all(p.pending is None for p in lost.players)
                    ),
                    TIMEOUT,
                    "the lost room paused",
                    players,
                )
                assert all(t.seats[OLY].over is None for t in tables), "a game ended too soon"
                gaps_before = [g for t in tables for g in t.gaps()]
                killed = time.monotonic()
                lost.master.kill()
                for player in lost.players:
                    await player.release()
                dead = lost.master.address
                key = cluster.store.keys(lost.game.room).events
                promoted = await asyncio.to_thread(redis_cluster.wait_served, key)
                assert promoted is not lost.master
                served = time.monotonic()
                # The lost room refused commands, then took them again on the promoted replica
                # and the other process heard of it; the other games went on meanwhile.
                await wait_until(
                    lambda: (r := lost.recovered()) is not None and r[1] is not None,
                    TIMEOUT,
                    "the lost room back",
                    players,
                )
                played = {id(t): t.played() for t in tables}
                await wait_until(
                    lambda: (
                        all(t.played() >= played[id(t)] + 4 for t in tables)
                        or any(t.seats[OLY].over is not None for t in tables)
                    ),
                    TIMEOUT,
                    "moves after the failover",
                    players,
                )
                for player in players:  # pause, so that every stream can be read whole
                    player.hold = lambda legal: True
                await wait_until(
                    lambda: all(p.pending is None for p in players), TIMEOUT, "a pause", players
                )
            # Every seat got every event of its room once, in order, across the gap.
            oracles = {}
            for table in tables:
                oracle = oracles[id(table)] = Oracle(cluster.store, table.game.room)
                await oracle.sync()
                assert len(oracle.messages(OLY)) == len(oracle.messages(CHT))
                for faction, player in table.seats.items():
                    expected = len(oracle.messages(faction))
                    await wait_until(
                        lambda p=player, n=expected: p.last_seq == n,
                        TIMEOUT,
                        "every event",
                        players,
                    )
            gaps_after = [g for t in others for g in t.gaps() if g[0] + g[1] > killed]
            refused = lost.refused()
            recovered = lost.recovered()
            assert recovered is not None and recovered[1] is not None
            acked, reached = recovered
            failover_report(
                f"worst gap (command sent -> its events at the other process) before the kill "
                f"{worst(gaps_before):.3f} s over {len(gaps_before)} commands; after it, on the "
                f"other shards, {worst(gaps_after):.3f} s over {len(gaps_after)} commands "
                f"({sum(len(t.refused()) for t in others)} refused unavailable), of which the "
                f"cluster refused every keyed command (CLUSTERDOWN) for {pause.seconds():.3f} s; "
                f"the replica was promoted (every live node ok) {served - killed:.3f} s after the "
                f"kill; the lost shard's room refused commands from "
                f"{refused[0][1] - killed if refused else float('nan'):.3f} s to "
                f"{acked - killed:.3f} s after the kill ({len(refused)} refusals), the other "
                f"process had that command's events {reached - killed:.3f} s after it; /healthz "
                f"non-200: {len(health.failed())} of {len(health.replies)} replies; "
                f"shards_down named {dead} for "
                f"{health.down_for('a', dead):.3f} s (a), {health.down_for('b', dead):.3f} s (b)"
            )

            assert health.failed() == [], health.failed()[:5]
            assert refused, "the lost room never met its master's loss"
            assert gaps_after, "no move of the other shards after the kill"
            bound = GAP_FACTOR * worst(gaps_before) + pause.seconds() + STORE_RETRY + RESEND
            assert worst(gaps_after) <= bound, (worst(gaps_after), bound)
            for table in tables:
                for faction, player in table.seats.items():
                    check_stream(player, oracles[id(table)], faction)
            await check_sharded_hints(redis_cluster, cluster, lost.game.room)
    finally:
        redis_cluster.stop()
