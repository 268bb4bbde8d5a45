"""Rules engine benchmark: the cost of one command, and how fast a game is rebuilt from its log.

Why these two figures: every command a seat sends costs one ``execute`` (decide + evolve) on the
hot path of the service, and every game loaded from the store (reconnects, restarts, spectators)
costs a ``replay`` of its events. The positions are real ones, taken from random legal games
(``olympus.bots``), not hand-picked.

    .venv/bin/python bench/rules_bench.py            # defaults: 200 games, 7 replay runs
    .venv/bin/python bench/rules_bench.py --profile  # plus the top functions under cProfile

Targets on the 2-core dev machine: median execute < 50 µs, replay > 100,000 events/s.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import os
import platform
import pstats
import random
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from olympus.bots import play_random_game
from olympus.rules import (
    COMPILED,
    Command,
    Event,
    Faction,
    GameState,
    Options,
    decode,
    encode,
    execute,
    legal_actions,
    replay,
)
from olympus.server.settings import Settings

TARGET_EXECUTE_MEDIAN_US = 50.0
TARGET_REPLAY_EVENTS_PER_S = 100_000.0
TARGET_LEGAL_MEAN_US = {"turn": 40.0, "combat": 10.0}  # for the seat to act


@dataclass
class Game:
    events: list[Event]
    pairs: list[tuple[GameState, Command]]  # the state each command was executed in


def play_games(count: int, seed: int, max_commands: int) -> list[Game]:
    """Random legal games in every variant, with the state before each of their commands."""
    rng = random.Random(seed)
    games = []
    for _ in range(count):
        options = Options(rng.random() < 0.5, rng.random() < 0.5, rng.randint(-5, 5))
        events, final, commands = play_random_game(rng, options, max_commands)
        state, pairs = replay(events[:1]), []
        for command in commands:  # re-execute to recover the state before each command
            pairs.append((state, command))
            state = execute(state, command)[1]
        assert state == final, "re-executing the commands must give the same game"
        games.append(Game(events, pairs))
    return games


def percentile(sorted_values: list[float], fraction: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(fraction * len(sorted_values)))]


def time_each(calls: list[Callable[[], object]], repeat: int) -> list[float]:
    """Per call, the best of ``repeat`` timings in µs: the cost without scheduler noise. The
    clock is this thread's CPU time: a call during which the box ran something else is not
    charged the other job's time slice (with one run per call, as for ``legal_actions``, a
    wall clock on a busy 2-core box turned a 40 µs median into a 110 µs mean)."""
    timings = []
    clock = time.thread_time_ns
    for call in calls:
        best = None
        for _ in range(repeat):
            start = clock()
            call()
            elapsed = clock() - start
            best = elapsed if best is None or elapsed < best else best
        timings.append(best / 1000)
    return timings


def summary(name: str, timings: list[float]) -> str:
    ordered = sorted(timings)
    median, p95 = statistics.median(ordered), percentile(ordered, 0.95)
    return (
        f"{name:<28} {len(ordered):>7} {median:>10.1f} {p95:>10.1f} "
        f"{statistics.fmean(ordered):>10.1f}"
    )


def best_rate(run: Callable[[], None], events: int, runs: int) -> float:
    best = min(_timed(run) for _ in range(runs))
    return events / best


def _timed(run: Callable[[], None]) -> float:
    """CPU seconds of this process: other jobs on a shared 2-core box do not count."""
    start = time.process_time()
    run()
    return time.process_time() - start


def bench_execute(games: list[Game], repeat: int) -> dict[str, float]:
    """Prints the table; returns the headline figures (``--json``)."""
    pairs = [pair for game in games for pair in game.pairs]
    by_type: dict[str, list[tuple[GameState, Command]]] = defaultdict(list)
    for state, command in pairs:
        by_type[command.type].append((state, command))
    print(f"\n(a) execute(state, command): decide + evolve, µs per command (best of {repeat})")
    print(f"{'command':<28} {'count':>7} {'median':>10} {'p95':>10} {'mean':>10}")
    timings = time_each([lambda s=s, c=c: execute(s, c) for s, c in pairs], repeat)
    print(summary("all commands", timings))
    for kind in sorted(by_type, key=lambda k: -len(by_type[k])):
        calls = [lambda s=s, c=c: execute(s, c) for s, c in by_type[kind]]
        print(summary(f"  {kind}", time_each(calls, repeat)))
    states = [s for s, c in pairs if c.type not in ("submit_setup", "draw_random_setup")]
    calls = [lambda s=s: [legal_actions(s, f) for f in Faction] for s in states]
    print(summary("legal_actions (both seats)", time_each(calls, 1)))
    # Per phase, for each seat with something to do (the server's call after every command),
    # on copies of the states: the occupancy index a state builds on first use is not shared.
    by_phase: dict[str, list[Callable[[], object]]] = defaultdict(list)
    for state in states:
        phase = "pending" if state.pending else state.phase.value
        for f in Faction:
            if legal_actions(state, f):
                fresh = replace(state)  # without its index (``evolved`` would carry it)
                by_phase[phase].append(lambda s=fresh, f=f: legal_actions(s, f))
    means: dict[str, float] = {}
    for phase in sorted(by_phase, key=lambda p: -len(by_phase[p])):
        phase_timings = time_each(by_phase[phase], 1)
        means[phase] = statistics.fmean(phase_timings)
        print(summary(f"  {phase} (seat to act)", phase_timings))
    median = statistics.median(timings)
    verdict = "met" if median < TARGET_EXECUTE_MEDIAN_US else "MISSED"
    print(f"target median < {TARGET_EXECUTE_MEDIAN_US:.0f} µs: {verdict} ({median:.1f} µs)")
    for phase, target in TARGET_LEGAL_MEAN_US.items():
        verdict = "met" if means.get(phase, 0.0) <= target else "MISSED"
        print(f"target legal_actions {phase} mean ≤ {target:.0f} µs: {verdict}")
    return {
        "execute_median_us": round(median, 1),
        "legal_turn_mean_us": round(means.get("turn", 0.0), 1),
        "legal_combat_mean_us": round(means.get("combat", 0.0), 1),
        "legal_pending_mean_us": round(means.get("pending", 0.0), 1),
    }


def bench_replay(games: list[Game], runs: int) -> float:
    """Prints the table; returns replay's events per second."""
    logs = [game.events for game in games]
    raw = [[encode(e) for e in log] for log in logs]
    total = sum(len(log) for log in logs)

    def replay_all() -> None:
        for log in logs:
            replay(log)

    def decode_replay_all() -> None:
        for blobs in raw:
            replay(decode(b) for b in blobs)

    def encode_all() -> None:
        for log in logs:
            for e in log:
                encode(e)

    print(f"\n(b) rebuilding {len(logs)} games ({total} events), best of {runs} (CPU time)")
    print(f"{'what':<28} {'events/s':>12}")
    rate = best_rate(replay_all, total, runs)
    print(f"{'replay(events)':<28} {rate:>12,.0f}")
    print(f"{'decode + replay (msgpack)':<28} {best_rate(decode_replay_all, total, runs):>12,.0f}")
    print(f"{'encode (msgpack)':<28} {best_rate(encode_all, total, runs):>12,.0f}")
    verdict = "met" if rate > TARGET_REPLAY_EVENTS_PER_S else "MISSED"
    print(f"target replay > {TARGET_REPLAY_EVENTS_PER_S:,.0f} events/s: {verdict} ({rate:,.0f})")
    return rate


def profile(games: list[Game], top: int) -> None:
    """cProfile of executing every recorded command, replaying every log, and the bot's
    legal_actions calls: the functions an optimisation should start with."""
    pairs = [pair for game in games for pair in game.pairs]
    jobs: dict[str, Callable[[], object]] = {
        "execute": lambda: [execute(s, c) for s, c in pairs],
        "replay": lambda: [replay(g.events) for g in games],
        "legal_actions": lambda: [legal_actions(s, f) for s, _ in pairs[:300] for f in Faction],
    }
    for name, job in jobs.items():
        profiler = cProfile.Profile()
        profiler.runcall(job)
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(top)
        print(f"\n--- cProfile: {name} (sorted by own time) ---")
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:6000])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200, help="random games to play (200)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random games (1)")
    parser.add_argument("--max-commands", type=int, default=600, help="cap per game (600)")
    parser.add_argument("--repeat", type=int, default=5, help="timings per command, best (5)")
    parser.add_argument("--runs", type=int, default=7, help="replay runs, best (7)")
    parser.add_argument("--profile", action="store_true", help="print cProfile top functions")
    parser.add_argument("--top", type=int, default=15, help="functions per profile (15)")
    parser.add_argument("--json", default=None, metavar="FILE", help="write the figures here")
    parser.add_argument(
        "--gc",
        choices=("service", "default"),
        default="service",
        help="garbage collector as olympus serve runs it (frozen heap, its thresholds) or "
        "Python's defaults, whose full collections of the bench's own heap land in timed calls",
    )
    args = parser.parse_args()

    print(
        f"python {platform.python_version()} on {platform.machine()}, {_cpus()} CPUs, "
        f"rules {'compiled (mypyc)' if COMPILED else 'interpreted'}, gc {args.gc}"
    )
    start = time.perf_counter()
    games = play_games(args.games, args.seed, args.max_commands)
    commands = sum(len(g.pairs) for g in games)
    print(
        f"played {len(games)} random games, {commands} commands, "
        f"{sum(len(g.events) for g in games)} events in {time.perf_counter() - start:.1f} s"
    )
    if args.gc == "service":  # what serve.py does once it has loaded: the workload is loaded
        gc.collect()
        gc.freeze()
        gc.set_threshold(*Settings.gc_thresholds)
    figures = bench_execute(games, args.repeat)
    figures["replay_events_per_s"] = round(bench_replay(games, args.runs))
    if args.json:
        report = {
            **figures,
            "games": len(games),
            "commands": commands,
            "compiled": COMPILED,
            "gc": args.gc,
        }
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    if args.profile:
        profile(games, args.top)


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


if __name__ == "__main__":
    main()
