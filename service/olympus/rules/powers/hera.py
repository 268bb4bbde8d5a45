"""Hera: +3 strength per other Olympian beside her in a combat; she succeeds Zeus (zeus.py)."""

from __future__ import annotations

from ..characters import Faction
from ..state import GameState
from . import register
from .base import Power


class Hera(Power):
    unit = "Hera"

    def strength_bonus(self, state: GameState, region: int, faction: Faction) -> int:
        if faction is not Faction.OLYMPIANS:
            return 0
        return 3 * (state.count_in(region, Faction.OLYMPIANS) - 1)


register(Hera)
