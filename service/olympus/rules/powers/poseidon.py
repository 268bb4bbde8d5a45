"""Poseidon: a move of his from a region next to the Styx to another gives the Olympians
2 Energy, and reveals him (R3)."""

from __future__ import annotations

from .. import events as ev
from ..board import BOARD
from ..characters import Faction
from ..decision import Decision
from . import register
from .base import MoveContext, Power

STYX_ENERGY = 2


class Poseidon(Power):
    unit = "Poseidon"

    def after_move(self, d: Decision, move: MoveContext) -> None:
        if not (BOARD.on_styx(move.origin) and BOARD.on_styx(move.destination)):
            return
        if self.unit not in d.state.revealed:
            d.emit(ev.UnitsRevealed(units=(self.unit,)))
        d.emit(ev.EnergyChanged(Faction.OLYMPIANS, STYX_ENERGY, "poseidon"))


register(Poseidon)
