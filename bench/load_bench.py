"""Load benchmark of the game service: real ``olympus serve``, real websockets, random bots.

Starts one ``olympus serve`` process (with its own embedded Redis, or on ``--redis-url``, or on
a Redis the bench starts with ``--appendfsync everysec``), opens N rooms with two seats each
(and a spectator with ``--spectators``) over real websockets from one or more load-generator
processes, and plays random legal games: a bot picks from each seat's ``legal`` message,
biased towards moves (and forward moves), and a room starts a new game when one ends.

Modes:

- ``closed``: every room plays as fast as it can; a seat sends its next command as soon as it
  has a ``legal`` message about the room's latest event (one command in flight per room).
- ``open``: every room sends one command every ``--interval`` seconds (±``--jitter``), at a
  random phase. A room still keeps one command in flight: a tick that finds the previous one
  unacknowledged is counted (``busy_ticks``) and its command leaves as soon as the previous is
  acked, so an overloaded open loop degrades into a closed one instead of piling up.

Latency of a command (printed as p50/p95/p99): from just before the client sends the command
frame to the moment the last of the room's recipients (both seats, and the spectator) has
received the ``event`` message numbered with the command's ``ack.seq``, as seen by the load
generator's event loop (its own scheduling delays are included; ``--workers 2`` halves them).
Without Random Setup, every event but ``RandomSetupDrawn`` reaches every audience
(``observe_event``), so all audiences number the room's messages alike and ``ack.seq`` names
the command's last event in each of them (the bench checks that the numbering agreed when each
game ends). Only commands
sent inside the measured window count; warm-up and connection set-up are excluded.

Also printed: acknowledged commands per second, CPU of the server process and of its
redis-server (% of one core, from /proc/<pid>/stat over the window), their RSS (VmRSS) and
the RSS growth per room since before the rooms were created, and the load generator's CPU.

Run ``.venv/bin/python bench/load_bench.py --help``; see bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import gc
import itertools
import json
import multiprocessing
import os
import random
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from olympus.lifetime import children
from olympus.rules import Faction, random_placements
from olympus.server.settings import Settings
from olympus.store.local_cluster import LocalCluster
from olympus.store.redis_clients import cluster_url

ROOT = Path(__file__).resolve().parent.parent
CLK_TCK = os.sysconf("SC_CLK_TCK")
SEATS = (Faction.OLYMPIANS, Faction.CHTHONIANS)
# The bot: a command type first (moves dominate, so games progress), then an action within it
# weighted HONOR_BIAS ** honor (forward moves over backward ones), like olympus.bots, but on the
# wire dicts of the ``legal`` message (no pydantic parsing in the load generator).
TYPE_WEIGHTS = {"move": 20.0, "liturgy": 1.0, "pass": 1.0}
HONOR_BIAS = 3.0
RETRIED = ("rate_limited", "busy", "unavailable")
# The targets judged on the last line, per mode: commands/s, p99 (ms) and µs of server CPU per
# command (500 rooms closed, 2,000 open; bench/README.md says what each means today).
TARGETS: dict[str, tuple[int | None, float, float | None]] = {
    "closed": (2000, 150.0, 300.0),
    "open": (None, 30.0, None),
}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--mode", choices=("closed", "open"), default="closed")
    p.add_argument("--rooms", type=int, default=None, help="rooms (closed: 500, open: 2000)")
    p.add_argument("--seconds", type=float, default=30.0, help="measured window (30)")
    p.add_argument("--warmup", type=float, default=5.0, help="played, not measured (5)")
    p.add_argument("--interval", type=float, default=2.0, help="open loop: s between commands")
    p.add_argument("--jitter", type=float, default=0.25, help="open loop: ± fraction (0.25)")
    p.add_argument("--spectators", action="store_true", help="a spectator socket per room")
    p.add_argument("--workers", type=int, default=2, help="load-generator processes (2)")
    p.add_argument(
        "--workers-server",
        type=int,
        default=1,
        help="olympus serve --workers: server processes on the port (1); CPU is their sum",
    )
    p.add_argument("--max-game-commands", type=int, default=400, help="abandon longer games")
    p.add_argument("--redis-url", default=None, help="use this Redis (default: embedded)")
    p.add_argument(
        "--redis-cluster",
        action="store_true",
        help="start a Redis Cluster of 3 masters + 3 replicas on this machine (Debian's\n"
        "redis-server, appendfsync always) and serve on it; reports each node's CPU, commands\n"
        "and bytes per acknowledged command",
    )
    p.add_argument(
        "--append-replicas",
        type=int,
        default=0,
        help="OLYMPUS_APPEND_REPLICAS for the server: replicas confirming each append (0)",
    )
    p.add_argument(
        "--appendfsync",
        choices=("always", "everysec"),
        default="always",
        help="embedded Redis: 'always' = the server's own (olympus serve, the production\n"
        "setting); 'everysec' = a Redis started by the bench, passed as --redis-url",
    )
    p.add_argument("--port", type=int, default=0, help="server port (default: a free one)")
    p.add_argument("--url", default=None, help="bench an already running server (no CPU/RSS)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--profile",
        default=None,
        metavar="FILE",
        help="py-spy record the server over the window into FILE (collapsed stacks);\n"
        "needs py-spy (.venv/bin/pip install py-spy)",
    )
    p.add_argument(
        "--callgrind",
        action="store_true",
        help="count the server's instructions per command in the window under valgrind\n"
        "(server_instructions_per_command; slow: use few rooms, e.g. --rooms 20)",
    )
    p.add_argument(
        "--bot-rooms",
        type=int,
        default=0,
        help="rooms where the computer plays itself (POST /rooms/watch) during the run: the\n"
        "server's bots worker searches beside the measured rooms; its CPU is reported apart (0)",
    )
    p.add_argument(
        "--bot-level",
        choices=("easy", "normal", "hard"),
        default="hard",
        help="the level of both bots of each --bot-rooms room (hard: the longest searches)",
    )
    p.add_argument(
        "--no-archive",
        action="store_true",
        help="olympus serve --no-archive: no archive of finished games (default: the embedded\n"
        "PostgreSQL, as olympus serve starts it; a game moves after its grace period, 600 s)",
    )
    p.add_argument(
        "--keep",
        action="store_true",
        help="keep the run's directory (the server's log, its Redis' data, a --callgrind\n"
        "dump) and print where; kept anyway when the run fails, removed otherwise",
    )
    p.add_argument("--json", default=None, help="also write the results to this file")
    args = p.parse_args(argv)
    if args.rooms is None:
        args.rooms = 500 if args.mode == "closed" else 2000
    if args.callgrind and (args.url or args.workers_server > 1):
        # valgrind runs the server it starts, and not that process's children
        p.error("--callgrind counts a server the bench starts, as one process")
    return args


# -- /proc ---------------------------------------------------------------------------------------


def cpu_ticks(pid: int) -> int:
    """utime + stime of ``pid``, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def cpu_seconds(pid: int) -> float:
    """CPU time of every live thread of ``pid`` in seconds, from the scheduler's nanosecond
    account (``/proc/PID/task/*/schedstat``): fine enough for a run of a few milliseconds, where
    ``cpu_ticks`` counts whole 10 ms ticks and can read 0."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                total += int(f.read().split()[0])
        except FileNotFoundError:  # the thread ended between the listing and the read
            pass
    return total / 1e9


def rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def scrape(url: str) -> dict[str, float]:
    """The server's /metrics as {series: value} (histogram buckets included)."""
    found = {}
    with contextlib.suppress(httpx.HTTPError):
        for line in httpx.get(f"{url}/metrics", timeout=10).text.splitlines():
            if line and not line.startswith("#"):
                name, value = line.rsplit(" ", 1)
                found[name] = float(value)
    return found


def server_compiled(metrics: dict[str, float]) -> bool | None:
    """Whether the server ran its compiled build (``olympus_compiled``), None if it did not
    say. An edited module of the build makes it run interpreted, at about twice the CPU per
    command, and nothing else tells the figures apart."""
    value = metrics.get("olympus_compiled")
    return None if value is None else value == 1


def histogram_quantiles(
    before: dict[str, float], after: dict[str, float], name: str
) -> dict[str, float | None]:
    """p50/p99 of a server histogram over the window, as bucket upper bounds (ms)."""
    prefix = f'{name}_bucket{{le="'
    bounds = [k[len(prefix) : -2] for k in after if k.startswith(prefix)]
    counts = [(b, after[f'{prefix}{b}"}}'] - before.get(f'{prefix}{b}"}}', 0)) for b in bounds]
    total = counts[-1][1] if counts else 0
    out: dict[str, float | None] = {}
    for q in (50, 99):
        bound = next((b for b, n in counts if total and n >= total * q / 100), None)
        out[f"p{q}_at_most"] = None if bound in (None, "+Inf") else float(bound) * 1000
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# -- the server under test -----------------------------------------------------------------------


class Server:
    """``olympus serve`` in its own process group; its redis-server found by pid."""

    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args = args
        self.work = work
        self.port = args.port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.bench_redis: Any = None  # an EmbeddedRedis of the bench's own (everysec)
        self.redis_pid: int | None = None
        self.worker_pids: list[int] = []
        self.bots_pids: list[int] = []
        self.cluster: LocalCluster | None = None
        self.prefix: list[str] = []  # a program to run the server under (``under_callgrind``)
        self.extra_env: dict[str, str] = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def under_callgrind(self) -> None:
        """Start the server under valgrind's callgrind, counting nothing until ``callgrind``
        switches the count on (``--callgrind``)."""
        self.prefix = [
            *("valgrind", "--tool=callgrind", "--instr-atstart=no"),
            f"--callgrind-out-file={self.work / CALLGRIND_OUT}",
        ]
        # Slowed down some fifty times, the server would think itself overloaded and refuse
        # rooms (503).
        self.extra_env["OLYMPUS_OVERLOAD_SECONDS"] = "1e9"

    def start(self) -> None:
        redis_url = self.args.redis_url
        if self.args.redis_cluster:
            self.cluster = LocalCluster(self.work / "cluster").start()
            redis_url = cluster_url(self.cluster.startup)
        if redis_url is None and self.args.appendfsync == "everysec":
            from olympus.store import EmbeddedRedis

            self.bench_redis = EmbeddedRedis(self.work / "redis", appendfsync="everysec").start()
            redis_url = self.bench_redis.url
            self.redis_pid = self.bench_redis.pid
        command = [*self.prefix, sys.executable, "-m", "olympus.cli", "serve"]
        command += ["--host", "127.0.0.1"]
        if not self.args.bot_rooms:
            command.append("--no-bots")
        if self.args.no_archive:
            command.append("--no-archive")
        command += ["--workers", str(self.args.workers_server)]
        command += ["--port", str(self.port), "--data-dir", str(self.work / "data")]
        if redis_url:
            command += ["--redis-url", redis_url]
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "OLYMPUS_PREFIX")}
        env["OLYMPUS_PREFIX"] = f"bench-{os.getpid()}"
        # A seat of a small closed-loop run acts faster than a person: measure, do not limit.
        env["OLYMPUS_RATE_PER_SECOND"] = "1e9"
        env["OLYMPUS_APPEND_REPLICAS"] = str(self.args.append_replicas)
        env.update(self.extra_env)
        with open(self.work / "server.log", "ab") as log:
            self.proc = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"server exited: {(self.work / 'server.log').read_text()[-2000:]}"
                )
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise TimeoutError("server did not become healthy")
            time.sleep(0.1)
        kids = children(self.proc.pid)  # its embedded redis-server, its workers (if several)
        redis = [k for k in kids if Path(f"/proc/{k}/comm").read_text().strip() == "redis-server"]
        if self.redis_pid is None and redis:
            self.redis_pid = redis[0]
        self.bots_pids = [k for k in kids if b"\0bots\0" in Path(f"/proc/{k}/cmdline").read_bytes()]
        self.worker_pids = [k for k in kids if k not in redis and k not in self.bots_pids]

    def pids(self) -> dict[str, list[int]]:
        """The processes whose CPU is measured: the server's (all workers), Redis' and the
        bots worker's (``--bot-rooms``), each apart."""
        found = {"server": [self.proc.pid, *self.worker_pids]} if self.proc else {}
        if self.bots_pids:
            found["bots"] = self.bots_pids
        if self.redis_pid:
            found["redis"] = [self.redis_pid]
        if self.cluster is not None:
            found["redis"] = [n.proc.pid for n in self.cluster.nodes if n.proc is not None]
        return found

    def cluster_stats(self) -> dict[int, dict[str, int]]:
        """Each cluster node's counters now (INFO): commands, bytes in and out, CPU ticks, and
        (CLUSTER INFO) the publishes it received from other nodes over the cluster bus: a
        classic PUBLISH goes to every node, a sharded one to the replicas of its shard."""
        stats: dict[int, dict[str, int]] = {}
        for node in self.cluster.nodes if self.cluster else []:
            info, bus = _fields(node.cli("info")), _fields(node.cli("cluster", "info"))
            stats[node.port] = {
                "bus_publishes": sum(
                    int(bus.get(f"cluster_stats_messages_{kind}_received", 0))
                    for kind in ("publish", "publishshard")
                ),
                "master": int(info.get("role", "").strip() == "master"),
                "commands": int(info["total_commands_processed"]),
                "bytes_in": int(info["total_net_input_bytes"]),
                "bytes_out": int(info["total_net_output_bytes"]),
                "cpu_ticks": cpu_ticks(node.proc.pid) if node.proc else 0,
            }
        return stats

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)  # also stops its embedded Redis
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        if self.redis_pid and not self.bench_redis:  # if the server died without stopping it
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.redis_pid, signal.SIGTERM)
        if self.bench_redis is not None:
            self.bench_redis.stop()
        if self.cluster is not None:
            self.cluster.stop()


CALLGRIND_OUT = "callgrind.out"


def start_counting(server: Server) -> None:
    """Switch the count of the server's callgrind on (``Server.under_callgrind``)."""
    _callgrind(server, "-i", "on")


def stop_counting(server: Server) -> int:
    """Switch it off; the instructions counted since ``start_counting``, from the dump it
    writes (``<out file>.1``)."""
    _callgrind(server, "--dump")
    _callgrind(server, "-i", "off")
    dump = server.work / f"{CALLGRIND_OUT}.1"
    totals = [line for line in dump.read_text().splitlines() if line.startswith("totals:")]
    return int(totals[0].split()[1])


def _callgrind(server: Server, *request: str) -> None:
    assert server.proc is not None
    command = ["callgrind_control", *request, str(server.proc.pid)]
    subprocess.run(command, check=True, capture_output=True, timeout=300)


# -- the load generator --------------------------------------------------------------------------


def choose(rng: random.Random, actions: list[dict[str, Any]]) -> dict[str, Any]:
    by_type: dict[str, list[dict[str, Any]]] = {}
    for action in actions:
        by_type.setdefault(action["command"]["type"], []).append(action)
    kinds = list(by_type)
    kind = rng.choices(kinds, [TYPE_WEIGHTS.get(k, 1.0) for k in kinds])[0]
    candidates = by_type[kind]
    return rng.choices(candidates, [HONOR_BIAS ** a["honor"] for a in candidates])[0]["command"]


@dataclass
class Stats:
    latencies: list[float] = field(default_factory=list)
    # command → the first ``legal`` about its last event (or a later one) at any seat: the
    # options for the next command, which the service sends after the events (room.py)
    legal_latencies: list[float] = field(default_factory=list)
    acked: int = 0  # acks received in the window
    sent: int = 0
    refused: dict[str, int] = field(default_factory=dict)
    retried: dict[str, int] = field(default_factory=dict)  # resent after these errors
    games: int = 0
    abandoned: int = 0
    numbering_mismatch: int = 0
    disconnects: int = 0
    busy_ticks: int = 0  # open loop: the tick came while the room's command was in flight
    rooms_shed: int = 0  # room creations refused with 503 ``overloaded``, retried as told
    errors: list[str] = field(default_factory=list)


class Shed(Exception):
    """The server refused to create a room because it is overloaded (503 ``overloaded``)."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"overloaded, retry after {retry_after} s")
        self.retry_after = retry_after


def unpack(frame: bytes) -> list[dict[str, Any]]:
    """The messages of a frame: one message, or an array of them (docs/protocol.md)."""
    data = msgpack.unpackb(frame, raw=False)
    return data if isinstance(data, list) else [data]


class Recipient:
    """One socket of a room: a seat or the spectator."""

    def __init__(self, room: Room, seat: Faction | None, ws: ClientConnection) -> None:
        self.room = room
        self.seat = seat
        self.ws = ws
        self.seq = 0
        self.arrivals: list[float] = []  # arrivals[k] = when event seq k + 1 came
        self.types: list[str] = []
        self.legal: dict[str, Any] | None = None
        self.over = False
        self.retired = False  # a socket of a previous game of the room
        self.task: asyncio.Task[None] | None = None

    async def read(self) -> None:
        try:
            async for frame in self.ws:
                for message in unpack(frame):
                    self.room.handle(self, message)
        except ConnectionClosed:
            pass
        except Exception as error:  # a bug in the bench: say it, do not hang
            self.room.bench.stats.errors.append(repr(error))
        if not self.over and not self.retired and not self.room.closing:
            self.room.bench.stats.disconnects += 1
            self.room.restart()


class Room:
    def __init__(self, bench: Bench, index: int) -> None:
        self.bench = bench
        self.index = index
        self.rng = random.Random(bench.args.seed * 100_003 + index)
        self.recipients: list[Recipient] = []
        self.seats: dict[Faction, Recipient] = {}
        self.pending: dict[str, Any] | None = None
        self.open: list[tuple[float, int, bool]] = []  # (sent at, ack seq, in window)
        self.unoptioned: list[tuple[float, int, bool]] = []  # the same, until a ``legal`` came
        # (seq, arrival) of each ``legal``: one on the other seat's socket may beat the ``ack``
        self.legals: list[tuple[int, float]] = []
        self.setups: list[Faction] = []
        self.commands = 0
        self.closing = False
        self.ready = False
        self.want = bench.args.mode == "closed"  # open loop: set by the room's ticker
        self.ids = itertools.count(1)
        self.game = 0
        self._restarting: asyncio.Task[None] | None = None

    # -- games --------------------------------------------------------------------------------

    async def new_game(self) -> None:
        bench = self.bench
        for r in self.recipients:
            r.retired = True
            with contextlib.suppress(Exception):
                await r.ws.close()
        reply = await bench.http.post("/rooms", json={"side": "olympians"})
        if reply.status_code == 503 and reply.json().get("code") == "overloaded":
            raise Shed(float(reply.headers.get("retry-after", 1)))
        reply.raise_for_status()
        created = reply.json()
        reply = await bench.http.post(f"/rooms/{created['room']}/join", json={})
        reply.raise_for_status()
        joined = reply.json()
        tokens = {Faction.OLYMPIANS: created["token"], Faction.CHTHONIANS: joined["token"]}
        hellos: list[tuple[Faction | None, dict[str, Any]]] = [
            (f, {"token": tokens[f]}) for f in SEATS
        ]
        if bench.args.spectators:
            hellos.append((None, {"spectate": created["room"]}))
        self.recipients, self.seats = [], {}
        for seat, hello in hellos:
            ws = await connect(
                bench.ws_url,
                subprotocols=["olympus.msgpack"],  # type: ignore[list-item]
                compression=None,
                max_size=None,
                ping_interval=None,
                open_timeout=60,
            )
            await ws.send(
                msgpack.packb({"type": "hello", **hello, "last_seq": 0, "epoch": created["epoch"]})
            )
            welcome, *rest = unpack(await ws.recv())  # type: ignore[arg-type]
            assert welcome["type"] == "welcome" and welcome["resumed"], welcome
            recipient = Recipient(self, seat, ws)
            for message in rest:
                self.handle(recipient, message)
            self.recipients.append(recipient)
            if seat is not None:
                self.seats[seat] = recipient
        self.pending, self.open, self.unoptioned, self.commands = None, [], [], 0
        self.legals = []
        self.setups = list(SEATS)
        self.rng.shuffle(self.setups)
        self.game += 1
        for recipient in self.recipients:
            recipient.task = asyncio.get_running_loop().create_task(recipient.read())
        self.ready = True
        self.pump()

    def restart(self) -> None:
        """The game ended (or was abandoned, or a socket dropped): a new room, new sockets."""
        if self._restarting is not None and not self._restarting.done():
            return
        self.ready = False
        self._restarting = asyncio.get_running_loop().create_task(self._restart())

    async def _restart(self) -> None:
        """Retried until it works (an overloaded server may drop an HTTP connection)."""
        for attempt in itertools.count():
            try:
                await self.new_game()
                return
            except Shed as shed:  # the server sheds load: not an error, wait as it asks
                self.bench.stats.rooms_shed += 1
                if self.bench.stopping:
                    return
                await asyncio.sleep(shed.retry_after)
            except Exception as error:
                if self.bench.stopping:  # the run's end closed the HTTP client under it
                    return
                self.bench.stats.errors.append(f"new game: {error!r}")
                await asyncio.sleep(min(2.0, 0.2 * (attempt + 1)))

    # -- messages -----------------------------------------------------------------------------

    def handle(self, r: Recipient, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "event":
            r.seq = message["seq"]
            r.arrivals.append(time.monotonic())
            r.types.append(message["event"]["t"])
            if self.open:
                self.settle()
        elif kind == "legal":
            if message["actions"]:  # not a "nothing to do now" (``waiting``) or setup options
                r.legal = message
                self.optioned(message["seq"])
        elif kind == "ack":
            self.acked(message)
        elif kind == "error":
            self.refused(message)
        elif kind == "game_over":
            r.over = True
            if all(x.over for x in self.recipients):
                self.game_over()
            return
        self.pump()

    def acked(self, message: dict[str, Any]) -> None:
        pending, self.pending = self.pending, None
        assert pending is not None and message["id"] == pending["id"], (message, pending)
        bench = self.bench
        in_window = bench.start <= pending["sent"] < bench.end
        if bench.start <= time.monotonic() < bench.end:
            bench.stats.acked += 1
        self.open.append((pending["sent"], message["seq"], in_window))
        if pending["command"]["type"] != "submit_setup":  # no options follow a first setup
            came = [at for seq, at in self.legals if seq >= message["seq"]]
            if not came:
                self.unoptioned.append(self.open[-1])
            elif in_window:
                self.bench.stats.legal_latencies.append(min(came) - pending["sent"])
        self.settle()

    def optioned(self, seq: int) -> None:
        """A ``legal`` about ``seq`` came: the commands up to it have their next options."""
        now, still = time.monotonic(), []
        self.legals = [*self.legals[-3:], (seq, now)]
        for sent, acked, in_window in self.unoptioned:
            if acked <= seq:
                if in_window:
                    self.bench.stats.legal_latencies.append(now - sent)
            else:
                still.append((sent, acked, in_window))
        self.unoptioned = still

    def refused(self, message: dict[str, Any]) -> None:
        pending = self.pending
        if pending is None:
            self.bench.stats.errors.append(f"error without a command: {message}")
            return
        if message["code"] in RETRIED:
            retried = self.bench.stats.retried
            retried[message["code"]] = retried.get(message["code"], 0) + 1
            asyncio.get_running_loop().call_later(0.05, self.resend)
            return
        # A rules refusal: the bot acted on a legal list the room had moved past (combat).
        codes = self.bench.stats.refused
        codes[message["code"]] = codes.get(message["code"], 0) + 1
        self.pending = None

    def resend(self) -> None:
        if self.pending is not None and self.ready:
            asyncio.get_running_loop().create_task(self.send(self.pending))

    def settle(self) -> None:
        """Close the measurements whose last event reached every recipient."""
        still = []
        for sent, seq, in_window in self.open:
            if all(r.seq >= seq for r in self.recipients):
                if in_window:
                    last = max(r.arrivals[seq - 1] for r in self.recipients)
                    self.bench.stats.latencies.append(last - sent)
            else:
                still.append((sent, seq, in_window))
        self.open = still

    def game_over(self) -> None:
        stats = self.bench.stats
        stats.games += 1
        types = [r.types for r in self.recipients]
        if any(t != types[0] for t in types):
            stats.numbering_mismatch += 1
        self.restart()

    # -- acting -------------------------------------------------------------------------------

    def pump(self) -> None:
        """Send the room's next command if one is due and a seat may act."""
        if not self.ready or self.pending is not None or not self.want or not self.bench.playing:
            return
        if self.commands >= self.bench.args.max_game_commands:
            self.bench.stats.abandoned += 1
            self.restart()
            return
        if self.setups:
            side = self.setups[0]
            command = {"type": "submit_setup", "placements": random_placements(self.rng, side)}
        else:
            latest = max(r.seq for r in self.recipients)
            able = [
                s
                for s in self.seats.values()
                if s.legal is not None and s.legal["seq"] == s.seq == latest
            ]
            if not able:
                return
            seat = self.rng.choice(able)
            side = seat.seat  # type: ignore[assignment]
            command = choose(self.rng, seat.legal["actions"])  # type: ignore[index]
            seat.legal = None
        if self.setups:
            self.setups.pop(0)
        self.commands += 1
        if self.bench.start <= time.monotonic() < self.bench.end:
            self.bench.stats.sent += 1
        self.pending = {
            "id": f"c{next(self.ids)}",
            "seat": side,
            "command": command,
            "sent": time.monotonic(),
        }
        if self.bench.args.mode == "open":
            self.want = False
        asyncio.get_running_loop().create_task(self.send(self.pending))

    async def send(self, pending: dict[str, Any]) -> None:
        frame = msgpack.packb(
            {"type": "command", "id": pending["id"], "command": pending["command"]}
        )
        with contextlib.suppress(ConnectionClosed):
            await self.seats[pending["seat"]].ws.send(frame)

    async def ticker(self) -> None:
        """Open loop: one command every ``interval`` (± jitter), at a random phase."""
        args = self.bench.args
        await asyncio.sleep(self.rng.uniform(0, args.interval))
        while not self.bench.stopping:
            if self.pending is not None:
                self.bench.stats.busy_ticks += 1
            self.want = True
            self.pump()
            jitter = self.rng.uniform(-args.jitter, args.jitter)
            await asyncio.sleep(args.interval * (1 + jitter))


class Bench:
    def __init__(self, args: argparse.Namespace, url: str, rooms: range) -> None:
        self.args = args
        self.url = url
        self.ws_url = url.replace("http://", "ws://") + "/ws"
        self.room_ids = rooms
        self.stats = Stats()
        self.start = float("inf")
        self.end = float("inf")
        self.playing = False  # set once every room of every worker is connected
        self.stopping = False
        self.http: httpx.AsyncClient

    async def run(self, control: Any) -> Stats:
        # Idle connections are dropped before uvicorn's 5 s keep-alive would close them under us.
        limits = httpx.Limits(max_connections=32, max_keepalive_connections=32, keepalive_expiry=3)
        async with httpx.AsyncClient(base_url=self.url, timeout=60, limits=limits) as http:
            self.http = http
            rooms = [Room(self, i) for i in self.room_ids]
            gate = asyncio.Semaphore(32)

            async def open_room(room: Room) -> None:
                async with gate:
                    await room.new_game()

            await asyncio.gather(*(open_room(r) for r in rooms))
            control.send("ready")
            loop = asyncio.get_running_loop()
            self.start, self.end = await loop.run_in_executor(None, control.recv)
            self.playing = True
            tickers = []
            if self.args.mode == "open":
                tickers = [loop.create_task(r.ticker()) for r in rooms]
            else:
                for room in rooms:
                    room.pump()
            await asyncio.sleep(max(0.0, self.end - time.monotonic()))
            self.stopping = True
            await asyncio.sleep(1.0)  # let the window's last commands settle
            for task in tickers:
                task.cancel()
            for room in rooms:
                room.closing = True
                for r in room.recipients:
                    with contextlib.suppress(Exception):
                        await r.ws.close()
        return self.stats


def worker(args: argparse.Namespace, url: str, rooms: range, control: Any) -> None:
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    # The generator keeps every arrival time of every room: with CPython's default thresholds
    # its full collections rescanned all of them and took half its CPU (py-spy), time the
    # server then lacked on this 2-core box. The server tunes its collector the same way.
    gc.collect()
    gc.freeze()
    gc.set_threshold(*Settings.gc_thresholds)
    stats = asyncio.run(Bench(args, url, rooms).run(control))
    control.send(dataclasses.asdict(stats))


def _fields(text: str) -> dict[str, str]:
    """The ``name:value`` lines of an INFO reply."""
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


# -- the run -------------------------------------------------------------------------------------


def cluster_figures(
    before: dict[int, dict[str, int]], after: dict[int, dict[str, int]], acked: int, seconds: float
) -> dict[str, Any] | None:
    """Per node and per acknowledged command: Redis commands, bytes in/out, publishes received
    over the cluster bus; CPU (% of a core)."""
    if not before or not acked:
        return None
    nodes = {}
    for port, end in after.items():
        start = before[port]
        counters = ("commands", "bytes_in", "bytes_out", "cpu_ticks", "bus_publishes")
        delta = {k: end[k] - start[k] for k in counters}
        nodes[str(port)] = {
            "master": bool(end["master"]),
            "cpu_percent": round(delta["cpu_ticks"] / CLK_TCK / seconds * 100, 1),
            "commands_per_s": round(delta["commands"] / seconds),
        }
        for k in ("commands", "bytes_in", "bytes_out", "bus_publishes"):
            nodes[str(port)][f"{k}_per_command"] = round(delta[k] / acked, 2)
    masters = [n for n in nodes.values() if n["master"]]
    return {
        "nodes": nodes,
        "redis_commands_per_command": round(
            sum(n["commands_per_command"] for n in nodes.values()), 2
        ),
        "master_commands_per_command": round(sum(n["commands_per_command"] for n in masters), 2),
        "bytes_per_command": round(
            sum(n["bytes_in_per_command"] + n["bytes_out_per_command"] for n in nodes.values())
        ),
        "master_cpu_percent": [n["cpu_percent"] for n in masters],
        "bus_publishes_per_command": [n["bus_publishes_per_command"] for n in nodes.values()],
    }


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def raise_fd_limit() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    raise_fd_limit()
    sockets = args.rooms * (3 if args.spectators else 2)
    work = Path(tempfile.mkdtemp(prefix="olb-"))
    server = Server(args, work)
    keep = True  # until the run has ended well: a failed run's server log says why
    try:
        if args.url:
            url = args.url
        else:
            if args.callgrind:
                server.under_callgrind()
            server.start()
            url = server.url
        time.sleep(1.0)
        for _ in range(args.bot_rooms):  # the computer plays itself there, thinking all along
            levels = {"olympians": args.bot_level, "chthonians": args.bot_level}
            httpx.post(f"{url}/rooms/watch", json=levels, timeout=10).raise_for_status()
        pids = {} if args.url else server.pids()
        rss_before = {k: sum(map(rss_kb, p)) for k, p in pids.items()}
        ctx = multiprocessing.get_context("spawn")
        pipes, procs = [], []
        for w in range(args.workers):
            mine = range(w, args.rooms, args.workers)
            parent, child = ctx.Pipe()
            proc = ctx.Process(target=worker, args=(args, url, mine, child), daemon=True)
            proc.start()
            pipes.append(parent)
            procs.append(proc)
        t0 = time.monotonic()
        for pipe in pipes:
            assert pipe.recv() == "ready"
        setup_s = time.monotonic() - t0
        start = time.monotonic() + args.warmup
        end = start + args.seconds
        for pipe in pipes:
            pipe.send((start, end))
        time.sleep(max(0.0, start - time.monotonic()))
        if args.callgrind:  # counting from the window's start, as the acks are
            start_counting(server)
        spy = None
        if args.profile and "server" in pids:
            exe = Path(sys.executable).with_name("py-spy")
            spy = subprocess.Popen(
                [
                    str(exe if exe.exists() else "py-spy"),
                    *("record", "-p", str(pids["server"][-1]), "-d", str(int(args.seconds))),
                    *("-r", "100", "-f", "raw", "--nonblocking", "-o", args.profile),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        metrics0 = scrape(url)
        nodes0 = server.cluster_stats()
        cpu0 = {k: sum(map(cpu_ticks, p)) for k, p in pids.items()}
        gen0 = {w: cpu_ticks(p.pid) for w, p in enumerate(procs)}
        time.sleep(max(0.0, end - time.monotonic()))
        counted = stop_counting(server) if args.callgrind else None  # to the window's end
        cpu1 = {k: sum(map(cpu_ticks, p)) for k, p in pids.items()}
        nodes1 = server.cluster_stats()
        gen1 = {w: cpu_ticks(p.pid) for w, p in enumerate(procs)}
        rss_after = {k: sum(map(rss_kb, p)) for k, p in pids.items()}
        metrics1 = scrape(url)
        health = {}
        if not args.url:
            with contextlib.suppress(Exception):
                health = httpx.get(f"{url}/healthz", timeout=5).json()
        results = [pipe.recv() for pipe in pipes]
        if spy is not None:
            spy.wait(60)
        for proc in procs:
            proc.join(30)
        keep = args.keep
    finally:
        if not args.url:
            server.stop()
        if keep:
            print(f"load_bench: the run's directory is kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)

    stats = Stats()
    for s in (Stats(**r) for r in results):
        stats.latencies += s.latencies
        stats.legal_latencies += s.legal_latencies
        for name in (
            "acked",
            "sent",
            "games",
            "abandoned",
            "numbering_mismatch",
            "disconnects",
            "busy_ticks",
            "rooms_shed",
        ):
            setattr(stats, name, getattr(stats, name) + getattr(s, name))
        for code, n in s.refused.items():
            stats.refused[code] = stats.refused.get(code, 0) + n
        for code, n in s.retried.items():
            stats.retried[code] = stats.retried.get(code, 0) + n
        stats.errors += s.errors
    ms = [x * 1000 for x in stats.latencies]
    legal_ms = [x * 1000 for x in stats.legal_latencies]
    seconds = args.seconds
    cpu = {k: (cpu1[k] - cpu0[k]) / CLK_TCK / seconds * 100 for k in cpu0}
    gen_cpu = sum(gen1[w] - gen0[w] for w in gen0) / CLK_TCK / seconds * 100
    rate = stats.acked / seconds
    # The headline figures under stable keys (bench/README.md): what docs and CI compare.
    headline = {
        "commands_per_s": round(rate, 1),
        "server_cpu_us_per_command": (
            round(cpu["server"] * 1e4 / rate, 1) if rate and "server" in cpu else None
        ),
        "p50_ms": round(percentile(ms, 50), 2),
        "p99_ms": round(percentile(ms, 99), 2),
        "next_legal_p50_ms": round(percentile(legal_ms, 50), 2),
        "next_legal_p99_ms": round(percentile(legal_ms, 99), 2),
    }
    if counted is not None:
        per_command = round(counted / stats.acked) if stats.acked else None
        headline["server_instructions_per_command"] = per_command
    out = {
        **headline,
        "mode": args.mode,
        "rooms": args.rooms,
        "spectators": args.spectators,
        "sockets": sockets,
        "workers": args.workers,
        "workers_server": args.workers_server,
        "appendfsync": (
            "cluster, always"
            if args.redis_cluster
            else "external"
            if args.redis_url
            else args.appendfsync
        ),
        "seconds": seconds,
        "setup_seconds": round(setup_s, 1),
        "offered_per_second": (
            round(args.rooms / args.interval, 1) if args.mode == "open" else "as fast as acked"
        ),
        "latency_ms": {
            "n": len(ms),
            "p50": round(percentile(ms, 50), 2),
            "p95": round(percentile(ms, 95), 2),
            "p99": round(percentile(ms, 99), 2),
            "max": round(max(ms), 1) if ms else None,
            "mean": round(statistics.fmean(ms), 2) if ms else None,
        },
        "command_to_next_legal_ms": {
            "n": len(legal_ms),
            **{f"p{q}": round(percentile(legal_ms, q), 2) for q in (50, 95, 99)},
        },
        "cpu_percent": {k: round(v, 1) for k, v in cpu.items()},
        "bot_rooms": args.bot_rooms,
        "load_generator_cpu_percent": round(gen_cpu, 1),
        "rss_mb": {k: round(v / 1024, 1) for k, v in rss_after.items()},
        "rss_growth_kb_per_room": {
            k: round((rss_after[k] - rss_before[k]) / args.rooms, 1) for k in rss_after
        },
        "server_compiled": server_compiled(metrics1),
        "server_append_ms": histogram_quantiles(metrics0, metrics1, "olympus_append_seconds"),
        "server_fanout_ms": histogram_quantiles(metrics0, metrics1, "olympus_fanout_seconds"),
        "rooms_loaded_at_end": health.get("rooms"),
        "rss_growth_kb_per_loaded_room": {
            k: round((rss_after[k] - rss_before[k]) / max(1, health.get("rooms") or 1), 1)
            for k in rss_after
        },
        "games_finished": stats.games,
        "games_abandoned": stats.abandoned,
        "refused": stats.refused,
        "retried": stats.retried,
        "disconnects": stats.disconnects,
        "numbering_mismatch": stats.numbering_mismatch,
        "busy_ticks": stats.busy_ticks,
        "rooms_shed": stats.rooms_shed,
        "redis_cluster": cluster_figures(nodes0, nodes1, stats.acked, seconds),
        "append_replicas": args.append_replicas,
        "errors_total": len(stats.errors),
        "errors": stats.errors[:5],
        "nproc": os.cpu_count(),
        "python": sys.version.split()[0],
    }
    print(json.dumps(out, indent=2))
    if out["server_compiled"] is False:
        print("load_bench: the server ran interpreted, slower (its log says why)")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    target_rate, p99, target_cpu = TARGETS[args.mode]
    verdicts = []
    if target_rate is not None:
        verdicts.append(f"≥ {target_rate} commands/s: {'met' if rate >= target_rate else 'MISSED'}")
    verdicts.append(f"p99 < {p99:.0f} ms: {'met' if ms and percentile(ms, 99) < p99 else 'MISSED'}")
    cpu_us = headline["server_cpu_us_per_command"]
    if target_cpu is not None and cpu_us is not None:
        met = "met" if cpu_us <= target_cpu else "MISSED"
        verdicts.append(f"server CPU ≤ {target_cpu:.0f} µs per command: {met}")
    print("targets (500 rooms closed / 2,000 rooms open):", "; ".join(verdicts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
