"""Apollo: flies; doubles every Honor penalty of an action he is revealed in (R4)."""

from __future__ import annotations

from ..state import GameState
from . import register
from .base import Action
from .flight import Flier

# His battles and his flights; a friendly walk does not need him revealed (rulebook).
_DOUBLED = frozenset({"flight", "attack", "combat", "retreat"})


class Apollo(Flier):
    unit = "Apollo"

    def honor_penalty(self, state: GameState, action: Action, reason: str, penalty: int) -> int:
        return penalty * 2 if self.unit in action.units and action.kind in _DOUBLED else penalty


register(Apollo)
