"""Old against new move generation: every position × seat of many seeded random games.

Why: ``legal_actions`` is made faster again and again, and it must list exactly the same actions
(form, Honor, Energy, order) as before. Run it once with the old code, once with the new:

    PYTHONPATH=<checkout of the old commit>/service .venv/bin/python bench/legal_equivalence.py \\
        --games 1000 --write old.json
    .venv/bin/python bench/legal_equivalence.py --compare old.json     # 1000 games by default
    OLYMPUS_PURE_PYTHON=1 .venv/bin/python bench/legal_equivalence.py --compare old.json

The games are the same as long as the lists are (the random players pick from them); the file
holds one SHA-256 per position (both seats' lists), so a difference names its game and command.
Run both with the same PYTHONHASHSEED if you also want identical timings of set iteration; the
lists themselves must not depend on it (R1 order everywhere).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

from olympus.bots import play_random_game
from olympus.rules import Faction, Options, execute, legal_actions, replay


def digests(games: int, seed: int) -> list[str]:
    """``game:command:sha256`` of both seats' lists at every position of ``games`` games."""
    rng = random.Random(seed)
    out = []
    for game in range(games):
        options = Options(rng.random() < 0.5, rng.random() < 0.5, rng.randint(-5, 5))
        events, _, commands = play_random_game(rng, options, 600)
        state = replay(events[:1])
        for number, command in enumerate(commands):
            h = hashlib.sha256()
            for side in Faction:
                for action in legal_actions(state, side):
                    form = json.dumps(action.wire, sort_keys=True)
                    h.update(f"{side}|{form}|{action.honor}|{action.energy}\n".encode())
            out.append(f"{game}:{number}:{h.hexdigest()}")
            state = execute(state, command)[1]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000, help="seeded random games (1000)")
    parser.add_argument("--seed", type=int, default=11, help="seed of the games (11)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", metavar="FILE", help="write this code's digests")
    mode.add_argument("--compare", metavar="FILE", help="compare with digests written before")
    args = parser.parse_args()
    mine = digests(args.games, args.seed)
    compiled = getattr(sys.modules["olympus.rules"], "COMPILED", False)
    print(f"{len(mine)} positions × 2 seats of {args.games} games (rules compiled: {compiled})")
    if args.write:
        Path(args.write).write_text(json.dumps(mine))
        return
    theirs = json.loads(Path(args.compare).read_text())
    for a, b in zip(mine, theirs, strict=False):
        if a != b:
            sys.exit(f"DIFFERENT at game:command {a.rsplit(':', 1)[0]}")
    if len(mine) != len(theirs):
        sys.exit(f"DIFFERENT: {len(mine)} positions against {len(theirs)}")
    print("the same lists at every position")


if __name__ == "__main__":
    main()
