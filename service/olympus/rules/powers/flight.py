"""Flying (rulebook "Flying", R3, R5): shared by Apollo and the Harpies.

A revealed flier may move alone to any region; revealing it is part of the flight; a flight
crosses the Styx for free (the rules skip the Styx for flights) and fliers never fly in retreats.
"""

from __future__ import annotations

from ..state import GameState
from .base import MoveContext, Power


class Flier(Power):
    def may_reveal_for_move(self, state: GameState, move: MoveContext) -> bool:
        return move.flight and move.alone(self.unit)

    def flies(self, state: GameState, move: MoveContext) -> bool:
        return move.alone(self.unit) and (self.unit in state.revealed or self.unit in move.reveal)
