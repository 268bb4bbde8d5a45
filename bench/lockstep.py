"""Two or more builds of the rules timed in lockstep: which one lists turn positions faster.

On a shared box one build's timings swing between levels from one minute to the next
(docs/performance.md, "The machine, and measuring on it"), so two builds timed one after
the other compare the box's moods more than the builds. Here each build runs in its own
process, started with
``PYTHONPATH`` at its checkout's ``service`` directory (its compiled core, if current, is
used as ``olympus serve`` would use it). Every process records the same turn positions
(``legal_instructions.playout_positions``: the same seed plays the same games as long as the
lists are the same). Then the processes take turns: in each round every build lists every
position once on fresh copies (``legal_instructions.fresh``: as a service's first listing of
each), in thread CPU time, in an order that alternates from round to round, so that all
builds see the same swings. The figure is the median over the rounds of each build's time
divided by the first build's.

    .venv/bin/python bench/lockstep.py /tmp/old/service service [--games 30] [--rounds 60]
        [--seed 11] [--phase turn|combat] [--json FILE]

``--phase combat`` times the playouts' combat positions instead (a seat to commit).

A checkout of another commit: ``git worktree add /tmp/old <commit>``, then build its core
there (``make native`` in it), or copy a built ``service/build/native/core`` whose
``DIGEST`` matches that checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from legal_instructions import fresh, list_all, playout_positions, print_report

from olympus.rules import COMPILED

HERE = Path(__file__).resolve().parent


def worker(games: int, seed: int, phase: str) -> None:
    """One build's side: record the positions, then list them all once per line read. (Its
    ``olympus`` is the build's: ``PYTHONPATH`` comes before the installed package.)"""
    positions = playout_positions(games, seed, phase)
    print(json.dumps({"compiled": COMPILED, "positions": len(positions)}), flush=True)
    for _ in sys.stdin:
        copies = fresh(positions)
        start = time.thread_time_ns()
        actions = list_all(copies)
        print(json.dumps({"ns": time.thread_time_ns() - start, "actions": actions}), flush=True)


class Build:
    """A worker process for the build whose ``olympus`` package is under ``service``."""

    def __init__(self, service: str, games: int, seed: int, phase: str) -> None:
        self.service = service
        path = os.pathsep.join([str(Path(service).resolve()), str(HERE)])
        self.process = subprocess.Popen(
            [
                *(sys.executable, __file__, "--worker", "--games", str(games)),
                *("--seed", str(seed), "--phase", phase),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": path},
        )
        self.ready = self._read()
        self.times: list[int] = []
        self.actions = -1

    def _read(self) -> dict[str, int]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"lockstep: the worker of {self.service} ended early")
        reply: dict[str, int] = json.loads(line)
        return reply

    def round(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("\n")
        self.process.stdin.flush()
        reply = self._read()
        self.times.append(reply["ns"])
        self.actions = reply["actions"]

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("services", nargs="*", help="each build's service directory")
    parser.add_argument("--games", type=int, default=30, help="seeded random games (30)")
    parser.add_argument("--rounds", type=int, default=60, help="turns of every build (60)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--phase", choices=("turn", "combat"), default="turn")
    parser.add_argument("--json", default=None, metavar="FILE", help="write the figures here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args.games, args.seed, args.phase)
        return 0
    if len(args.services) < 2:
        parser.error("name at least two builds' service directories")
    builds = [Build(service, args.games, args.seed, args.phase) for service in args.services]
    try:
        if len({b.ready["positions"] for b in builds}) != 1:
            raise SystemExit("lockstep: the builds played different games: not comparable")
        for n in range(args.rounds):
            for build in builds if n % 2 == 0 else builds[::-1]:
                build.round()
    finally:
        for build in builds:
            build.close()
    if len({b.actions for b in builds}) != 1:
        raise SystemExit("lockstep: the builds listed different actions: not comparable")
    positions = builds[0].ready["positions"]
    first = builds[0].times
    report = {
        f"{args.phase}_positions": positions,
        "actions": builds[0].actions,
        "rounds": args.rounds,
        "builds": [
            {
                "service": b.service,
                "compiled": bool(b.ready["compiled"]),
                f"legal_{args.phase}_median_us": round(
                    statistics.median(b.times) / positions / 1000, 2
                ),
                "ratio_median": round(
                    statistics.median(t / f for t, f in zip(b.times, first, strict=True)), 3
                ),
            }
            for b in builds
        ],
    }
    print_report(report, args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
