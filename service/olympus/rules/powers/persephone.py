"""Persephone: fighting alone she may always retreat, to any adjacent region, even against a
Chase (unless Hermes chases) and even as the attacker (R8, R9, D8). Her succession to Hades is in
hades.py, her meeting with Demeter in demeter.py; her reaching the Palace wins (R11)."""

from __future__ import annotations

from ..state import GameState
from . import register
from .base import Power


class Persephone(Power):
    unit = "Persephone"

    def retreats_any_direction(self, state: GameState, units: list[str]) -> bool:
        return units == [self.unit]

    def retreat_unstoppable(self, state: GameState, units: list[str]) -> bool:
        return units == [self.unit]


register(Persephone)
