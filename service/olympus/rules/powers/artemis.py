"""Artemis: her group's Chase gets +2 instead of −3 (R8)."""

from __future__ import annotations

from ..characters import Faction
from ..state import GameState
from . import register
from .base import Power

CHASE_BONUS = 2


class Artemis(Power):
    unit = "Artemis"

    def chase_modifier(self, state: GameState, region: int, faction: Faction) -> int | None:
        return CHASE_BONUS if faction is Faction.OLYMPIANS else None


register(Artemis)
