"""The service's own work per command, without sockets; the ``legal`` frames timed apart.

``load_bench.py`` measures everything at once; this isolates the middle of it. One process
(this one) runs the real ``Services`` on a real Redis (embedded, ``appendfsync always``, as
``olympus serve`` runs it): rooms created and joined through the lobby, loaded through the
registry, each with three subscribers that only count frames: one per seat and a spectator, so
that each audience's frames are built as for real sockets. A bot then plays random legal games
through ``RoomRuntime.submit``, one command at a time, round-robin over the rooms, and lets the
event loop run the fan-out (the pub/sub hint of each append comes back) and the snapshotter
after each. ``submit`` ends with the seats' ``legal`` frames (``push_due``, after the caller's
``acknowledge``): the bench's ``acknowledge`` notes the thread's CPU time, and what ``submit``
takes after it is ``legal_frames_us_per_command``: listing and encoding the ``legal`` frame
each seat is owed.

The CPU of the process over the run, minus the bot's own choosing (``legal_actions`` for both
seats, timed apart) and the ``legal`` frames, divided by the commands, is what deciding,
appending (redis-py, the Lua script's arguments, the hash chain), folding, observing for three
audiences, numbering and queueing frames costs per command (``service_ms_per_command``). With
``ws_floor_bench.py`` (the sockets) it explains most of ``load_bench.py``'s CPU per command;
docs/performance.md ("Where one process's limit comes from") says what is left. Not included:
each socket's own handling (parsing the command, the ``ack``).

    .venv/bin/python bench/command_path_bench.py [--rooms 500] [--commands 5000] [--runs 3]
        [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

import uvloop

from olympus import bots
from olympus.rules import COMPILED
from olympus.server.in_process import FrameCounter, open_room
from olympus.server.room import RoomRuntime, Submitted
from olympus.server.services import Services
from olympus.server.settings import Settings
from olympus.store import EmbeddedRedis


async def run(
    redis_url: str, prefix: str, rooms: int, commands: int, seed: int
) -> dict[str, float]:
    services = Services(Settings(redis_url=redis_url, prefix=prefix))
    await services.start()
    try:
        rng = random.Random(seed)
        held: list[RoomRuntime] = []
        sockets: list[FrameCounter] = []
        for _ in range(rooms):
            room, counters = await open_room(services, rng)
            held.append(room)
            sockets += counters
        gc.collect()
        gc.freeze()
        gc.set_threshold(*Settings.gc_thresholds)
        choosing = framing = 0.0
        acknowledged = [0.0]

        async def acknowledge(result: Submitted) -> None:  # then ``submit`` pushes the frames
            acknowledged[0] = time.thread_time()

        played = 0
        frames0 = sum(s.frames for s in sockets)
        start = time.process_time()
        for k in range(commands):
            room = held[k % rooms]
            if room.over:
                continue
            before = time.process_time()
            action = bots.choose(rng, room.state)
            choosing += time.process_time() - before
            assert action is not None
            await room.submit(action.command, f"c{k}", acknowledge=acknowledge)
            framing += time.thread_time() - acknowledged[0]  # the seats' ``legal`` frames
            played += 1
            for _ in range(3):  # the fan-out task (our own hint), the snapshotter
                await asyncio.sleep(0)
        await asyncio.sleep(0.1)
        total = time.process_time() - start
        return {
            "commands": played,
            "frames_per_command": (sum(s.frames for s in sockets) - frames0) / played,
            "bot_ms_per_command": 1000 * choosing / played,
            "service_ms_per_command": 1000 * (total - choosing - framing) / played,
            "legal_frames_us_per_command": 1e6 * framing / played,
        }
    finally:
        await services.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=500)
    parser.add_argument("--commands", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3, help="best of (the machine's speed varies)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None, help="also write the report here")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="olympus-path-"))
    results = []
    try:
        with EmbeddedRedis(work / "redis", appendfsync="always") as redis:
            for n in range(args.runs):
                coroutine = run(redis.url, f"path{n}", args.rooms, args.commands, args.seed)
                results.append(uvloop.run(coroutine))
    finally:
        shutil.rmtree(work)
    best = min(results, key=lambda r: r["service_ms_per_command"])
    report = {
        "compiled": COMPILED,  # which build ran: mypyc's, or the interpreted source
        "rooms": args.rooms,
        "runs": [round(r["service_ms_per_command"], 3) for r in results],
        **{k: round(v, 3) for k, v in best.items()},
    }
    print(json.dumps(report, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
