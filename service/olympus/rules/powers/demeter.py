"""Demeter: her optional drain of 3 Chthonian Energy (R3), and her meeting with Persephone,
which eliminates both, for good (R8, R10), even in the Palace before Persephone could win."""

from __future__ import annotations

from typing import Final

from .. import events as ev
from ..board import BOARD, Realm
from ..characters import Faction
from ..combat import eliminate
from ..decision import Decision
from ..state import GameState
from . import register
from .base import NO_CHARGE, MoveContext, Power

DRAIN: Final = 3


class Demeter(Power):
    unit = "Demeter"

    def uses_power_on_move(self, state: GameState, move: MoveContext) -> bool:
        """She ends her move alone in an empty region of the Underworld (D9)."""
        return (
            move.alone(self.unit)
            and BOARD.realm(move.destination) is Realm.UNDERWORLD
            and not state.occupied(move.destination)
        )

    def move_charges(self, state: GameState, move: MoveContext) -> tuple[int, int]:
        """The drain: the Olympians gain what the Chthonians lose, 3 Energy or what they have."""
        if not move.use_power:
            return NO_CHARGE
        return 0, min(DRAIN, state.energy[Faction.CHTHONIANS])

    def after_move(self, d: Decision, move: MoveContext) -> None:
        if not move.use_power:
            return
        if self.unit not in d.state.revealed:
            d.emit(ev.UnitsRevealed(units=(self.unit,)))
        _, amount = self.move_charges(d.state, move)
        if amount:
            d.emit(ev.EnergyChanged(Faction.CHTHONIANS, -amount, "drain"))
            d.emit(ev.EnergyChanged(Faction.OLYMPIANS, amount, "drain"))

    def on_meeting(self, d: Decision, region: int, move: MoveContext) -> None:
        if d.state.positions.get("Persephone") == region == d.state.positions.get(self.unit):
            eliminate(d, ["Persephone", self.unit], "demeter")


register(Demeter)
