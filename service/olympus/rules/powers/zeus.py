"""Zeus: the thunderbolt (R10), thrown by Hera once Zeus is gone; Hera succeeds him."""

from __future__ import annotations

from typing import Final

from .. import commands as cmd
from .. import events as ev
from ..board import BOARD, Realm
from ..characters import Faction
from ..combat import run_steps
from ..decide import POWER_COMMANDS
from ..decision import Decision
from ..errors import IllegalCommand
from ..honor import penalty
from ..legal import POWER_ACTIONS
from ..listing import LegalAction
from ..state import GameState, Step, StepKind
from . import powers_of, register
from .base import Action, Power

THUNDERBOLT_ENERGY: Final = 6
THUNDERBOLT_HONOR: Final = 1


def thunderbolt_targets(state: GameState) -> list[int]:
    """Adjacent regions with Chthonians, outside the Underworld, if the leader can throw."""
    leader = state.leader(Faction.OLYMPIANS)
    if leader is None or state.energy[Faction.OLYMPIANS] < THUNDERBOLT_ENERGY:
        return []
    return sorted(
        r
        for r in BOARD.neighbours(state.positions[leader])
        if BOARD.realm(r) is not Realm.UNDERWORLD and state.count_in(r, Faction.CHTHONIANS)
    )


def thunderbolt_cost(state: GameState, side: Faction, leader: str) -> tuple[int, int]:
    """What a thunderbolt of ``leader`` costs ``side``, as (Honor, Energy) deltas: 6 Energy
    and 1 Honor after the powers (R10). ``throw`` charges it, ``thunderbolt_actions`` lists it."""
    points = penalty(state, Action(side, (leader,), "power"), "thunderbolt", THUNDERBOLT_HONOR)
    return -points, -THUNDERBOLT_ENERGY


def throw(d: Decision, side: Faction, c: cmd.Thunderbolt) -> None:
    """Instead of moving: 6 Energy and 1 Honor (after the powers); the Chthonians choose the
    victim (R10, D17). Raises ``IllegalCommand`` ``no_thunderbolt``, ``not_enough_energy`` or
    ``bad_target``."""
    state = d.state
    leader = state.leader(side) if side is Faction.OLYMPIANS else None
    if leader is None:
        raise IllegalCommand("no_thunderbolt", "Only the Olympian leader throws thunderbolts.")
    if state.energy[side] < THUNDERBOLT_ENERGY:
        raise IllegalCommand("not_enough_energy", "A thunderbolt costs 6 Energy.")
    if c.region not in thunderbolt_targets(state):
        raise IllegalCommand(
            "bad_target",
            "Target a region next to your leader, outside the Underworld, where Chthonians stand.",
        )
    honor, energy = thunderbolt_cost(state, side, leader)
    if leader not in state.revealed:
        d.emit(ev.UnitsRevealed(units=(leader,)))
    d.emit(ev.EnergyChanged(side, energy, "thunderbolt"))
    d.emit(ev.HonorChanged(side, honor, "thunderbolt"))
    d.emit(ev.ThunderboltThrown(faction=side, thrower=leader, region=c.region))
    for power in powers_of(d.state.units_in(c.region, side.enemy)):
        power.on_thunderbolt(d, c.region)
    if not d.check_end():
        run_steps(d, [Step(StepKind.STRUCK, side.enemy, c.region)])


def thunderbolt_actions(state: GameState, side: Faction) -> list[LegalAction]:
    """The thunderbolts the Olympian leader may throw now, with their costs (R10)."""
    leader = state.leader(side)
    if side is not Faction.OLYMPIANS or leader is None:
        return []
    honor, energy = thunderbolt_cost(state, side, leader)
    return [
        LegalAction(
            cmd.Thunderbolt,
            side,
            honor,
            -energy,
            {"type": "thunderbolt", "region": r},
            ("region",),
        )
        for r in thunderbolt_targets(state)
    ]


POWER_COMMANDS[cmd.Thunderbolt] = throw
POWER_ACTIONS.append(thunderbolt_actions)


class Zeus(Power):
    unit = "Zeus"

    def on_eliminated(self, d: Decision, region: int, cause: str) -> None:
        """Hera leads, if she is on the board; the succession is emitted either way (D18)."""
        successor = "Hera" if "Hera" in d.state.positions else None
        d.emit(ev.LeaderSucceeded(faction=Faction.OLYMPIANS, leader=successor))


register(Zeus)
