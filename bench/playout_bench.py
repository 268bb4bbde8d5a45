"""Playouts: whole random legal games from a random setup, on one core, as a search bot plays
them thousands of times per decision.

Each game is created in a random variant (Open Combat, Random Setup and the Challenge drawn as
in ``rules_bench.py``), set up at random (``olympus.bots.setup_commands``), then played to its
end by ``random_legal_action`` for the seat to act (in combat, the seats that have not
committed, in random order) and ``execute``. A game still going after ``--max-commands``
commands is cut off and counted apart.

    .venv/bin/python bench/playout_bench.py [--games 300] [--seed 1] [--json FILE]
    .venv/bin/python bench/playout_bench.py --policy legal_actions   # drawing from the list

Prints games/s and positions/s (a position: one command decided and executed) in process CPU
time, so that other jobs on a shared machine count less; ``--json`` writes the headline keys
``games_per_s`` and ``positions_per_s`` (bench/README.md).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

from olympus.bots import setup_commands
from olympus.rules import (
    Faction,
    GameState,
    LegalAction,
    Options,
    Phase,
    create,
    execute,
    legal_actions,
    random_legal_action,
    replay,
)

Draw = Callable[[GameState, Faction, random.Random], LegalAction | None]

TARGET_GAMES_PER_S = 200.0


def listed_action(state: GameState, seat: Faction, rng: random.Random) -> LegalAction | None:
    """The same draw from the whole list: what a playout cost before ``random_legal_action``."""
    actions = legal_actions(state, seat)
    return rng.choice(actions) if actions else None


POLICIES = {"random_legal_action": random_legal_action, "legal_actions": listed_action}


def playout(
    rng: random.Random, options: Options, max_commands: int, draw: Draw = random_legal_action
) -> tuple[GameState, int]:
    """One whole game: its final state and the number of positions played after the setup."""
    state = replay(create(options, token_seed=rng.randrange(2**63)))
    for command in setup_commands(rng, options):
        state = execute(state, command)[1]
    seats = list(Faction)
    played = 0
    while state.phase is not Phase.OVER and played < max_commands:
        rng.shuffle(seats)
        for seat in seats:
            action = draw(state, seat, rng)
            if action is not None:
                break
        else:
            raise AssertionError(f"no seat can act at version {state.version}")
        state = execute(state, action.command)[1]
        played += 1
    return state, played


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-commands", type=int, default=2000, help="cut a game off (2000)")
    parser.add_argument(
        "--policy",
        choices=sorted(POLICIES),
        default="random_legal_action",
        help="how a seat's action is drawn: without listing every move (default), or from\n"
        "the whole legal_actions list (the way before it, for comparison)",
    )
    parser.add_argument("--json", default=None, metavar="FILE", help="write the figures here")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    positions = finished = cut = 0
    results: dict[str, int] = {}
    start = time.process_time()
    for _ in range(args.games):
        options = Options(rng.random() < 0.5, rng.random() < 0.5, rng.randint(-5, 5))
        state, played = playout(rng, options, args.max_commands, POLICIES[args.policy])
        positions += played
        if state.phase is Phase.OVER:
            finished += 1
            results[str(state.result)] = results.get(str(state.result), 0) + 1
        else:
            cut += 1
    seconds = time.process_time() - start
    report = {
        "games_per_s": round(args.games / seconds, 1),
        "positions_per_s": round(positions / seconds),
        "policy": args.policy,
        "games": args.games,
        "finished": finished,
        "cut_off": cut,
        "positions_per_game": round(positions / args.games, 1),
        "results": results,
        "cpu_seconds": round(seconds, 2),
        "python": sys.version.split()[0],
    }
    print(json.dumps(report, indent=2))
    verdict = "met" if report["games_per_s"] >= TARGET_GAMES_PER_S else "MISSED"
    print(f"target ≥ {TARGET_GAMES_PER_S:.0f} games/s: {verdict}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
