"""Ares: fighting alone, each unit of Energy he commits counts double (R8)."""

from __future__ import annotations

from ..characters import Faction
from ..state import GameState
from . import register
from .base import Power, alone


class Ares(Power):
    unit = "Ares"

    def energy_factor(self, state: GameState, region: int, faction: Faction) -> int:
        return 2 if faction is Faction.OLYMPIANS and alone(state, self.unit) else 1


register(Ares)
