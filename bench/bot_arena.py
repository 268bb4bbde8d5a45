"""The computer's strength, measured: a round robin of random, greedy, easy, normal and hard.

Every pair plays ``--games`` games on each side (Olympians and Chthonians), from the bots' own
setups, with fixed iteration budgets (no time cap), so the results do not depend on the
machine's speed. Prints win/draw/loss per pair and side with 95% (Wilson) intervals, an Elo
table fit by maximum likelihood (Bradley-Terry, a draw counts half a win to each; random
anchored at 0), and the decisions per second of each player on this machine (process CPU).
Games run in ``--processes`` worker processes (default: the cores). A game still going after
``--max-commands`` commands counts as a draw ("cut").

    .venv/bin/python bench/bot_arena.py [--games 20] [--players random,greedy,easy,normal,hard]
        [--seed 1] [--processes 2] [--json FILE]
    .venv/bin/python bench/bot_arena.py --merge FILE... [--json FILE]

    .venv/bin/python bench/bot_arena.py --until 0.05 --pieces DIR [--each-side] [--games 3]
        [--json FILE]

``--pairs a-b,...`` plays those pairs, of any players: the yardsticks outside the search's
family (``sensible``, ``safe``: ``olympus.bot.yardsticks``), a level of an earlier commit
(``hard@REV``: ``bench/baseline_bot.py``), or a player against itself (``hard-hard``: then its
two sides' rows are the Olympians' and the Chthonians' win rates over the same games, the
sides' own advantage between equal players; Elo leaves such pairs out).

``--merge`` adds up the reports of several runs (their ``--json`` files: runs on other seeds,
so other games) into one report, as if one run had played them all. ``--until W --pieces DIR``
plays until every pair's 95% interval (both sides; with ``--each-side`` each side's too) is
within ±W: runs of ``--games`` per side,
each for the pair whose interval is widest in the reports in DIR (merged), each saved in DIR as
it ends. So a long arena runs in pieces, may be stopped and started again (on another day, with
the reports of other runs added to DIR), and spends its games where the interval is widest.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import multiprocessing
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from olympus.arena import play_match
from olympus.bot import make_player
from olympus.rules import Faction, Options

PLAYERS = ("random", "greedy", "easy", "normal", "hard")
# Players outside the search's family (olympus.bot.yardsticks), and a level of an earlier
# commit (``hard@f83e8bd``: bench/baseline_bot.py), playable by name in --players.
OTHERS = ("safe", "sensible")
SIDES = (Faction.OLYMPIANS, Faction.CHTHONIANS)
COUNTED = ("win", "draw", "loss", "cut")  # a player's games on a side, in a report


def player(name: str, seat: Faction, seed: int) -> Any:
    """A player by name, untimed: ``level@rev`` is a level of the bot at git revision ``rev``."""
    if "@" in name:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from baseline_bot import make_baseline  # bench/, beside this file

        kind, rev = name.split("@")
        return make_baseline(kind, seat, seed, rev)
    return make_player(name, seat, seed, timed=False)


def play_one(task: tuple[str, str, int, int]) -> dict:
    """One game: ``first`` as the Olympians against ``second`` as the Chthonians."""
    first, second, seed, max_commands = task
    players = {  # fixed budgets: the iterations, never the clock
        Faction.OLYMPIANS: player(first, Faction.OLYMPIANS, seed * 2 + 1),
        Faction.CHTHONIANS: player(second, Faction.CHTHONIANS, seed * 2 + 2),
    }
    started = time.process_time()
    result = play_match(players, Options(), seed=seed, max_commands=max_commands)
    return {
        "olympians": first,
        "chthonians": second,
        "seed": seed,
        "result": result.result,
        "commands": result.commands,
        "cpu_seconds": time.process_time() - started,
        "seats": {
            f.value: {"decisions": r.decisions, "seconds": r.seconds}
            for f, r in result.seats.items()
        },
    }


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def elo(names: list[str], scores: dict[tuple[str, str], list[float]]) -> dict[str, float]:
    """Maximum-likelihood Bradley-Terry strengths (minorization-maximization), as Elo points.
    ``scores[(a, b)]`` holds a's score in each game against b (1, 0.5, 0). A virtual draw
    per pair keeps a player that never scored finite."""
    wins: dict[str, float] = defaultdict(float)
    games: dict[tuple[str, str], float] = defaultdict(float)
    for (a, b), results in scores.items():
        if a == b:  # a player against itself tells the sides apart, not the players
            continue
        wins[a] += sum(results) + 0.5
        wins[b] += len(results) - sum(results) + 0.5
        games[(a, b)] += len(results) + 1
        games[(b, a)] += len(results) + 1
    strength = dict.fromkeys(names, 1.0)
    for _ in range(2000):
        new = {}
        for a in names:
            denominator = sum(
                games[(a, b)] / (strength[a] + strength[b]) for b in names if (a, b) in games
            )
            new[a] = wins[a] / denominator if denominator else strength[a]
        norm = new[names[0]]
        strength = {a: s / norm for a, s in new.items()}
    return {a: 400 * math.log10(s) for a, s in strength.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=20, help="games per pair and side")
    parser.add_argument("--players", default=",".join(PLAYERS))
    parser.add_argument(
        "--pairs",
        default=None,
        help="these pairs (of any players): hard-random,hard-hard,... (default: all of --players)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--processes", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--max-commands", type=int, default=600)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--merge", type=Path, nargs="+", default=None, metavar="FILE")
    parser.add_argument("--pieces", type=Path, default=None, metavar="DIR")
    parser.add_argument("--until", type=float, default=None, metavar="HALF_WIDTH")
    parser.add_argument(
        "--each-side",
        action="store_true",
        help="with --until: each side's interval within it too (targets set per side)",
    )
    args = parser.parse_args(argv)
    if args.merge:
        report = merge([json.loads(path.read_text()) for path in args.merge])
    else:
        names = args.players.split(",")
        pairs = list(itertools.combinations(names, 2))
        if args.pairs:  # as given: a player against itself too (the sides' own advantage)
            pairs = [tuple(p.split("-", 1)) for p in args.pairs.split(",")]  # type: ignore[misc]
            names = list(dict.fromkeys(n for p in pairs for n in p))
        if args.until is not None:
            if args.pieces is None:
                parser.error("--until needs --pieces")
            report = play_until(args, names, pairs)
        else:
            report = play(args, names, pairs, args.seed)
    print_report(report)
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


def play(
    args: argparse.Namespace, names: list[str], pairs: list[tuple[str, str]], seed: int
) -> dict:
    """A run: ``args.games`` games of each pair on each side, on seeds drawn from ``seed``."""
    tasks = []
    for a, b in pairs:
        for _ in range(args.games):
            game_seed = seed * 1_000_003 + len(tasks)
            tasks.append((a, b, game_seed, args.max_commands))
            tasks.append((b, a, game_seed + 1, args.max_commands))
    started = time.monotonic()
    with multiprocessing.Pool(args.processes) as pool:
        games = []
        for done, game in enumerate(pool.imap_unordered(play_one, tasks), 1):
            games.append(game)
            print(f"\r{done}/{len(tasks)} games", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return summarize(names, pairs, games, time.monotonic() - started)


def play_until(args: argparse.Namespace, names: list[str], pairs: list[tuple[str, str]]) -> dict:
    """Runs of the pair whose interval is widest until each is within ``args.until``; each
    run's report saved in ``args.pieces`` (run ``k`` of ``--seed s``: seed ``s·100000 + k``,
    so that no two runs play the same games). Returns the merged report of the pieces."""
    pieces: Path = args.pieces
    pieces.mkdir(parents=True, exist_ok=True)
    k = 0
    while True:
        files = sorted(pieces.glob("*.json"))
        merged = merge([json.loads(f.read_text()) for f in files]) if files else None
        half, pair = widest(merged, pairs, args.each_side)
        if half <= args.until:
            assert merged is not None
            return merged
        while (path := pieces / f"run-{args.seed}-{k:05}.json").exists():
            k += 1
        print(f"{pair[0]}-{pair[1]}: ±{100 * half:.1f}%", file=sys.stderr)
        report = play(args, names, [pair], args.seed * 100_000 + k)
        path.write_text(json.dumps(report, indent=2) + "\n")


def widest(
    report: dict | None, pairs: list[tuple[str, str]], each_side: bool = False
) -> tuple[float, tuple[str, str]]:
    """The pair whose win interval (over both sides; with ``each_side`` the widest of that and
    each side's) is widest in ``report``, and its half width (0.5 for a pair not played yet).
    A player against itself counts its sides' intervals only (its both-sides row is 50 %)."""
    rows = {frozenset((r["player"], r["opponent"])): r for r in (report or {}).get("pairs", [])}

    def half(pair: tuple[str, str]) -> float:
        row = rows.get(frozenset(pair))
        if row is None:
            return 0.5
        sides = list(row["sides"].values())
        if pair[0] == pair[1]:
            return max(map(width, sides))
        return max(map(width, [row, *sides] if each_side else [row]))

    def width(counted: dict) -> float:
        low, high = counted["win_interval"]
        return float(high - low) / 2

    return max((half(p), p) for p in pairs)


def score_of(game: dict, player: str, side: str) -> float:
    if game["result"] == side:
        return 1.0
    if game["result"] in ("draw", "unfinished"):
        return 0.5
    return 0.0


def summarize(
    names: list[str], played: list[tuple[str, str]], games: list[dict], wall: float
) -> dict:
    counts: dict[tuple[str, str, str], dict[str, int]] = {}
    for a, b in played:
        for side in SIDES:
            other = side.enemy.value
            tally = counts[(a, b, side.value)] = dict.fromkeys(COUNTED, 0)
            for g in games:
                if g[side.value] == a and g[other] == b:
                    s = score_of(g, a, side.value)
                    tally["win" if s == 1 else "draw" if s == 0.5 else "loss"] += 1
                    tally["cut"] += g["result"] == "unfinished"
    seats: dict[str, tuple[float, float]] = {}
    for name in names:
        decisions = seconds = 0.0
        for g in games:
            for side in SIDES:
                if g[side.value] == name:
                    decisions += g["seats"][side.value]["decisions"]
                    seconds += g["seats"][side.value]["seconds"]
        seats[name] = (decisions, seconds)
    return report_of(names, played, counts, seats, len(games), wall)


def report_of(
    names: list[str],
    played: list[tuple[str, str]],
    counts: dict[tuple[str, str, str], dict[str, int]],
    seats: dict[str, tuple[float, float]],
    games: int,
    wall: float,
) -> dict:
    """The report of games counted per pair and side (``counts[(player, opponent, side)]``:
    the player's wins, draws, losses and cut games on that side) and the players' decisions
    and CPU seconds (``seats``)."""
    pairs = []
    scores: dict[tuple[str, str], list[float]] = defaultdict(list)
    for a, b in played:
        row: dict = {"player": a, "opponent": b, "sides": {}}
        total = {"win": 0, "draw": 0, "loss": 0}
        for side in SIDES:
            c = dict(counts[(a, b, side.value)])
            scores[(a, b)] += [1.0] * c["win"] + [0.5] * c["draw"] + [0.0] * c["loss"]
            n = c["win"] + c["draw"] + c["loss"]
            c["games"] = n
            c["win_rate"] = c["win"] / n if n else None
            c["win_interval"] = wilson(c["win"], n)
            row["sides"][side.value] = c
            for k in total:
                total[k] += c[k]
        n = sum(total.values())
        row.update(total, games=n, win_rate=total["win"] / n if n else None)
        row["win_interval"] = wilson(total["win"], n)
        pairs.append(row)
    speed = {
        name: {
            "decisions": int(decisions),
            "seconds": round(seconds, 2),
            "decisions_per_s": round(decisions / seconds, 1) if seconds else None,
        }
        for name, (decisions, seconds) in seats.items()
    }
    return {
        "games": games,
        "wall_seconds": round(wall, 1),
        "pairs": pairs,
        "elo": {k: round(v) for k, v in elo(names, scores).items()},
        "speed": speed,
    }


def merge(reports: list[dict]) -> dict:
    """One report of the games of several (``report_of`` of their counts added up)."""
    names: list[str] = []
    played: list[tuple[str, str]] = []
    counts: dict[tuple[str, str, str], dict[str, int]] = {}
    seats: dict[str, tuple[float, float]] = {}
    for report in reports:
        for name, s in report["speed"].items():
            if name not in names:
                names.append(name)
            decisions, seconds = seats.get(name, (0.0, 0.0))
            seats[name] = (decisions + s["decisions"], seconds + s["seconds"])
        for row in report["pairs"]:
            pair = (row["player"], row["opponent"])
            if pair not in played:
                played.append(pair)
            for side, c in row["sides"].items():
                tally = counts.setdefault((*pair, side), dict.fromkeys(COUNTED, 0))
                for k in COUNTED:
                    tally[k] += c[k]
    order = (*PLAYERS, *OTHERS)
    names.sort(key=lambda n: order.index(n) if n in order else len(order))
    games = sum(r["games"] for r in reports)
    return report_of(names, played, counts, seats, games, sum(r["wall_seconds"] for r in reports))


def print_report(report: dict) -> None:
    print(f"{report['games']} games in {report['wall_seconds']} s")
    print(f"{'player':8} {'opponent':8} {'side':11} {'W':>4} {'D':>4} {'L':>4}  win% [95%]")
    for row in report["pairs"]:
        for side, c in [*row["sides"].items(), ("both", row)]:
            low, high = c["win_interval"]
            rate = 100 * (c["win_rate"] or 0)
            print(
                f"{row['player']:8} {row['opponent']:8} {side:11} {c['win']:4} {c['draw']:4}"
                f" {c['loss']:4}  {rate:5.1f} [{100 * low:.0f}-{100 * high:.0f}]"
            )
    print("Elo (maximum likelihood, random = 0):")
    for name, rating in sorted(report["elo"].items(), key=lambda kv: -kv[1]):
        print(f"  {name:8} {rating:6}")
    print("decisions per second (this machine, while the arena ran):")
    for name, s in report["speed"].items():
        print(f"  {name:8} {s['decisions_per_s']}")


if __name__ == "__main__":
    raise SystemExit(main())
