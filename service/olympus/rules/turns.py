"""Turns (R3): the hand-over to the other side and its start-of-turn base penalty."""

from __future__ import annotations

from . import events as ev
from .decision import Decision


def end_turn(d: Decision) -> None:
    """End the mover's action; the other side's turn starts with the base penalty (R3)."""
    faction = d.state.turn.enemy
    d.emit(ev.TurnStarted(faction=faction, number=d.state.turn_number + 1))
    invaders = d.state.count_in(faction.base, faction.enemy)
    if invaders:
        d.emit(ev.HonorChanged(faction, -invaders, "base"))
    d.check_end()
