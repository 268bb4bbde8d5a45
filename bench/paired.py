"""Two configurations of the command path timed side by side: which one costs less a command.

On this box the same build's timings swing by a quarter from one minute to the next
(docs/performance.md, "The machine, and measuring on it"), so two configurations run one
after the other compare the box's moods more than themselves. Here ``command_path_bench.py``
runs twice at
once, one process per configuration, each with its own embedded Redis and the same seed (the
same games), in each of ``--rounds`` rounds, the two taking turns to be started first: both
see the same swings. A configuration is a set of environment assignments for its process:
``PYTHONPATH=/tmp/old/service`` runs another checkout's build (its compiled core if current,
as ``lockstep.py`` does), ``PYTHONMALLOC=malloc`` another allocator. Reported: each round's
figures of both, and the median over the rounds of B's figure divided by A's, for the
service's own work per command and the ``legal`` frames.

What it resolves: the same configuration against itself gave medians of 0.97 to 1.06 over
four rounds, so a difference of less than about 5 % is not shown by one run.

    .venv/bin/python bench/paired.py --b "PYTHONMALLOC=malloc" [--a ""] [--rounds 3]
        [--rooms 500] [--commands 5000] [--runs 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FIGURES = ("service_ms_per_command", "legal_frames_us_per_command")


def assignments(text: str) -> dict[str, str]:
    """``KEY=VALUE KEY=VALUE`` as a dict; an empty text is no change."""
    pairs = {}
    for item in text.split():
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"paired: {item!r} is not KEY=VALUE")
        pairs[key] = value
    return pairs


def round_of(
    configurations: list[dict[str, str]], bench: list[str], work: Path
) -> list[dict[str, Any]]:
    """Both configurations' ``command_path_bench.py`` at once; their reports, in order."""
    outs = [work / f"{n}.json" for n in range(len(configurations))]
    running = [
        subprocess.Popen(
            [sys.executable, str(HERE / "command_path_bench.py"), *bench, "--json", str(out)],
            env={**os.environ, **configuration},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for configuration, out in zip(configurations, outs, strict=True)
    ]
    for process in running:
        _, errors = process.communicate()
        if process.returncode != 0:
            raise SystemExit(f"paired: command_path_bench.py failed:\n{errors[-3000:]}")
    return [json.loads(out.read_text()) for out in outs]


def _figures(report: dict[str, Any]) -> dict[str, Any]:
    """A round's figures of one configuration, and which build it ran (compiled or not)."""
    return {"compiled": report["compiled"], **{f: report[f] for f in FIGURES}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", default="", help="configuration A: KEY=VALUE … (default: none)")
    parser.add_argument("--b", default="", help="configuration B: KEY=VALUE …")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rooms", type=int, default=500)
    parser.add_argument("--commands", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=3, help="each process' best of (3)")
    parser.add_argument("--json", type=Path, default=None, help="also write the report here")
    args = parser.parse_args()
    configurations = [assignments(args.a), assignments(args.b)]
    bench = ["--rooms", str(args.rooms), "--commands", str(args.commands)]
    bench += ["--runs", str(args.runs)]
    rounds = []
    with tempfile.TemporaryDirectory(prefix="olympus-paired-") as work:
        for n in range(args.rounds):
            if n % 2 == 0:
                a, b = round_of(configurations, bench, Path(work))
            else:
                b, a = round_of(configurations[::-1], bench, Path(work))
            rounds.append({"a": _figures(a), "b": _figures(b)})
            print(f"round {n + 1}: " + "; ".join(f"{f} {a[f]} → {b[f]}" for f in FIGURES))
    report = {
        "a": args.a,
        "b": args.b,
        "rounds": rounds,
        **{
            f"{f}_ratio": round(statistics.median(r["b"][f] / r["a"][f] for r in rounds), 3)
            for f in FIGURES
        },
    }
    print(json.dumps({k: v for k, v in report.items() if k != "rounds"}, indent=2))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
