"""Spectator benchmark: many sockets watching few games, on real ``olympus serve`` processes.

Starts ``olympus serve --no-archive`` (``--workers-server N`` processes on one port, its own
embedded Redis), creates ``--rooms`` rooms with two seats each, and has ``--spectators``
sockets watch each room from ``--generators`` load-generator processes. The spectators speak
the websocket protocol on plain asyncio protocols (an HTTP upgrade, unmasked frames in, masked
frames out), not the ``websockets`` client: at 10,000 sockets its per-frame Python would need
more CPU than the server. The seats play random legal commands (the load bench's bot) at
``--rate`` commands per second per room.

Measured, over ``--seconds`` after ``--warmup``:

- **delivery latency** of each acknowledged command: from the ack's arrival at the seat to the
  arrival of the event numbered ``ack.seq`` (the command's last event) at the *last* reading
  spectator of the room (p50/p99/max, ms). Without Random Setup every event reaches every
  audience, so spectators and seats number the room's messages alike. Arrival times are
  ``time.monotonic()``, one clock for every process of the machine.
- **server CPU per delivered frame**: the server processes' utime + stime (``/proc``) over the
  window, divided by the websocket frames every socket (spectators and seats) received in it.
- **RSS per idle socket**: the server's RSS growth when the spectators connect (before any
  command), and when ``--idle-players`` seat sockets connect, divided by their number.
- **lost or out of order**: events a reading spectator never got, or got twice or backwards
  (from the seq numbers; its last seq against the room's at the end). Must be 0.
- **Redis work per event**: ``INFO commandstats`` deltas over the window, per event.
- ``--stalled P``: P % of each room's spectators stop reading after their ``welcome``; they are
  not waited for, and their close codes are reported.

Run ``.venv/bin/python bench/spectator_bench.py --help``; see bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import gc
import json
import multiprocessing
import os
import random
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import msgpack
import redis
from load_bench import (
    SEATS,
    Server,
    choose,
    cpu_seconds,
    percentile,
    rss_kb,
    scrape,
    server_compiled,
)
from load_bench import parse_args as load_bench_args

from olympus.rules import Faction, random_placements

try:
    from websockets.speedups import apply_mask
except ImportError:  # pragma: no cover
    from websockets.utils import apply_mask

CLK_TCK = os.sysconf("SC_CLK_TCK")
# The targets judged on the last line (docs/performance.md).
TARGET_P99_MS, TARGET_CPU_US, TARGET_RSS_KB = 250.0, 5.0, 30.0


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--spectators", type=int, default=1000, help="spectators per room (1000)")
    p.add_argument("--rooms", type=int, default=1, help="rooms, each with its spectators (1)")
    p.add_argument("--rate", type=float, default=2.0, help="commands/s per room (2)")
    p.add_argument("--seconds", type=float, default=20.0, help="measured window (20)")
    p.add_argument("--warmup", type=float, default=3.0, help="played, not measured (3)")
    p.add_argument("--workers-server", type=int, default=1, help="server processes (1)")
    p.add_argument(
        "--generators", type=int, default=None, help="spectator processes (1 per 2,500; ≤ 4)"
    )
    p.add_argument("--idle-players", type=int, default=200, help="seat sockets for RSS (200)")
    p.add_argument("--stalled", type=float, default=0.0, help="%% of spectators not reading (0)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", default=None, help="also write the results to this file")
    args = p.parse_args(argv)
    if args.generators is None:
        args.generators = max(1, min(4, -(-args.spectators * args.rooms // 2500)))
    return args


def raise_fd_limit() -> None:
    """As many descriptors as the hard limit allows (inherited by the children)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def server_cpu_ns(pids: list[int]) -> int:
    """CPU time of ``pids`` in nanoseconds, from the scheduler's account (load_bench's
    ``cpu_seconds``): fine enough for a tiny run, where ``cpu_split`` counts whole 10 ms ticks
    and can read 0."""
    return round(sum(cpu_seconds(pid) for pid in pids) * 1e9)


def cpu_split(pids: list[int]) -> tuple[int, int]:
    """utime and stime of ``pids``, summed, in clock ticks."""
    user = system = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        user, system = user + int(fields[11]), system + int(fields[12])
    return user, system


# -- a websocket on a plain asyncio protocol -------------------------------------------------------


def client_frame(payload: bytes, opcode: int = 2) -> bytes:
    """A client's whole masked frame (RFC 6455 §5.2) with a 7- or 16-bit length."""
    mask = os.urandom(4)
    n = len(payload)
    head = bytes((0x80 | opcode, 0x80 | n)) if n < 126 else bytes((0x80 | opcode, 0xFE))
    if n >= 126:
        head += n.to_bytes(2, "big")
    return head + mask + apply_mask(payload, mask)


class Wire(asyncio.Protocol):
    """One websocket: the upgrade, then ``hello``; each message in to ``on_message``."""

    def __init__(self, host: str, port: int, hello: dict[str, Any]) -> None:
        self.request = (
            f"GET /ws HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
            f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}\r\n"
            "Sec-WebSocket-Protocol: olympus.msgpack\r\n\r\n"
        ).encode()
        self.hello = msgpack.packb(hello)
        self.transport: asyncio.Transport | None = None
        self.upgraded = False
        self.buffer = b""
        self.welcomed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.close_code: int | None = None
        self.frames = 0  # frames received in the window (``window``)
        self.window = (float("inf"), float("inf"))

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.transport.write(self.request)  # type: ignore[union-attr]

    def connection_lost(self, exc: Exception | None) -> None:
        if self.close_code is None:
            self.close_code = 1006
        if not self.welcomed.done():
            self.welcomed.set_exception(ConnectionError(f"closed before welcome: {exc}"))

    def send(self, message: dict[str, Any]) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(client_frame(msgpack.packb(message)))

    def data_received(self, data: bytes) -> None:
        buf = self.buffer + data if self.buffer else data
        if not self.upgraded:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                self.buffer = buf
                return
            if b" 101 " not in buf[: buf.find(b"\r\n")]:
                raise ConnectionError(buf[:200].decode(errors="replace"))
            self.upgraded, buf = True, buf[end + 4 :]
            self.transport.write(client_frame(self.hello))  # type: ignore[union-attr]
        now = time.monotonic()
        start, end = self.window
        at, n = 0, len(buf)
        while n - at >= 2:
            first, length = buf[at], buf[at + 1] & 0x7F
            head = at + 2
            if length == 126:
                if n - head < 2:
                    break
                length, head = int.from_bytes(buf[head : head + 2], "big"), head + 2
            elif length == 127:
                if n - head < 8:
                    break
                length, head = int.from_bytes(buf[head : head + 8], "big"), head + 8
            if n - head < length:
                break
            payload, at = buf[head : head + length], head + length
            opcode = first & 0x0F
            if opcode == 2:
                if start <= now < end:
                    self.frames += 1
                data_ = msgpack.unpackb(payload, raw=False, strict_map_key=False)
                self.on_message(data_ if isinstance(data_, list) else [data_], now)
            elif opcode == 9:  # ping: the server's keepalive
                self.transport.write(client_frame(payload, 0xA))  # type: ignore[union-attr]
            elif opcode == 8:
                self.close_code = int.from_bytes(payload[:2], "big") if len(payload) >= 2 else 1005
                self.transport.close()  # type: ignore[union-attr]
        self.buffer = buf[at:]

    def on_message(self, messages: list[dict[str, Any]], now: float) -> None:
        for message in messages:
            if message["type"] == "welcome" and not self.welcomed.done():
                self.welcomed.set_result(None)


class Spectator(Wire):
    """A spectator: each event's arrival tallied per room (``arrivals``: seq → [last arrival,
    receipts]), its seq numbers checked; a stalled one stops reading after its welcome."""

    def __init__(
        self, host: str, port: int, room: str, arrivals: dict[int, list[Any]], stalled: bool
    ) -> None:
        super().__init__(host, port, {"type": "hello", "spectate": room})
        self.arrivals = arrivals
        self.stalled = stalled
        self.seq = 0
        self.gaps = self.backwards = 0

    def on_message(self, messages: list[dict[str, Any]], now: float) -> None:
        for message in messages:
            kind = message["type"]
            if kind == "event":
                seq = message["seq"]
                if seq != self.seq + 1:
                    if seq <= self.seq:
                        self.backwards += 1
                    else:
                        self.gaps += seq - self.seq - 1
                self.seq = seq
                slot = self.arrivals.get(seq)
                if slot is None:
                    self.arrivals[seq] = [now, 1]
                else:
                    slot[0] = now
                    slot[1] += 1
            elif kind in ("welcome", "view"):
                self.seq = message["seq"]
                if kind == "welcome" and not self.welcomed.done():
                    self.welcomed.set_result(None)
                    if self.stalled:
                        self.transport.pause_reading()  # type: ignore[union-attr]


async def open_all(make: Any, host: str, port: int, count: int, at_once: int = 200) -> list[Any]:
    """``count`` sockets made by ``make(i)``, ``at_once`` connecting at a time, all welcomed."""
    loop = asyncio.get_running_loop()
    gate = asyncio.Semaphore(at_once)
    opened: list[Any] = []

    async def one(i: int) -> None:
        async with gate:
            _, protocol = await loop.create_connection(lambda: make(i), host, port)
            await asyncio.wait_for(protocol.welcomed, 60)
            opened.append(protocol)

    await asyncio.gather(*(one(i) for i in range(count)))
    return opened


# -- the spectators' processes --------------------------------------------------------------------


def generator(host: str, port: int, share: list[tuple[str, int, int]], control: Any) -> None:
    """Hold ``share`` (room, reading spectators, stalled ones) until told to report."""
    raise_fd_limit()
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    gc.collect()
    gc.freeze()
    gc.set_threshold(50_000, 20, 10)
    control.send(asyncio.run(_generate(host, port, share, control)))


async def _generate(host: str, port: int, share: list[tuple[str, int, int]], control: Any) -> Any:
    loop = asyncio.get_running_loop()
    rooms: dict[str, dict[int, list[Any]]] = {room: {} for room, _, _ in share}
    plan = [
        (room, i >= reading) for room, reading, stalled in share for i in range(reading + stalled)
    ]
    sockets: list[Spectator] = await open_all(
        lambda i: Spectator(host, port, plan[i][0], rooms[plan[i][0]], plan[i][1]),
        host,
        port,
        len(plan),
    )
    control.send("connected")
    window = await loop.run_in_executor(None, control.recv)
    for s in sockets:
        s.window = window
    await loop.run_in_executor(None, control.recv)  # the end of the run
    report: dict[str, Any] = {"rooms": rooms, "sockets": []}
    for s in sockets:
        room = next(r for r in rooms if s.arrivals is rooms[r])
        report["sockets"].append(
            (room, s.stalled, s.seq, s.gaps, s.backwards, s.frames, s.close_code)
        )
        if s.transport is not None:
            s.transport.abort()
    return report


# -- the seats -------------------------------------------------------------------------------------


class Seat(Wire):
    """A seat's socket: its ``legal``, its acks (their arrival and seq) and errors."""

    def __init__(self, host: str, port: int, token: str) -> None:
        super().__init__(host, port, {"type": "hello", "token": token})
        self.seq = 0
        self.legal: dict[str, Any] | None = None
        self.acks: list[tuple[float, float, int]] = []  # (sent, acked, seq)
        self.sent_at: float | None = None
        self.errors = 0
        self.over = False

    def on_message(self, messages: list[dict[str, Any]], now: float) -> None:
        for message in messages:
            kind = message["type"]
            if kind in ("event", "view", "welcome"):
                self.seq = message["seq"]
                if kind == "welcome" and not self.welcomed.done():
                    self.welcomed.set_result(None)
            elif kind == "legal":
                self.legal = message if message["actions"] else None
            elif kind == "ack":
                self.acks.append((self.sent_at or now, now, message["seq"]))
                self.sent_at = None
            elif kind == "error":
                self.errors += 1
                self.sent_at = None
            elif kind == "game_over":
                self.over = True


async def play(seats: dict[Faction, Seat], rng: random.Random, rate: float, until: float) -> None:
    """One command every 1/``rate`` s from a seat that may act, until ``until``."""
    ids = iter(range(1, 1 << 30))
    next_at = time.monotonic() + rng.uniform(0, 1 / rate)
    while time.monotonic() < until:
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        next_at += 1 / rate
        if any(s.sent_at is not None or s.over for s in seats.values()):
            continue
        latest = max(s.seq for s in seats.values())
        able = [s for s in seats.values() if s.legal is not None and s.legal["seq"] == latest]
        if not able:
            continue
        seat = rng.choice(able)
        command = choose(rng, seat.legal["actions"])  # type: ignore[index]
        seat.legal, seat.sent_at = None, time.monotonic()
        seat.send({"type": "command", "id": f"c{next(ids)}", "command": command})


# -- the run ---------------------------------------------------------------------------------------


def redis_calls(client: redis.Redis) -> dict[str, int]:
    stats = client.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(entry["calls"]) for name, entry in stats.items()}


async def drive(
    args: argparse.Namespace, server: Server, procs: list[Any], pipes: list[Any], rds: redis.Redis
) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    host, port = "127.0.0.1", server.port
    pids = server.pids()["server"]
    rng = random.Random(args.seed)
    out: dict[str, Any] = {}
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
        rooms: list[tuple[str, dict[Faction, str]]] = []
        for _ in range(args.rooms):
            created = (await http.post("/rooms", json={"side": "olympians"})).json()
            joined = (await http.post(f"/rooms/{created['room']}/join", json={})).json()
            tokens = {Faction.OLYMPIANS: created["token"], Faction.CHTHONIANS: joined["token"]}
            rooms.append((created["room"], tokens))
    tables: list[dict[Faction, Seat]] = []
    for _, tokens in rooms:
        seats: dict[Faction, Seat] = {}
        for f in SEATS:
            token = tokens[f]
            seats[f] = (await open_all(lambda _i, t=token: Seat(host, port, t), host, port, 1))[0]
        for f in SEATS:
            seats[f].send(
                {
                    "type": "command",
                    "id": "setup",
                    "command": {"type": "submit_setup", "placements": random_placements(rng, f)},
                }
            )
            while not seats[f].acks:
                await asyncio.sleep(0.05)
            seats[f].acks.clear()
        tables.append(seats)
    await asyncio.sleep(1.0)
    rss0 = sum(map(rss_kb, pids))
    stalled = round(args.spectators * args.stalled / 100)
    reading = args.spectators - stalled
    shares: list[list[tuple[str, int, int]]] = [[] for _ in procs]
    for r, (room, _) in enumerate(rooms):
        for g in range(len(procs)):
            share_r = reading // len(procs) + (g < reading % len(procs))
            share_s = stalled // len(procs) + (g < stalled % len(procs))
            shares[(g + r) % len(procs)].append((room, share_r, share_s))
    for pipe, share in zip(pipes, shares, strict=True):
        pipe.send(share)
    t0 = time.monotonic()
    for pipe in pipes:
        assert await loop.run_in_executor(None, pipe.recv) == "connected"
    out["connect_seconds"] = round(time.monotonic() - t0, 1)
    await asyncio.sleep(2.0)
    rss1 = sum(map(rss_kb, pids))
    spectators = args.spectators * args.rooms
    out["rss_kb_per_idle_spectator"] = round((rss1 - rss0) / spectators, 2)
    if args.idle_players:
        players = await open_all(
            lambda i: Seat(host, port, rooms[i % len(rooms)][1][SEATS[i % 2]]),
            host,
            port,
            args.idle_players,
        )
        await asyncio.sleep(2.0)
        rss2 = sum(map(rss_kb, pids))
        out["rss_kb_per_idle_player"] = round((rss2 - rss1) / args.idle_players, 2)
        for p in players:
            p.transport.abort()  # type: ignore[union-attr]
        await asyncio.sleep(1.0)
    start = time.monotonic() + args.warmup
    end = start + args.seconds
    for pipe in pipes:
        pipe.send((start, end))
    for seats in tables:
        for s in seats.values():
            s.window = (start, end)
    players_task = [loop.create_task(play(s, rng, args.rate, end)) for s in tables]
    await asyncio.sleep(max(0.0, start - time.monotonic()))
    cpu0, ns0, calls0 = cpu_split(pids), server_cpu_ns(pids), redis_calls(rds)
    await asyncio.sleep(max(0.0, end - time.monotonic()))
    cpu1, ns1, calls1 = cpu_split(pids), server_cpu_ns(pids), redis_calls(rds)
    out["server_rss_mb_at_end"] = round(sum(map(rss_kb, pids)) / 1024, 1)
    await asyncio.gather(*players_task)
    await asyncio.sleep(2.0)  # the window's last events reach everyone
    out["final_seqs"] = [max(s.seq for s in seats.values()) for seats in tables]
    for pipe in pipes:
        pipe.send("report")
    reports = [await loop.run_in_executor(None, pipe.recv) for pipe in pipes]
    out["cpu"] = (cpu1[0] - cpu0[0], cpu1[1] - cpu0[1])
    out["cpu_ns"] = ns1 - ns0
    out["redis"] = {k: calls1.get(k, 0) - calls0.get(k, 0) for k in calls1}
    out["tables"] = tables
    out["rooms"] = [room for room, _ in rooms]
    out["reports"] = reports
    out["start"] = start
    return out


def summarize(
    args: argparse.Namespace, run: dict[str, Any], compiled: bool | None
) -> dict[str, Any]:
    """The figures of a run (``--json``)."""
    rooms, tables, reports = run["rooms"], run["tables"], run["reports"]
    arrivals: dict[str, dict[int, list[Any]]] = {room: {} for room in rooms}
    for report in reports:
        for room, seqs in report["rooms"].items():
            for seq, (at, n) in seqs.items():
                slot = arrivals[room].setdefault(int(seq), [0.0, 0])
                slot[0], slot[1] = max(slot[0], at), slot[1] + n
    sockets = [s for report in reports for s in report["sockets"]]
    reading = {room: sum(1 for s in sockets if s[0] == room and not s[1]) for room in rooms}
    delivery, from_command, incomplete, acked = [], [], 0, 0
    for room, seats in zip(rooms, tables, strict=True):
        for seat in seats.values():
            for sent, at, seq in seat.acks:
                if not run["start"] <= sent < run["start"] + args.seconds:
                    continue
                acked += 1
                slot = arrivals[room].get(seq)
                if slot is None or slot[1] < reading[room]:
                    incomplete += 1
                    continue
                delivery.append((slot[0] - at) * 1000)
                from_command.append((slot[0] - sent) * 1000)
    finals = dict(zip(rooms, run["final_seqs"], strict=True))
    lost = sum(max(0, finals[s[0]] - s[2]) + s[3] for s in sockets if not s[1])
    backwards = sum(s[4] for s in sockets if not s[1])
    frames = sum(s[5] for s in sockets) + sum(
        seat.frames for seats in tables for seat in seats.values()
    )
    user, system = (ticks / CLK_TCK for ticks in run["cpu"])
    events = sum(len(arrivals[r]) for r in rooms)
    calls = {k: v for k, v in sorted(run["redis"].items(), key=lambda kv: -kv[1]) if v}
    closes: dict[str, int] = {}
    for s in sockets:
        if s[6] is not None:
            key = f"{'stalled' if s[1] else 'reading'} {s[6]}"
            closes[key] = closes.get(key, 0) + 1
    # the total from the scheduler's nanoseconds; its split into user and system from ticks
    per_frame = run["cpu_ns"] / frames / 1000 if frames else None

    def ms(values: list[float], q: float) -> float:
        return round(percentile(values, q), 1)

    return {
        "delivery_p50_ms": ms(delivery, 50),
        "delivery_p99_ms": ms(delivery, 99),
        "delivery_max_ms": round(max(delivery), 1) if delivery else None,
        "command_to_last_spectator_p99_ms": ms(from_command, 99),
        "server_cpu_us_per_frame": round(per_frame, 2) if per_frame else None,
        "server_user_us_per_frame": round(user / frames * 1e6, 2) if frames else None,
        "server_system_us_per_frame": round(system / frames * 1e6, 2) if frames else None,
        "server_cpu_percent": round((user + system) / args.seconds * 100, 1),
        "rss_kb_per_idle_spectator": run["rss_kb_per_idle_spectator"],
        "rss_kb_per_idle_player": run.get("rss_kb_per_idle_player"),
        "server_rss_mb_at_end": run["server_rss_mb_at_end"],
        "lost": lost,
        "out_of_order": backwards,
        "undelivered_commands": incomplete,
        "commands_acked": acked,
        "frames_delivered": frames,
        "redis_calls_per_command": round(sum(calls.values()) / acked, 2) if acked else None,
        "redis_calls_by_command": calls,
        "events_seen": events,
        "close_codes": closes,
        "spectators": args.spectators,
        "rooms": args.rooms,
        "stalled_percent": args.stalled,
        "workers_server": args.workers_server,
        "generators": args.generators,
        "rate": args.rate,
        "seconds": args.seconds,
        "connect_seconds": run["connect_seconds"],
        "server_compiled": compiled,
        "nproc": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    raise_fd_limit()
    with contextlib.suppress(ImportError):
        import uvloop

        uvloop.install()
    work = Path(tempfile.mkdtemp(prefix="osb-"))
    server_args = ["--no-archive", "--workers-server", str(args.workers_server)]
    server = Server(load_bench_args(server_args), work)
    ctx = multiprocessing.get_context("spawn")
    procs, pipes = [], []
    try:
        server.start()
        sock = next(work.rglob("*.sock"))
        for _ in range(args.generators):
            parent, child = ctx.Pipe()
            share = None  # sent once the rooms exist
            proc = ctx.Process(
                target=_generator_entry, args=(server.port, child, share), daemon=True
            )
            proc.start()
            procs.append(proc)
            pipes.append(parent)
        with redis.Redis(unix_socket_path=str(sock)) as rds:
            run = asyncio.run(drive(args, server, procs, pipes, rds))
        compiled = server_compiled(scrape(server.url))
        for proc in procs:
            proc.join(30)
    finally:
        for proc in procs:
            if proc.is_alive():
                proc.kill()
        server.stop()
        import shutil

        shutil.rmtree(work, ignore_errors=True)
    out = summarize(args, run, compiled)
    print(json.dumps(out, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n")
    verdicts = [
        f"p99 ≤ {TARGET_P99_MS:.0f} ms: "
        + ("met" if out["delivery_p99_ms"] <= TARGET_P99_MS else "MISSED"),
        f"CPU ≤ {TARGET_CPU_US:.0f} µs per frame: "
        + ("met" if (out["server_cpu_us_per_frame"] or 1e9) <= TARGET_CPU_US else "MISSED"),
        f"≤ {TARGET_RSS_KB:.0f} KB per idle spectator: "
        + ("met" if out["rss_kb_per_idle_spectator"] <= TARGET_RSS_KB else "MISSED"),
        "nothing lost: " + ("met" if out["lost"] == out["out_of_order"] == 0 else "MISSED"),
    ]
    print("targets:", "; ".join(verdicts))
    return 0


def _generator_entry(port: int, control: Any, _: Any) -> None:
    share = control.recv()
    generator("127.0.0.1", port, share, control)


if __name__ == "__main__":
    raise SystemExit(main())
