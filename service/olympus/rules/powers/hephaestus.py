"""Hephaestus: +5 when the Olympians defend (R8); he cancels a sneak attack on his region."""

from __future__ import annotations

from ..characters import Faction
from ..state import GameState
from . import register
from .base import Power

DEFENSE_BONUS = 5


class Hephaestus(Power):
    unit = "Hephaestus"

    def strength_bonus(self, state: GameState, region: int, faction: Faction) -> int:
        combat = state.combat
        defending = combat is not None and combat.attacker is Faction.CHTHONIANS
        return DEFENSE_BONUS if faction is Faction.OLYMPIANS and defending else 0

    def cancels_sneak_attack(self, state: GameState) -> bool:
        return True


register(Hephaestus)
