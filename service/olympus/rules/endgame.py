"""Game end (R11): Honor first, then the Chthonian goal, then the Olympian goal."""

from __future__ import annotations

from typing import Final

from .board import PALACE
from .characters import Faction
from .state import GameState, Phase

CHTHONIAN_LEADERS: Final[tuple[str, ...]] = ("Hades", "Persephone")


def outcome(state: GameState) -> tuple[str, str] | None:
    """(result, reason) when the game is decided (R11, D13), else None: Honor first (≤ 0
    loses, both at once: a draw), then a Chthonian leader in the Palace, then no Chthonian
    leader left. Result: a faction's value or "draw"."""
    if state.phase is Phase.SETUP:
        return None
    olympians_out = state.honor[Faction.OLYMPIANS] <= 0
    chthonians_out = state.honor[Faction.CHTHONIANS] <= 0
    if olympians_out and chthonians_out:
        return "draw", "both_out_of_honor"
    if olympians_out:
        return Faction.CHTHONIANS.value, "olympians_out_of_honor"
    if chthonians_out:
        return Faction.OLYMPIANS.value, "chthonians_out_of_honor"
    if any(state.positions.get(leader) == PALACE for leader in CHTHONIAN_LEADERS):
        return Faction.CHTHONIANS.value, "leader_in_palace"
    if not any(leader in state.positions for leader in CHTHONIAN_LEADERS):
        return Faction.OLYMPIANS.value, "chthonian_leaders_gone"
    return None
