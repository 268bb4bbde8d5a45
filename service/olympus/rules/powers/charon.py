"""Charon (R5, R9): revealed, he crosses the Styx for free, and so does any Chthonian move
starting or ending in or next to his region while he stands next to the Styx; fighting alone he
is the only one who may retreat across it."""

from __future__ import annotations

from ..board import BOARD
from ..characters import Faction
from ..state import GameState
from . import register
from .base import MoveContext, Power


class Charon(Power):
    unit = "Charon"

    def _ferries(self, state: GameState, move: MoveContext) -> bool:
        """Whether Charon makes ``move`` free. The rules ask this only of units of the moving
        side that are on the board (movement.Movers: moves judged and listed)."""
        if self.unit in move.units:
            return True
        here = state.positions[self.unit]
        if move.faction is not Faction.CHTHONIANS or not BOARD.on_styx(here):  # his side, his river
            return False
        near = BOARD.neighbours(here)
        origin, destination = move.origin, move.destination
        return here in (origin, destination) or origin in near or destination in near

    def may_reveal_for_move(self, state: GameState, move: MoveContext) -> bool:
        return BOARD.crosses_styx(move.origin, move.destination) and self._ferries(state, move)

    def styx_free(self, state: GameState, move: MoveContext) -> bool:
        return self._ferries(state, move)

    def retreats_across_styx(self, state: GameState, units: list[str]) -> bool:
        return units == [self.unit]


register(Charon)
