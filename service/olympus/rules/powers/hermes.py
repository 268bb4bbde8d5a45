"""Hermes: alone, he takes further single steps until he meets anyone (R3; the steps are one
``Move`` command, see decide.py); his Chase stops even Persephone's retreat."""

from __future__ import annotations

from ..state import GameState
from . import register
from .base import MoveContext, Power


class Hermes(Power):
    unit = "Hermes"

    def takes_extra_steps(self, state: GameState, move: MoveContext) -> bool:
        return move.alone(self.unit) and not move.flight

    def stops_unstoppable_retreat(self, state: GameState) -> bool:
        return True


register(Hermes)
