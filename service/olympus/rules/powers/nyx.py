"""Nyx: fighting alone, she limits the Olympians' Energy as if they had one unit fewer (R8)."""

from __future__ import annotations

from ..characters import Faction
from ..combat import ENERGY_PER_UNIT
from ..state import GameState
from . import register
from .base import Power, alone


class Nyx(Power):
    unit = "Nyx"

    def energy_limit(self, state: GameState, region: int, faction: Faction, limit: int) -> int:
        if faction is Faction.OLYMPIANS and alone(state, self.unit):
            return limit - ENERGY_PER_UNIT
        return limit


register(Nyx)
