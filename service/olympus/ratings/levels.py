"""The computer's levels on the players' rating scale (Glicko's, where a new player starts at
1500), so that a player can read the hard level's rating beside their own. Games against the
computer are casual: these ratings are fixed, not played for.

They come from the arena's Elo table (bench/bot_arena.py, docs/arena-yardsticks.json: Bradley-
Terry strengths in Elo points, the same logistic scale as Glicko's), anchored by the common-
sense yardstick (``sensible``, olympus.bot.yardsticks) at 1500: a player who knows the rules
and plays one ply of common sense is what a new account's rating assumes. The table is kept in
``olympus/data/computer_ratings.json``; tests/test_glicko2.py checks it against the arena's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources

ANCHOR = ("sensible", 1500)
LEVELS = ("easy", "normal", "hard")


def anchored(elo: Mapping[str, float]) -> dict[str, int]:
    """Each level's rating from an arena's Elo table (which holds the anchor's player)."""
    name, rating = ANCHOR
    return {level: round(rating + elo[level] - elo[name]) for level in LEVELS}


def level_ratings() -> dict[str, int]:
    """The levels' ratings as kept with the package."""
    kept = json.loads(resources.files("olympus.data").joinpath("computer_ratings.json").read_text())
    return {level: int(kept["levels"][level]) for level in LEVELS}
