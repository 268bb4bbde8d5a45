"""Honor (R4): what a move or attack earns or costs, and penalties through the powers' hooks."""

from __future__ import annotations

from typing import Final

from mypy_extensions import mypyc_attr

from .board import BOARD
from .characters import FACTIONS, Faction
from .powers import Action, MoveContext, Power, powers_of
from .state import GameState


def penalty(state: GameState, action: Action, reason: str, points: int) -> int:
    """A penalty of ``points`` Honor after Apollo, Dionysus, Moirae… (R4, R8); never negative."""
    return _adjusted(state, powers_of(action.units, "honor_penalty"), action, reason, points)


def _adjusted(
    state: GameState, adjusters: tuple[Power, ...], action: Action, reason: str, points: int
) -> int:
    """``penalty`` with the powers of ``action.units`` that adjust penalties already known."""
    for power in adjusters:
        points = power.honor_penalty(state, action, reason, points)
    return _never_negative(points)


def _never_negative(points: int) -> int:
    return max(points, 0)


def _direction(faction: Faction, origin: int, destination: int) -> int:
    rise = BOARD.level(destination) - BOARD.level(origin)
    return (rise > 0) - (rise < 0) if faction is Faction.CHTHONIANS else (rise < 0) - (rise > 0)


# Every (faction, origin, destination) worked out once: each candidate move asks it.
_DIRECTIONS: Final = {
    faction: tuple(
        tuple(_direction(faction, a, b) for b in range(len(BOARD.regions)))
        for a in range(len(BOARD.regions))
    )
    for faction in FACTIONS
}


@mypyc_attr(acyclic=True, free_list_len=1)  # one per group (Movers: why)
class MoveHonor:
    """The Honor of a group's moves from its region (R4), destination by destination: one
    decision, one penalty or bonus, the largest.

    What depends on the group alone is worked out once (``legal_actions`` asks for dozens of
    destinations per group, ``decide`` for one): the enemies' count per region and the
    direction of each destination are table rows, and so are the powers of the units that
    adjust a penalty (Apollo, Dionysus, the Moirae…).
    """

    __slots__ = ("_adjusters", "_enemies", "_ways", "faction", "state", "units")

    def __init__(
        self,
        state: GameState,
        faction: Faction,
        units: tuple[str, ...],
        origin: int,
        adjusters: tuple[Power, ...],
    ) -> None:
        """``adjusters``: the powers of ``units`` that adjust a penalty (``GroupPowers``)."""
        self.state = state
        self.faction = faction
        self.units = units
        self._enemies = state.occupancy.counts[faction.enemy]
        self._ways = _DIRECTIONS[faction][origin]  # +1 forward, -1 backward, 0 sideways
        self._adjusters = adjusters

    def of(self, move: MoveContext) -> tuple[int, str]:
        """(delta, reason) of ``move`` by these units (R4): reason ``move`` or ``attack``,
        delta negative for a penalty. Without enemies there: forward, the group penalty
        (n − 1); backward or sideways, 2 (3 for a group of 4). An attack of a attackers on d
        defenders: +2·(d − a) or −2·(a − d); same-sized, 0 forward (sideways, or into one's
        own base, counts as forward), 1 backward, or +1 whatever the way in Open Combat (D6).
        Penalties after the movers' powers (Apollo, Dionysus)."""
        n = len(move.units)
        defenders = self._enemies[move.destination]
        way = self._ways[move.destination]
        if not defenders:
            # forward: the group penalty; backward, or sideways without an enemy: 2, or 3 for 4
            points = n - 1 if way > 0 else (3 if n == 4 else 2)
            kind = "flight" if move.flight else "move"
            return -self._penalty(kind, move.reveal, "move", points), "move"
        if n < defenders:
            return 2 * (defenders - n), "attack"
        if n > defenders:
            points = 2 * (n - defenders)
        elif self.state.options.open_combat:  # Open Combat: +1 for any attack on a same-sized group
            return 1, "attack"
        else:
            forward = way >= 0 or move.destination == move.faction.base  # sideways attack: forward
            points = 0 if forward else 1
        kind = "flight" if move.flight else "attack"
        return -self._penalty(kind, move.reveal, "attack", points), "attack"

    def _penalty(self, kind: str, reveal: frozenset[str], reason: str, points: int) -> int:
        if not self._adjusters:  # most groups: no power to ask, no ``Action`` to make for it
            return _never_negative(points)
        action = Action(self.faction, self.units, kind, reveal)
        return _adjusted(self.state, self._adjusters, action, reason, points)
