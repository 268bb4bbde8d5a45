"""What a game costs the server besides its commands: a room created and joined over HTTP, both
seats and a spectator connected and greeted (``hello``, ``welcome``), the three sockets closed.

``load_bench.py`` plays short random games (about 40 commands each), so this lifecycle is a
sizeable part of its CPU per command (docs/performance.md, "A game's way in and out"); here it is
measured alone. Starts ``olympus serve`` as ``load_bench.py`` does (embedded Redis,
``appendfsync always``), then runs ``--games`` lifecycles, ``--concurrency`` at a time, after
``--warmup`` of them unmeasured. Reported: the server's and its Redis' CPU per game (utime +
stime over the window, /proc), games per second, and the Redis round trips the server made
per game (the ``write`` calls of the Redis process' clients are not visible, so: the commands
Redis ran, ``INFO commandstats``, those inside Lua scripts included), and whether the server
ran its compiled build (``server_compiled``, as ``load_bench.py`` reports it).

With ``--callgrind``, the server runs under valgrind's callgrind, counting the instructions it
runs for the measured games only (``server_instructions_per_game``; the warm-up and the start
are not counted). A count, unlike CPU time, does not move with the box's speed or its
neighbours: on a box whose timings vary by 5 % from one run to the next, it is what tells two
builds apart (docs/performance.md, "The machine, and measuring on it"). Its CPU figures
are valgrind's, not the server's; run a few hundred games at low concurrency
(``--games 100 --concurrency 5``).

    .venv/bin/python bench/lifecycle_bench.py [--games 2000] [--concurrency 20] [--json FILE]
    .venv/bin/python bench/lifecycle_bench.py --callgrind --games 100 --warmup 10 --concurrency 5
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import msgpack
import redis
from load_bench import (
    Server,
    cpu_seconds,
    scrape,
    server_compiled,
    start_counting,
    stop_counting,
    unpack,
)
from load_bench import parse_args as load_bench_args
from websockets.asyncio.client import connect

from olympus.rules import Faction


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--games", type=int, default=2000, help="measured lifecycles (2000)")
    p.add_argument("--warmup", type=int, default=100, help="lifecycles before measuring (100)")
    p.add_argument("--concurrency", type=int, default=20, help="lifecycles at a time (20)")
    p.add_argument("--json", default=None, help="also write the results to this file")
    p.add_argument(
        "--callgrind",
        action="store_true",
        help="count the server's instructions per game under valgrind (slow: few games)",
    )
    return p.parse_args(argv)


async def lifecycle(http: httpx.AsyncClient, ws_url: str) -> None:
    """One game's lifecycle as load_bench plays it, without the game."""
    reply = await http.post("/rooms", json={"side": Faction.OLYMPIANS.value})
    reply.raise_for_status()  # (a 503: the server sheds rooms; measure with fewer at a time)
    created = reply.json()
    reply = await http.post(f"/rooms/{created['room']}/join", json={})
    reply.raise_for_status()
    joined = reply.json()
    hellos = [
        {"token": created["token"]},
        {"token": joined["token"]},
        {"spectate": created["room"]},
    ]
    sockets = []
    for hello in hellos:
        ws = await connect(
            ws_url,
            subprotocols=["olympus.msgpack"],  # type: ignore[list-item]
            compression=None,
            ping_interval=None,
        )
        greeting = {"type": "hello", **hello, "last_seq": 0, "epoch": created["epoch"]}
        await ws.send(msgpack.packb(greeting))
        welcome = unpack(await ws.recv())[0]  # type: ignore[arg-type]
        assert welcome["type"] == "welcome", welcome
        sockets.append(ws)
    for ws in sockets:
        await ws.close()


async def run(args: argparse.Namespace, server: Server, commands: Any) -> dict[str, Any]:
    pids = server.pids()
    ws_url = server.url.replace("http", "ws", 1) + "/ws"
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
        slots = asyncio.Semaphore(args.concurrency)

        async def one() -> None:
            async with slots:
                await lifecycle(http, ws_url)

        await asyncio.gather(*(one() for _ in range(args.warmup)))
        if args.callgrind:
            start_counting(server)
        before = {name: sum(map(cpu_seconds, ps)) for name, ps in pids.items()}
        ran_before, start = commands(), time.perf_counter()
        await asyncio.gather(*(one() for _ in range(args.games)))
        seconds = time.perf_counter() - start
        after = {name: sum(map(cpu_seconds, ps)) for name, ps in pids.items()}
        ran = commands() - ran_before
        counted = stop_counting(server) if args.callgrind else None
        compiled = server_compiled(scrape(server.url))
    cpu_ms = {name: 1000 * (after[name] - before[name]) / args.games for name in before}
    per_game = {}
    if counted is not None:
        per_game["server_instructions_per_game"] = round(counted / args.games)
    return {
        **per_game,
        "games": args.games,
        "concurrency": args.concurrency,
        "games_per_s": round(args.games / seconds, 1),
        "server_cpu_ms_per_game": round(cpu_ms["server"], 3),
        "redis_cpu_ms_per_game": round(cpu_ms.get("redis", 0.0), 3),
        "redis_commands_per_game": round(ran / args.games, 1),
        "server_compiled": compiled,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory() as work:
        server = Server(load_bench_args([]), Path(work))
        if args.callgrind:
            server.under_callgrind()
        server.start()
        try:
            sockets = list(Path(work).rglob("*.sock"))
            if not sockets:
                raise RuntimeError(f"no Redis socket under {work}: the server's embedded Redis")
            with redis.Redis(unix_socket_path=str(sockets[0])) as client:

                def commands() -> int:
                    stats = client.info("commandstats")
                    return sum(int(entry["calls"]) for entry in stats.values())

                report = asyncio.run(run(args, server, commands))
        finally:
            server.stop()
    for key, value in report.items():
        print(f"{key:28s} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
