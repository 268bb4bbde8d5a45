"""Players under load: quick pairing of many seekers across two service processes, and sign-ins
in a burst while rooms play.

Starts ``olympus serve --workers 2`` (two processes on one port, its embedded Redis and
PostgreSQL) and, in order:

1. **Accounts**: ``--seekers`` accounts signed up over HTTP, then given ratings spread over
   1200-1800 in PostgreSQL directly (so that pairing has ranges to widen).
2. **Pairing**: every account seeks at once (``POST /seeks``, then long polls until paired),
   from ``--generators`` processes. Reported: the latency from a seek to its paired answer
   (p50/p99/max), pairs per second over the whole run, how far apart in time the two players
   of a pair got their answers (p99, max: "both land within a second"), and the checks that
   every room holds two different players and nobody was paired twice.
3. **Sign-ins during play**: ``load_bench.py --url`` plays ``--rooms`` rooms on the same server
   (open loop, a command per room every 2 s) twice: alone, then with ``--logins`` sign-ins per
   second (each from one of 256 loopback addresses: the limits per address shared out) during its
   measured window. Reported: sign-in latency p50/p99 and the game's command latency p50/p99
   with and without the burst.

    .venv/bin/python bench/players_bench.py [--seekers 1000] [--rooms 500] [--logins 50]
        [--seconds 20] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import asyncpg
import httpx

sys.path.insert(0, str(Path(__file__).parent))
from load_bench import Server, parse_args, percentile

from olympus.store import EmbeddedPostgres

PASSWORD = "a password for the bench"
ADDRESSES = [f"127.0.{n // 250}.{n % 250 + 2}" for n in range(256)]


def _args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--seekers", type=int, default=1000)
    p.add_argument("--generators", type=int, default=4, help="seeking processes (4)")
    p.add_argument("--rooms", type=int, default=500, help="rooms playing during the logins")
    p.add_argument("--logins", type=float, default=50.0, help="sign-ins per second (50)")
    p.add_argument("--seconds", type=float, default=20.0, help="measured window of each run")
    p.add_argument("--json", default=None)
    return p.parse_args(argv)


def _name(n: int) -> str:
    return f"Bench {n:05d}"


async def _sign_up(url: str, names: list[str]) -> None:
    limits = httpx.Limits(max_connections=16)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:
        lanes = asyncio.Semaphore(16)

        async def one(name: str, address: str) -> None:
            async with lanes:
                transport = httpx.AsyncHTTPTransport(local_address=address)
                async with httpx.AsyncClient(base_url=url, transport=transport, timeout=60) as c:
                    answer = await c.post(
                        "/account/signup", json={"name": name, "password": PASSWORD}
                    )
                    answer.raise_for_status()

        # sign-ups are limited per address: each name from an address of its own share
        await asyncio.gather(*(one(n, ADDRESSES[i % len(ADDRESSES)]) for i, n in enumerate(names)))
        del http


async def _seekers(url: str, names: list[str], start_at: float) -> list[dict[str, Any]]:
    """Sign each in (from its share of addresses), wait for ``start_at``, seek, wait until
    paired: what each got and when."""
    clients = []
    for i, name in enumerate(names):
        # an idle connection is let go before the server's keep-alive ends (uvicorn's 5 s):
        # else a request may leave on a connection the server is closing
        limits = httpx.Limits(keepalive_expiry=1.0)
        transport = httpx.AsyncHTTPTransport(
            local_address=ADDRESSES[i % len(ADDRESSES)], limits=limits
        )
        client = httpx.AsyncClient(base_url=url, transport=transport, timeout=60)
        answer = await client.post("/account/signin", json={"name": name, "password": PASSWORD})
        answer.raise_for_status()
        clients.append((client, {"x-csrf-token": answer.json()["csrf"]}))
    await asyncio.sleep(max(0.0, start_at - time.time()))

    async def seek(client: httpx.AsyncClient, headers: dict[str, str], name: str) -> dict[str, Any]:
        began = time.time()
        made = await client.post("/seeks", json={"clock": "none"}, headers=headers)
        made.raise_for_status()
        while True:
            waited = await client.post(f"/seeks/{made.json()['seek']}/wait", headers=headers)
            waited.raise_for_status()
            body = waited.json()
            if body["status"] == "paired":
                return {
                    "name": name,
                    "room": body["room"],
                    "seat": body["seat"],
                    "began": began,
                    "paired": time.time(),
                }

    try:
        return await asyncio.gather(
            *(seek(c, h, n) for (c, h), n in zip(clients, names, strict=True))
        )
    finally:
        for client, _ in clients:
            await client.aclose()


def _generator(url: str, names: list[str], start_at: float, out: Any) -> None:
    try:
        out.put(asyncio.run(_seekers(url, names, start_at)))
    except BaseException as error:  # told, so that the bench stops instead of waiting
        out.put(repr(error))
        raise


async def _spread_ratings(database_url: str, count: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    connection = await asyncpg.connect(database_url)
    try:
        rows = await connection.fetch("SELECT id FROM accounts ORDER BY id")
        await connection.executemany(
            "UPDATE accounts SET rating = $2, deviation = 80 WHERE id = $1",
            [(r["id"], rng.uniform(1200, 1800)) for r in rows[:count]],
        )
    finally:
        await connection.close()


def pairing(url: str, args: argparse.Namespace) -> dict[str, Any]:
    names = [_name(n) for n in range(args.seekers)]
    shares = [names[g :: args.generators] for g in range(args.generators)]
    start_at = time.time() + 5 + args.seekers / 100  # every seeker signed in by then
    queue: Any = multiprocessing.get_context("spawn").Queue()
    procs = [
        multiprocessing.get_context("spawn").Process(
            target=_generator, args=(url, s, start_at, queue)
        )
        for s in shares
    ]
    for proc in procs:
        proc.start()
    got = [queue.get() for _ in procs]
    failed = [g for g in got if isinstance(g, str)]
    if failed:
        for proc in procs:
            proc.kill()
        raise RuntimeError(f"a seeking process failed: {failed[0]}")
    results = [r for g in got for r in g]
    for proc in procs:
        proc.join()
    rooms: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        rooms.setdefault(r["room"], []).append(r)
    whole = all(
        len(p) == 2
        and p[0]["name"] != p[1]["name"]
        and {x["seat"] for x in p} == {"olympians", "chthonians"}
        for p in rooms.values()
    )
    latency = sorted(r["paired"] - r["began"] for r in results)
    apart = sorted(abs(p[0]["paired"] - p[1]["paired"]) for p in rooms.values() if len(p) == 2)
    wall = max(r["paired"] for r in results) - min(r["began"] for r in results)
    return {
        "seekers": len(results),
        "pairs": len(rooms),
        "every_room_two_players": whole,
        "paired_once": len({r["name"] for r in results}) == len(results) == args.seekers,
        "seek_to_paired_p50_s": round(percentile(latency, 50), 3),
        "seek_to_paired_p99_s": round(percentile(latency, 99), 3),
        "seek_to_paired_max_s": round(latency[-1], 3),
        "pair_apart_p99_s": round(percentile(apart, 99), 3),
        "pair_apart_max_s": round(apart[-1], 3),
        "pairs_per_second": round(len(rooms) / wall, 1),
    }


def _load_run(url: str, args: argparse.Namespace, work: Path, tag: str) -> dict[str, Any]:
    out = work / f"load-{tag}.json"
    command = [
        sys.executable,
        str(Path(__file__).parent / "load_bench.py"),
        "--url",
        url,
        "--mode",
        "open",
        "--rooms",
        str(args.rooms),
        "--seconds",
        str(args.seconds),
        "--warmup",
        "5",
        "--json",
        str(out),
    ]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"load_bench.py failed ({tag}):\n{run.stderr[-3000:]}")
    return json.loads(out.read_text())


async def _logins(
    url: str, rate: float, began: float, seconds: float, names: list[str]
) -> list[float]:
    times: list[float] = []
    clients = [
        httpx.AsyncClient(
            base_url=url, timeout=60, transport=httpx.AsyncHTTPTransport(local_address=a)
        )
        for a in ADDRESSES
    ]

    async def one(n: int) -> None:
        start = time.perf_counter()
        answer = await clients[n % len(clients)].post(
            "/account/signin", json={"name": names[n % len(names)], "password": PASSWORD}
        )
        answer.raise_for_status()
        times.append(time.perf_counter() - start)

    await asyncio.sleep(max(0.0, began - time.time()))
    tasks = []
    for n in range(int(rate * seconds)):
        tasks.append(asyncio.ensure_future(one(n)))
        await asyncio.sleep(1 / rate)
    await asyncio.gather(*tasks)
    for client in clients:
        await client.aclose()
    return sorted(times)


def logins(url: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    alone = _load_run(url, args, work, "alone")
    names = [_name(n) for n in range(args.seekers)]
    burst: dict[str, Any] = {}

    def run_load() -> None:
        burst.update(_load_run(url, args, work, "burst"))

    import threading

    loader = threading.Thread(target=run_load)
    loader.start()
    # the load bench's measured window starts after its rooms are made and warmed up
    began = time.time() + 5 + args.rooms / 100
    times = asyncio.run(_logins(url, args.logins, began, args.seconds * 0.8, names))
    loader.join()
    return {
        "logins": len(times),
        "login_p50_ms": round(1000 * percentile(times, 50), 1),
        "login_p99_ms": round(1000 * percentile(times, 99), 1),
        "command_p50_ms_alone": alone["latency_ms"]["p50"],
        "command_p99_ms_alone": alone["latency_ms"]["p99"],
        "command_p50_ms_burst": burst["latency_ms"]["p50"],
        "command_p99_ms_burst": burst["latency_ms"]["p99"],
    }


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    work = Path(tempfile.mkdtemp(prefix="players-bench-"))
    server_args = parse_args(["--workers-server", "2"])
    server = Server(server_args, work)
    server.start()
    try:
        url = server.url
        asyncio.run(_sign_up(url, [_name(n) for n in range(args.seekers)]))
        database = EmbeddedPostgres(work / "data" / "postgres").url
        asyncio.run(_spread_ratings(database, args.seekers))
        report = {**pairing(url, args), **logins(url, args, work)}
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(report, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
