"""Aphrodite (R8): in a combat, enemy males −3 (never below 0) and male comrades +2 each;
revealed next to a combat (already, or with a commitment), +2 to each male Olympian in it
(D11), and revealing her there lets the Chthonians commit again (combat.commit)."""

from __future__ import annotations

from typing import Final

from ..board import BOARD
from ..characters import BY_NAME, Faction
from ..state import GameState
from . import register
from .base import Power

ENEMY_MALE_MALUS: Final = 3
MALE_COMRADE_BONUS: Final = 2


def _olympian_males(state: GameState, region: int) -> int:
    return sum(BY_NAME[u].male for u in state.units_in(region, Faction.OLYMPIANS))


class Aphrodite(Power):
    unit = "Aphrodite"
    nominal_priority = 1  # after Hypnos: his zero is what she reduces (rulebook example)

    def adjust_nominal(
        self, state: GameState, region: int, nominal: dict[str, int]
    ) -> dict[str, int]:
        return {
            u: max(0, v - ENEMY_MALE_MALUS)
            if BY_NAME[u].faction is Faction.CHTHONIANS and BY_NAME[u].male
            else v
            for u, v in nominal.items()
        }

    def strength_bonus(self, state: GameState, region: int, faction: Faction) -> int:
        if faction is not Faction.OLYMPIANS:
            return 0
        return MALE_COMRADE_BONUS * _olympian_males(state, region)

    def adjacent_bonus(self, state: GameState, region: int, faction: Faction) -> int:
        return self.strength_bonus(state, region, faction)

    def may_reveal_in_commit(self, state: GameState, faction: Faction) -> bool:
        combat = state.combat
        return (
            faction is Faction.OLYMPIANS
            and combat is not None
            and self.unit in state.positions
            and state.positions[self.unit] in BOARD.neighbours(combat.region)
        )


register(Aphrodite)
