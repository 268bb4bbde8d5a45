"""The Erinyes: alone they may not Retreat or All-out Defend (R8); attacking alone, not across
the Styx, they may make a sneak attack: 2 Energy and 1 Honor, on top of the move's Honor (D19),
and one Olympian of the defenders' choice dies, with no combat; with Hephaestus there it is
wasted and a combat follows. Using the power reveals them (R3, R7).

Our ruling where the rules are silent (D7): if Olympians remain after the sneak attack, the Erinyes
go back to the region they came from, so that no region holds both sides outside a combat."""

from __future__ import annotations

from typing import Final

from .. import events as ev
from ..board import BOARD
from ..characters import Faction
from ..combat import eliminate, run_steps
from ..decision import Decision
from ..honor import penalty
from ..state import GameState, Maneuver, Step, StepKind
from . import POWERS, register
from .base import NO_CHARGE, Action, MoveContext, Power, alone

SNEAK_ENERGY: Final = 2
SNEAK_HONOR: Final = 1
_DEFENSIVE: Final = frozenset({Maneuver.RETREAT, Maneuver.ALL_OUT_DEFENSE})


class Erinyes(Power):
    unit = "Erinyes"

    def allowed_maneuvers(
        self, state: GameState, region: int, faction: Faction, allowed: frozenset[Maneuver]
    ) -> frozenset[Maneuver]:
        return allowed - _DEFENSIVE if alone(state, self.unit) else allowed

    def uses_power_on_move(self, state: GameState, move: MoveContext) -> bool:
        return (
            move.alone(self.unit)
            and not state.count_in(move.destination, Faction.CHTHONIANS)
            and state.count_in(move.destination, Faction.OLYMPIANS) > 0
            and not BOARD.crosses_styx(move.origin, move.destination)
            and state.energy[Faction.CHTHONIANS] >= SNEAK_ENERGY
        )

    def move_charges(self, state: GameState, move: MoveContext) -> tuple[int, int]:
        """The sneak attack's price: 2 Energy and 1 Honor, after the powers (D19)."""
        if not move.use_power or not move.alone(self.unit):
            return NO_CHARGE
        action = Action(Faction.CHTHONIANS, move.units, "power")
        return -penalty(state, action, "sneak_attack", SNEAK_HONOR), -SNEAK_ENERGY

    def on_meeting(self, d: Decision, region: int, move: MoveContext) -> None:
        if not move.use_power or not move.alone(self.unit):
            return
        side = Faction.CHTHONIANS
        honor, energy = self.move_charges(d.state, move)
        if self.unit not in d.state.revealed:  # using a power reveals the unit (R3, R7)
            d.emit(ev.UnitsRevealed(units=(self.unit,)))
        d.emit(ev.EnergyChanged(side, energy, "sneak_attack"))
        d.emit(ev.HonorChanged(side, honor, "sneak_attack"))
        if d.check_end():
            return
        defenders = d.state.units_in(region, side.enemy)
        if any(u in POWERS and POWERS[u].cancels_sneak_attack(d.state) for u in defenders):
            return  # wasted: the combat follows
        if len(defenders) == 1:
            # No choice, and nobody left to go back from: ``meet`` ends the turn. (Through
            # ``run_steps`` the turn would end twice: there, and again in ``meet``.)
            eliminate(d, defenders, StepKind.REMOVE.value)
            return
        run_steps(  # the defenders choose their victim; the turn ends once that is settled
            d,
            [
                Step(StepKind.REMOVE, side.enemy, region),
                Step(StepKind.WITHDRAW, side, region, move.origin),
            ],
        )


register(Erinyes)
