"""Hypnos: every other unit in the combat, comrades too, has nominal strength 0 (R8); bonuses
from powers (Aphrodite, Hera, Hephaestus) are not nominal and stay."""

from __future__ import annotations

from ..state import GameState
from . import register
from .base import Power


class Hypnos(Power):
    unit = "Hypnos"
    nominal_priority = 0  # before Aphrodite

    def adjust_nominal(
        self, state: GameState, region: int, nominal: dict[str, int]
    ) -> dict[str, int]:
        return {u: v if u == self.unit else 0 for u, v in nominal.items()}


register(Hypnos)
