"""How long the computer thinks: process CPU per decision of each level, on this machine.

Each level plays ``--games`` games on each side against the sensible yardstick
(``olympus.bot.yardsticks``), with its iterations and no time cap (so the figures are the
iterations' cost, not the cap's). Every decision the search makes (more than one offer) is
timed alone; printed per level and kind (a turn, a sealed commitment, another choice): the
decisions, decisions per second, the mean, median, 95th percentile and largest CPU seconds.

    .venv/bin/python bench/bot_speed.py [--games 2] [--levels easy,normal,hard] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from olympus.arena import play_match
from olympus.bot import SeatBot, make_player
from olympus.bot.player import Message
from olympus.rules import Faction, Options

KINDS = {"commit": "commit", "remove_unit": "choice", "retreat": "choice", "stay": "choice"}


class Timed(SeatBot):
    """A level's bot that times each of its searched decisions (process CPU)."""

    def __init__(self, seat: Faction, level: str, seed: int, record: list) -> None:
        super().__init__(seat, level, seed)
        self.level = self.level.untimed()
        self.record = record

    def act(self, legal: Message, now_ms: int | None = None) -> Message:
        actions = legal.get("actions") or []
        started = time.process_time()
        wire = super().act(legal, now_ms)
        spent = time.process_time() - started
        if len(actions) > 1:
            kind = actions[0]["command"]["type"]
            self.record.append((KINDS.get(kind, "turn"), spent))
        return wire


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=2, help="games per level and side")
    parser.add_argument("--levels", default="easy,normal,hard")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    report: dict[str, Any] = {}
    for level in args.levels.split(","):
        record: list[tuple[str, float]] = []
        for game in range(args.games):
            for seat in Faction:
                seed = args.seed * 1000 + game * 2 + (seat is Faction.CHTHONIANS)
                players = {
                    seat: Timed(seat, level, seed, record),
                    seat.enemy: make_player("sensible", seat.enemy, seed),
                }
                play_match(players, Options(), seed=seed, max_commands=600)
        kinds: dict[str, list[float]] = defaultdict(list)
        for kind, spent in record:
            kinds[kind].append(spent)
            kinds["all"].append(spent)
        report[level] = {kind: _figures(times) for kind, times in sorted(kinds.items())}
    for level, kinds in report.items():
        for kind, f in kinds.items():
            print(
                f"{level:7} {kind:7} {f['decisions']:5} decisions {f['per_second']:7.2f}/s"
                f"  mean {f['mean']:.3f} s  median {f['median']:.3f}  p95 {f['p95']:.3f}"
                f"  max {f['max']:.3f}"
            )
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


def _figures(times: list[float]) -> dict[str, Any]:
    ordered = sorted(times)
    return {
        "decisions": len(times),
        "per_second": round(len(times) / sum(times), 2) if sum(times) else None,
        "mean": round(statistics.fmean(times), 4),
        "median": round(statistics.median(times), 4),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 4),
        "max": round(ordered[-1], 4),
    }


if __name__ == "__main__":
    raise SystemExit(main())
