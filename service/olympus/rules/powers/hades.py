"""Hades: the recall (R10), made by Persephone once Hades is gone; Persephone succeeds him."""

from __future__ import annotations

from typing import Final

from .. import commands as cmd
from .. import events as ev
from ..board import TARTARUS
from ..characters import BY_NAME, Faction
from ..decide import POWER_COMMANDS
from ..decision import Decision
from ..errors import IllegalCommand
from ..legal import POWER_ACTIONS
from ..listing import LegalAction
from ..movement import STACK_LIMIT
from ..state import GameState
from ..turns import end_turn
from . import register
from .base import Power

RECALL_ENERGY: Final = 10


def recallable(state: GameState) -> list[str]:
    """Eliminated Chthonians the leader may bring back to Tartarus now (R10)."""
    side = Faction.CHTHONIANS
    leader = state.leader(side)
    if (
        leader is None
        or state.energy[side] < RECALL_ENERGY
        or state.count_in(TARTARUS, side.enemy)
        or state.count_in(TARTARUS, side) >= STACK_LIMIT
    ):
        return []
    return [
        u
        for u in state.eliminated
        if BY_NAME[u].faction is side and u not in state.unrecallable and u != "Hades"
    ]


def recall(d: Decision, side: Faction, c: cmd.Recall) -> None:
    """Instead of moving: 10 Energy, one eliminated unit returns to Tartarus under a fresh
    token (R10, D16). Raises ``IllegalCommand`` ``no_recall`` or ``cannot_recall``."""
    state = d.state
    leader = state.leader(side) if side is Faction.CHTHONIANS else None
    if leader is None:
        raise IllegalCommand("no_recall", "Only the Chthonian leader recalls the fallen.")
    if c.unit not in recallable(state):
        raise IllegalCommand(
            "cannot_recall",
            f"{c.unit} cannot come back now: it must be an eliminated comrade "
            "(never Hades, nor Persephone taken by Demeter), Tartarus must hold no enemy and "
            "fewer than 4 Chthonians, and a recall costs 10 Energy.",
        )
    if leader not in state.revealed:
        d.emit(ev.UnitsRevealed(units=(leader,)))
    d.emit(ev.EnergyChanged(side, -RECALL_ENERGY, "recall"))
    d.emit(ev.UnitRecalled(faction=side, leader=leader, unit=c.unit, token=state.next_token))
    end_turn(d)


def recall_actions(state: GameState, side: Faction) -> list[LegalAction]:
    """The recalls the Chthonian leader may make now, with their cost (R10)."""
    if side is not Faction.CHTHONIANS:
        return []
    return [
        LegalAction(cmd.Recall, side, 0, RECALL_ENERGY, {"type": "recall", "unit": u}, ("unit",))
        for u in recallable(state)
    ]


POWER_COMMANDS[cmd.Recall] = recall
POWER_ACTIONS.append(recall_actions)


class Hades(Power):
    unit = "Hades"

    def on_eliminated(self, d: Decision, region: int, cause: str) -> None:
        """R10: Persephone's position is revealed and she leads."""
        if "Persephone" in d.state.positions:
            if "Persephone" not in d.state.revealed:
                d.emit(ev.UnitsRevealed(units=("Persephone",)))
            d.emit(ev.LeaderSucceeded(faction=Faction.CHTHONIANS, leader="Persephone"))


register(Hades)
