"""Cerberus: alone he must Chase (R8); thunderbolts cannot take him (R10)."""

from __future__ import annotations

from ..characters import Faction
from ..state import GameState, Maneuver
from . import register
from .base import Power, alone


class Cerberus(Power):
    unit = "Cerberus"

    def allowed_maneuvers(
        self, state: GameState, region: int, faction: Faction, allowed: frozenset[Maneuver]
    ) -> frozenset[Maneuver]:
        return allowed & {Maneuver.CHASE} if alone(state, self.unit) else allowed

    def thunderbolt_immune(self, state: GameState, region: int) -> bool:
        return True


register(Cerberus)
