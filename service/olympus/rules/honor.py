"""Honor (R4): what a move or attack earns or costs, and penalties through the powers' hooks."""

from __future__ import annotations

from .board import BOARD
from .characters import Faction
from .powers import Action, MoveContext, powers_of
from .state import GameState


def penalty(state: GameState, action: Action, reason: str, points: int) -> int:
    """A penalty of ``points`` Honor after Apollo, Dionysus, Moirae… (R4, R8); never negative."""
    for power in powers_of(action.units, "honor_penalty"):
        points = power.honor_penalty(state, action, reason, points)
    return max(points, 0)


def _direction(faction: Faction, origin: int, destination: int) -> int:
    rise = BOARD.level(destination) - BOARD.level(origin)
    return (rise > 0) - (rise < 0) if faction is Faction.CHTHONIANS else (rise < 0) - (rise > 0)


# Every (faction, origin, destination) worked out once: each candidate move asks it.
_DIRECTIONS = {
    faction: tuple(
        tuple(_direction(faction, a, b) for b in range(len(BOARD.regions)))
        for a in range(len(BOARD.regions))
    )
    for faction in Faction
}


def direction(faction: Faction, origin: int, destination: int) -> int:
    """+1 forward, -1 backward, 0 sideways (same level, only by flying)."""
    return _DIRECTIONS[faction][origin][destination]


def move_honor(state: GameState, move: MoveContext) -> tuple[int, str]:
    """The Honor change of a move (R4): one decision, one penalty or bonus, the largest.

    Returns (delta, reason) with reason ``move`` or ``attack``; delta is negative for a penalty.
    """
    n = len(move.units)
    defenders = state.count_in(move.destination, move.faction.enemy)
    way = direction(move.faction, move.origin, move.destination)
    if not defenders:
        # forward: the group penalty; backward, or sideways without an enemy: 2, or 3 for 4
        points = n - 1 if way > 0 else (3 if n == 4 else 2)
        action = Action(move.faction, move.units, "flight" if move.flight else "move", move.reveal)
        return -penalty(state, action, "move", points), "move"
    if n < defenders:
        return 2 * (defenders - n), "attack"
    if n > defenders:
        points = 2 * (n - defenders)
    elif state.options.open_combat:  # Open Combat: +1 for any attack on a same-sized group
        return 1, "attack"
    else:
        forward = way >= 0 or move.destination == move.faction.base  # sideways attack: forward
        points = 0 if forward else 1
    action = Action(move.faction, move.units, "flight" if move.flight else "attack", move.reveal)
    return -penalty(state, action, "attack", points), "attack"
