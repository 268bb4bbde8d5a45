"""Flying (rulebook "Flying", R3, R5): shared by Apollo and the Harpies.

A revealed flier may move alone to any region; revealing it is part of the flight; a flight
crosses the Styx for free (the rules skip the Styx for flights) and fliers never fly in retreats.
"""

from __future__ import annotations

from ..state import GameState
from .base import MoveContext, Power


class Flier(Power):
    def may_reveal_for_move(self, state: GameState, move: MoveContext) -> bool:
        return move.flight and self._alone(move)

    def flies(self, state: GameState, move: MoveContext) -> bool:
        return self._alone(move) and (self.unit in state.revealed or self.unit in move.reveal)

    def _alone(self, move: MoveContext) -> bool:
        """Whether the flier moves alone (asked of every flight listed: no tuple made)."""
        units = move.units
        return len(units) == 1 and units[0] == self.unit
