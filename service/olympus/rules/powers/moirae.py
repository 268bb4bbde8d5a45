"""The Moirae: in their combats the Chthonians may commit their whole stock, and more than 4
Energy costs them no Honor (R8)."""

from __future__ import annotations

from ..characters import Faction
from ..state import GameState
from . import register
from .base import Action, Power


class Moirae(Power):
    unit = "Moirae"

    def energy_limit(self, state: GameState, region: int, faction: Faction, limit: int) -> int:
        return state.energy[faction] if faction is Faction.CHTHONIANS else limit

    def honor_penalty(self, state: GameState, action: Action, reason: str, penalty: int) -> int:
        return 0 if reason == "energy" and self.unit in action.units else penalty


register(Moirae)
