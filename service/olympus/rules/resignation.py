"""Resignation and abort: the service's ways to end a game early, not the rulebook's
(docs/rules.md, "Resignation and abort").

A seat may resign at any time before the end, whatever is awaited (its setup, its turn or the
enemy's, a combat's commitments, a choice): the enemy wins at once (``GameEnded`` with the
enemy's side as ``result``, reason ``resignation``).

A seat may abort the game while not both sides have made their first move: it ends at once
with no winner (``GameEnded`` with result ``aborted``, reason ``abort``). A side's first move
is the action of its first turn (R3): a move, the Liturgy, passing or a leader's power (R10),
or the Liturgy a missed turn falls back to (R12). The Chthonians play turn 1 and the
Olympians turn 2, so the game may be aborted during the setup (R2), throughout turn 1 (its
combat and choices too: the Olympians have not moved yet), and in turn 2 until the Olympians
give their action (while it is their turn with no combat and no choice pending). From turn 3
on, or once the Olympians' action started a combat or a choice, it is too late.

Both ask public facts only (the phase, the turn's number, whether a combat or a choice is
under way): the service tells both seats when they may, and the telling reveals nothing (R7).
"""

from __future__ import annotations

from typing import Final

from . import events as ev
from .characters import Faction
from .decision import Decision
from .errors import IllegalCommand
from .state import GameState, Phase

ABORTED: Final = "aborted"  # a ``GameEnded`` result: the game ended without a winner


def may_resign(state: GameState) -> bool:
    """Whether a seat may resign now: whenever the game is not over."""
    return state.phase is not Phase.OVER


def may_abort(state: GameState) -> bool:
    """Whether a seat may abort now: the game is not over and not both sides have made their
    first move (the module's docstring): the setup, turn 1, or turn 2 before its action."""
    if state.phase is Phase.OVER:
        return False
    if state.phase is Phase.SETUP or state.turn_number <= 1:
        return True
    return (
        state.turn_number == 2
        and state.phase is Phase.TURN
        and state.combat is None
        and not state.pending
    )


def resign(d: Decision, side: Faction) -> None:
    """``side`` resigns: its enemy wins at once (``GameEnded``, reason ``resignation``).
    Raises ``IllegalCommand`` ``game_over`` once the game is over."""
    if not may_resign(d.state):
        raise IllegalCommand("game_over", "The game is over.")
    d.emit(ev.GameEnded(result=side.enemy.value, reason="resignation"))


def abort(d: Decision, side: Faction) -> None:
    """``side`` aborts: the game ends at once with no winner (``GameEnded`` result
    ``aborted``, reason ``abort``). Raises ``IllegalCommand`` ``game_over`` once the game is
    over, ``abort_too_late`` once both sides have made their first move (``may_abort``)."""
    if d.state.phase is Phase.OVER:
        raise IllegalCommand("game_over", "The game is over.")
    if not may_abort(d.state):
        raise IllegalCommand(
            "abort_too_late",
            "Both sides have made their first move: the game can no longer be aborted.",
        )
    d.emit(ev.GameEnded(result=ABORTED, reason="abort"))
