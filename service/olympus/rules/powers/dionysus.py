"""Dionysus: acting alone and revealed, each Honor penalty of his is 1 less (R4, R8)."""

from __future__ import annotations

from ..state import GameState
from . import register
from .base import Action, MoveContext, Power


class Dionysus(Power):
    unit = "Dionysus"

    def may_reveal_for_move(self, state: GameState, move: MoveContext) -> bool:
        return move.alone(self.unit)

    def honor_penalty(self, state: GameState, action: Action, reason: str, penalty: int) -> int:
        revealed = self.unit in state.revealed or self.unit in action.reveal
        return max(0, penalty - 1) if action.alone(self.unit) and revealed else penalty


register(Dionysus)
