"""A digest of seeded random games as this build plays them (tests/test_native.py).

    python tests/native_fingerprint.py GAMES   # {"compiled", "positions", "actions", "digest"}

Every position's legal actions for both seats (client form, Honor, Energy, in order), every
event (encoded) and every state reached (its snapshot encoding) go into one SHA-256.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys

import olympus.rules
from olympus.bots import play_random_game
from olympus.rules import Faction, Options, encode, execute, legal_actions, replay
from olympus.rules.snapshot import encode_state


def fingerprint(games: int) -> dict[str, object]:
    rng = random.Random(7)
    digest = hashlib.sha256()
    positions = actions = 0
    for _ in range(games):
        options = Options(rng.random() < 0.5, rng.random() < 0.5, rng.randint(-5, 5))
        events, final, commands = play_random_game(rng, options, 300)
        state = replay(events[:1])
        for command in commands:
            positions += 1
            for side in Faction:
                for action in legal_actions(state, side):
                    actions += 1
                    form = json.dumps(action.wire, sort_keys=True)
                    digest.update(f"{side}|{form}|{action.honor}|{action.energy}\n".encode())
            new_events, state = execute(state, command)
            for event in new_events:
                digest.update(encode(event))
            digest.update(encode_state(state))
        digest.update(encode_state(final))
    return {
        "compiled": olympus.rules.COMPILED,
        "positions": positions,
        "actions": actions,
        "digest": digest.hexdigest(),
    }


if __name__ == "__main__":
    print(json.dumps(fingerprint(int(sys.argv[1]))))
