"""Athena: in the first round she commits after seeing the opponent's commitment (R8)."""

from __future__ import annotations

from ..state import GameState
from . import register
from .base import Power


class Athena(Power):
    unit = "Athena"

    def sees_opponent_commitment(self, state: GameState, region: int) -> bool:
        return True


register(Athena)
