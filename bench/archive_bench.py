"""Redis memory over a long run of finished games, with and without the archive.

Plays ``--games`` games to their end into the live store, as the service writes them (a room
created with its meta and seats, then one append per command, the events each command made,
then the room listed finished and queued for the archive), ``--concurrency`` rooms at a time:
as fast as they go without the archive, ``--rate`` games ending a second with it (a service
process at its limit ends ~14 a second: 1,400 commands/s, ~100 commands a game).
The games are random legal games of the rules (``olympus.bots``), ``--distinct`` of them, each
written again under new room ids. Twice: without an archive (every game stays in Redis), then
with one (the service's own ``Archiver`` moving each game ``--grace`` seconds after its end,
in the same process, as every service process runs it). Both on an embedded Redis and an
embedded PostgreSQL in a temporary directory, as ``make serve`` starts them.

Reported: Redis ``used_memory`` every ``--sample-every`` games of each run (each run starts on
an empty Redis); how flat it stays with the archive, once settled (past the run's first quarter
and twice the grace period): ``flat_ratio``, the median sample of the run's last quarter over
that of its second (its growth), and ``spread_ratio``, the largest settled sample over the
smallest (a late pass leaves a few more games waiting for a moment); the archive's
rows and bytes per game (the packed logs, and the tables with their indexes and TOAST); what
archiving costs, timed apart (``--drain`` games written, then moved by the archiver's passes
alone: its CPU per game, ``archiving_cpu_ms_per_game``, and ``archiving_games_per_s``); and
the mean time of an append in each run (``append_us_with`` / ``_without``: with
``--concurrency`` appends in flight on one event loop, a queue's time more than the command
path's, which ``command_path_bench.py`` and ``load_bench.py`` measure).

    .venv/bin/python bench/archive_bench.py --games 20000 [--grace 5] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import msgpack
import redis.asyncio

from olympus.bots import play_random_game
from olympus.rules import encode
from olympus.server.archiver import Archiver
from olympus.server.metrics import ServiceMetrics
from olympus.server.settings import Settings
from olympus.store import Backend, EmbeddedPostgres, EmbeddedRedis, open_backend


@dataclass(frozen=True)
class Game:
    """One game's appends, as the service makes them: the creation's events, then a command's."""

    appends: list[list[bytes]]

    @property
    def events(self) -> int:
        return sum(len(a) for a in self.appends)


def games(distinct: int, seed: int) -> list[Game]:
    rng = random.Random(seed)
    made = []
    for _ in range(distinct):
        appends: list[list[bytes]] = []

        def observe(
            before: Any, action: Any, new: list[Any], after: Any, into: list[list[bytes]] = appends
        ) -> None:
            into.append([encode(e) for e in new])

        events, _, _ = play_random_game(rng, observe=observe)
        played = sum(len(a) for a in appends)
        first = [encode(e) for e in events[: len(events) - played]]  # creation and setups
        made.append(Game([first, *appends]))
    return made


async def play(
    backend: Backend, game: Game, archiver: Archiver | None, timings: list[float]
) -> None:
    """Write one game as the service does (lobby.py, room.py, services.py)."""
    room = uuid.uuid4().hex[:12]
    meta = {"v": 1, "challenge": False, "options": {}, "created_ms": time.time_ns() // 10**6}
    await backend.events.create_room(room, msgpack.packb(meta))
    await backend.seats.write(room, {"olympians": 1, "chthonians": 1, "name:olympians": "Ann"})
    await backend.rooms.set_room_status(room, "open", seen=True)
    version = 0
    for events in game.appends:
        start = time.perf_counter()
        await backend.events.append(room, version, events)
        timings.append(time.perf_counter() - start)
        version += len(events)
    if archiver is not None:
        await archiver.queue_finished(room)
    await backend.rooms.set_room_status(room, "finished")


async def used_memory(client: redis.asyncio.Redis) -> int:
    return int((await client.info("memory"))["used_memory"])


async def run(
    args: argparse.Namespace,
    redis_url: str,
    archive_url: str | None,
    made: list[Game],
    rate: float | None = None,
) -> dict[str, Any]:
    settings = Settings(
        redis_url=redis_url,
        prefix=f"bench-{uuid.uuid4().hex[:8]}",
        archive_url=archive_url,
        archive_grace_seconds=args.grace,
        archive_poll_seconds=0.2,
        archive_batch=500,
    )
    backend = open_backend(settings.store_config())
    archiver = None
    mover = None
    if backend.archive is not None:
        await backend.archive.migrate()
        archiver = Archiver(backend, backend.archive, settings, ServiceMetrics())
        mover = asyncio.get_running_loop().create_task(archiver.run())
    client = redis.asyncio.Redis.from_url(redis_url)
    await client.flushall()  # each run from an empty Redis (the other run's games gone)
    start, baseline = time.monotonic(), await used_memory(client)
    samples: list[dict[str, float]] = []
    timings: list[float] = []
    done = 0
    pending = iter(range(args.games))

    async def player() -> None:
        nonlocal done
        for i in pending:
            if rate:  # the i-th game ends about i / rate seconds into the run
                await asyncio.sleep(max(0.0, start + i / rate - time.monotonic()))
            await play(backend, made[i % len(made)], archiver, timings)
            done += 1
            if done % args.sample_every == 0:
                samples.append(
                    {
                        "games": done,
                        "seconds": round(time.monotonic() - start, 2),
                        "used_memory": await used_memory(client),
                    }
                )

    await asyncio.gather(*(player() for _ in range(args.concurrency)))
    drained = None
    if archiver is not None:  # the last games' grace, then the archiver catches up
        while await backend.archive_queue.overdue(2**62, limit=1):
            await asyncio.sleep(0.2)
        drained = await used_memory(client)
    if mover is not None:
        mover.cancel()
    # Settled: past the first quarter of the run and twice the grace period.
    settled = [
        s for s in samples if s["games"] >= args.games / 4 and s["seconds"] >= args.grace * 2
    ]
    memory = [s["used_memory"] for s in settled]
    second = [s["used_memory"] for s in settled if s["games"] <= args.games / 2]
    last = [s["used_memory"] for s in settled if s["games"] > args.games * 3 / 4]
    result: dict[str, Any] = {
        "games": done,
        "seconds": round(time.monotonic() - start, 1),
        "baseline_used_memory": baseline,
        "samples": samples,
        "final_used_memory": samples[-1]["used_memory"] if samples else baseline,
        "drained_used_memory": drained,
        "games_per_s": round(done / (time.monotonic() - start), 1),
        # growth over the run: the last quarter's median over the second quarter's
        "flat_ratio": (
            round(statistics.median(last) / statistics.median(second), 3)
            if second and last
            else None
        ),
        "spread_ratio": round(max(memory) / min(memory), 3) if memory else None,
        "append_us": round(sum(timings) / len(timings) * 1e6, 1),
        "appends_per_game": round(len(timings) / max(1, done), 1),
    }
    await client.aclose()
    await backend.aclose()
    return result


async def drain(
    args: argparse.Namespace, redis_url: str, archive_url: str, made: list[Game]
) -> dict[str, float]:
    """The archiver alone: ``--drain`` games written while it waits, then moved by its passes;
    its CPU (this process's, the writing excluded) and rate."""
    settings = Settings(
        redis_url=redis_url,
        prefix=f"bench-{uuid.uuid4().hex[:8]}",
        archive_url=archive_url,
        archive_grace_seconds=0,
        archive_batch=500,
    )
    backend = open_backend(settings.store_config())
    assert backend.archive is not None
    archiver = Archiver(backend, backend.archive, settings, ServiceMetrics())
    pending = iter(range(args.drain))

    async def player() -> None:
        for i in pending:
            await play(backend, made[i % len(made)], archiver, [])

    await asyncio.gather(*(player() for _ in range(args.concurrency)))
    cpu, start, moved = time.process_time(), time.monotonic(), 0
    while moved < args.drain:
        moved += await archiver.pass_once()
    cpu, wall = time.process_time() - cpu, time.monotonic() - start
    await backend.aclose()
    return {
        "archiving_cpu_ms_per_game": round(cpu * 1000 / moved, 3),
        "archiving_games_per_s": round(moved / wall, 1),
    }


async def archive_size(url: str) -> dict[str, int]:
    connection = await asyncpg.connect(url)
    try:
        row = await connection.fetchrow(
            "SELECT (SELECT count(*) FROM games) AS games,"
            " (SELECT count(*) FROM game_players) AS player_rows,"
            " (SELECT coalesce(sum(length(log)), 0) FROM games) AS log_bytes,"
            " pg_total_relation_size('games') + pg_total_relation_size('game_players') AS bytes"
        )
    finally:
        await connection.close()
    return dict(row)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    made = games(args.distinct, args.seed)
    with tempfile.TemporaryDirectory(prefix="archive-bench-") as tmp:
        redis_dir, pg_dir = Path(tmp) / "redis", tempfile.mkdtemp(prefix="archive-bench-pg-")
        try:
            with EmbeddedRedis(redis_dir) as redis_server, EmbeddedPostgres(pg_dir) as postgres:
                without = await run(args, redis_server.url, None, made)
                with_archive = await run(args, redis_server.url, postgres.url, made, args.rate)
                size = await archive_size(postgres.url)
                drained = await drain(args, redis_server.url, postgres.url, made)
        finally:
            shutil.rmtree(pg_dir, ignore_errors=True)  # nobody's, when run as root
    games_kept = max(1, size["games"])
    return {
        "games": args.games,
        "events_per_game": round(sum(g.events for g in made) / len(made), 1),
        "grace_seconds": args.grace,
        "without_archive": without,
        "with_archive": with_archive,
        "used_memory_growth_without": without["final_used_memory"]
        - without["baseline_used_memory"],
        "used_memory_growth_with": with_archive["final_used_memory"]
        - with_archive["baseline_used_memory"],
        "used_memory_drained_with": with_archive["drained_used_memory"],
        "rate_with": with_archive["games_per_s"],
        "flat_ratio": with_archive["flat_ratio"],
        "spread_ratio": with_archive["spread_ratio"],
        "archive_games": size["games"],
        "archive_rows_per_game": round((size["games"] + size["player_rows"]) / games_kept, 2),
        "archive_log_bytes_per_game": round(size["log_bytes"] / games_kept, 1),
        "archive_bytes_per_game": round(size["bytes"] / games_kept, 1),
        "append_us_without": without["append_us"],
        "append_us_with": with_archive["append_us"],
        **drained,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--distinct", type=int, default=40, help="random games written again")
    parser.add_argument("--grace", type=float, default=5.0, help="seconds after a game's end")
    parser.add_argument(
        "--rate", type=float, default=40.0, help="games ending a second, with the archive"
    )
    parser.add_argument("--sample-every", type=int, default=500, help="games between samples")
    parser.add_argument("--drain", type=int, default=1000, help="games the archiver drains")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    report = asyncio.run(main_async(args))
    summary = {k: v for k, v in report.items() if k not in ("without_archive", "with_archive")}
    print(json.dumps(summary, indent=2))
    for name in ("without_archive", "with_archive"):
        print(name, [(s["games"], s["used_memory"] // 1024) for s in report[name]["samples"]])
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
