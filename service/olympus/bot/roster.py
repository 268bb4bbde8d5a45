"""Every player of the arena and the benches by its name (``make_player``): the search's levels,
the one-ply players and the yardsticks from outside the search's family."""

from __future__ import annotations

from olympus.rules import Faction

from .levels import LEVELS
from .player import GreedyBot, Player, RandomBot, SeatBot
from .yardsticks import SafeBot, SensibleBot


def make_player(kind: str, seat: Faction, seed: int, timed: bool = True) -> Player:
    """A player by name: ``random``, ``greedy``, the yardsticks ``sensible`` and ``safe``, or
    a level (``easy``, ``normal``, ``hard``); ``timed=False`` searches its iterations whatever
    time they take (the arena)."""
    if kind == "random":
        return RandomBot(seat, seed)
    if kind == "greedy":
        return GreedyBot(seat, seed)
    if kind in ("sensible", "safe"):
        return SensibleBot(seat, seed) if kind == "sensible" else SafeBot(seat, seed)
    level = LEVELS[kind]
    return SeatBot(seat, level if timed else level.untimed(), seed)
