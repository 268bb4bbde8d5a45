"""Poseidon: a move of his from a region next to the Styx to another gives the Olympians
2 Energy, and reveals him (R3)."""

from __future__ import annotations

from typing import Final

from .. import events as ev
from ..board import BOARD
from ..characters import Faction
from ..decision import Decision
from ..state import GameState
from . import register
from .base import NO_CHARGE, MoveContext, Power

STYX_ENERGY: Final = 2


class Poseidon(Power):
    unit = "Poseidon"

    def move_charges(self, state: GameState, move: MoveContext) -> tuple[int, int]:
        """The Olympians gain 2 Energy when he moves along the Styx."""
        if not (BOARD.on_styx(move.origin) and BOARD.on_styx(move.destination)):
            return NO_CHARGE
        return 0, STYX_ENERGY

    def after_move(self, d: Decision, move: MoveContext) -> None:
        _, energy = self.move_charges(d.state, move)
        if not energy:
            return
        if self.unit not in d.state.revealed:
            d.emit(ev.UnitsRevealed(units=(self.unit,)))
        d.emit(ev.EnergyChanged(Faction.OLYMPIANS, energy, "poseidon"))


register(Poseidon)
