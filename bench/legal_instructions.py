"""The turn positions of seeded random games (or their combat positions, ``--phase combat``),
each listed once by ``legal_actions``: a workload to count instructions of, under callgrind,
where timings on a shared box drift by a fifth.

    valgrind --tool=callgrind --toggle-collect=CPyPy_legal___legal_actions \\
        .venv/bin/python bench/legal_instructions.py --games 20

With the compiled rules, the toggle counts the calls this script makes (from Python) and no
other: the games are played by ``playout_bench.playout`` with ``random_legal_action``, whose
own calls stay inside compiled code. Each position is listed on a fresh copy
(``dataclasses.replace``: ``evolved`` carries the index along), so that its occupancy index is
built in the counted call, as ``rules_bench.py`` times it. The same
seed plays the same games as long as the lists are the same (``legal_equivalence.py`` checks
that), so two builds can be compared by their ``I refs``.

    .venv/bin/python bench/legal_instructions.py [--games 20] [--seed 11] [--phase turn|combat]
        [--json FILE]
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import sys
from dataclasses import replace

from playout_bench import playout

from olympus.rules import (
    COMPILED,
    Faction,
    GameState,
    LegalAction,
    Options,
    legal_actions,
    random_legal_action,
)


def playout_positions(
    games: int, seed: int, phase: str = "turn"
) -> list[tuple[GameState, Faction]]:
    """(state, seat to act) of every turn position (no combat, no pending choice) of ``games``
    playouts (``playout_bench.playout``); of every combat position (a seat to commit, no
    choice pending) for ``phase`` "combat"."""
    rng = random.Random(seed)
    positions: list[tuple[GameState, Faction]] = []
    in_combat = phase == "combat"

    def noted(state: GameState, seat: Faction, rng: random.Random) -> LegalAction | None:
        action = random_legal_action(state, seat, rng)
        if action is not None and (state.combat is not None) is in_combat and not state.pending:
            positions.append((state, seat))
        return action

    for _ in range(games):
        playout(rng, Options(rng.random() < 0.5, rng.random() < 0.5, 0), 2000, noted)
    return positions


def fresh(positions: list[tuple[GameState, Faction]]) -> list[tuple[GameState, Faction]]:
    """``positions`` on fresh copies, with R7's shuffles the games drew forgotten (remembered
    since 3b1416a): listing them then costs what a service's first listing of each does."""
    getattr(importlib.import_module("olympus.rules.decide"), "_SHUFFLES", {}).clear()
    return [(replace(state), seat) for state, seat in positions]


def list_all(positions: list[tuple[GameState, Faction]]) -> int:
    """``legal_actions`` of the seat to act in each position; how many actions in all."""
    return sum(len(legal_actions(state, seat)) for state, seat in positions)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--phase", choices=("turn", "combat"), default="turn")
    parser.add_argument("--json", default=None, metavar="FILE", help="write the counts here")
    args = parser.parse_args(argv)
    positions = playout_positions(args.games, args.seed, args.phase)
    actions = list_all(fresh(positions))  # the counted calls
    report = {
        f"{args.phase}_positions": len(positions),
        "actions": actions,
        "compiled": COMPILED,
        "python": sys.version.split()[0],
    }
    print_report(report, args.json)
    return 0


def print_report(report: dict[str, object], path: str | None) -> None:
    """``report`` printed, and written to ``path`` if one is given (``--json``)."""
    print(json.dumps(report, indent=2))
    if path:
        with open(path, "w") as out:
            json.dump(report, out, indent=2)


if __name__ == "__main__":
    raise SystemExit(main())
