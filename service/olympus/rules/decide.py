"""``decide(state, command) -> events``: judge a command against the state (pure, no I/O).

A command that breaks a rule raises ``IllegalCommand`` and produces no events at all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import combat, setup
from . import commands as cmd
from . import events as ev
from .board import TARTARUS
from .characters import Faction
from .decision import Decision
from .errors import IllegalCommand
from .movement import plan_move
from .powers import POWERS
from .state import GameState, Phase
from .turns import end_turn

LITURGY_ENERGY = 6

Handler = Callable[[Decision, Faction, Any], None]


def _move(d: Decision, side: Faction, c: cmd.Move) -> None:
    plan = plan_move(d.state, side, c.units, c.to, c.fly, c.reveal, c.use_power)
    move = plan.move
    if plan.reveal:
        d.emit(ev.UnitsRevealed(units=plan.reveal))
    if plan.energy:
        d.emit(ev.EnergyChanged(side, -plan.energy, "styx"))
    if plan.honor:
        d.emit(ev.HonorChanged(side, plan.honor, plan.honor_reason))
    stayers = d.state.units_in(move.origin, side)
    attack = d.state.count_in(move.destination, side.enemy) > 0
    d.emit(ev.UnitsMoved(side, move.units, move.origin, move.destination, move.flight))
    # R7: a partial group leaving for a region without enemies hides the whole origin group
    hide = [u for u in stayers if u in d.state.revealed and u not in plan.reveal]
    if hide and not attack and not move.flight and len(move.units) < len(stayers):
        d.emit(ev.UnitsHidden(units=tuple(hide)))
    for unit in move.units:
        if unit in POWERS:
            POWERS[unit].after_move(d, move)
    if d.check_end():
        return
    if attack:
        combat.start_combat(d, move.destination, side, None if move.flight else move.origin, move)
        return
    if (
        len(move.units) == 1
        and move.units[0] in POWERS
        and POWERS[move.units[0]].extra_step(d.state, move)
    ):
        d.emit(ev.ExtraStepOffered(unit=move.units[0]))
        return
    end_turn(d)


def _liturgy(d: Decision, side: Faction, c: cmd.Liturgy) -> None:
    points = 1 if d.state.energy[side] == 0 else 2
    d.emit(ev.LiturgyPerformed(faction=side))
    d.emit(ev.EnergyChanged(side, LITURGY_ENERGY, "liturgy"))
    d.emit(ev.HonorChanged(side, -points, "liturgy"))
    if not d.check_end():
        end_turn(d)


def may_pass(state: GameState, side: Faction) -> bool:
    """R3: only the Olympians, and only when all their units on the board are in Tartarus."""
    units = state.units_of(side)
    return (
        side is Faction.OLYMPIANS
        and bool(units)
        and all(state.positions[u] == TARTARUS for u in units)
    )


def _pass(d: Decision, side: Faction, c: cmd.Pass) -> None:
    if not may_pass(d.state, side):
        raise IllegalCommand(
            "cannot_pass", "Only the Olympians may pass, when all their units are in Tartarus."
        )
    d.emit(ev.Passed(faction=side))
    end_turn(d)


def _end_turn(d: Decision, side: Faction, c: cmd.EndTurn) -> None:
    if d.state.extra_step is None:
        raise IllegalCommand("nothing_to_end", "A turn ends by taking an action.")
    end_turn(d)


_TURN_HANDLERS: dict[type, Handler] = {
    cmd.Move: _move,
    cmd.Liturgy: _liturgy,
    cmd.Pass: _pass,
    cmd.EndTurn: _end_turn,
}
# Leader powers register their "instead of moving" commands here (thunderbolt, recall).
POWER_COMMANDS: dict[type, Handler] = {}

_CHOICE_HANDLERS: dict[type, Handler] = {
    cmd.RemoveUnit: lambda d, side, c: combat.choose_removal(d, side, c.unit),
    cmd.Retreat: lambda d, side, c: combat.choose_retreat(d, side, c.region),
    cmd.Stay: lambda d, side, c: combat.choose_stay(d, side),
}


def _judge(d: Decision, command: cmd.Command) -> None:
    state = d.state
    if isinstance(command, cmd.DrawRandomSetup):
        setup.draw_random(d, command.seed)
        return
    side = command.side
    if side is None:
        raise IllegalCommand("no_side", "The command does not say which side gives it.")
    if state.phase is Phase.OVER:
        raise IllegalCommand("game_over", "The game is over.")
    if isinstance(command, cmd.SubmitSetup):
        setup.submit(d, side, command.placements)
        return
    if state.phase is Phase.SETUP:
        raise IllegalCommand("wrong_phase", "The game is still in its setup.")
    kind = type(command)
    if kind in _CHOICE_HANDLERS:
        _CHOICE_HANDLERS[kind](d, side, command)
        return
    if isinstance(command, cmd.Commit):
        combat.commit(d, side, command.maneuver, command.energy, command.reveal)
        return
    if state.pending:
        raise IllegalCommand("choice_pending", "A choice must be made first.")
    if state.phase is Phase.COMBAT:
        raise IllegalCommand("in_combat", "Finish the combat first.")
    if side is not state.turn:
        raise IllegalCommand("not_your_turn", "It is not your turn.")
    handler = _TURN_HANDLERS.get(kind) or POWER_COMMANDS.get(kind)
    if handler is None:
        raise IllegalCommand("unknown_command", f"{kind.__name__} cannot be played here.")
    if state.extra_step is not None and kind not in (cmd.Move, cmd.EndTurn):
        raise IllegalCommand("extra_step_only", "Move Hermes again or end your turn.")
    handler(d, side, command)


def execute(state: GameState, command: cmd.Command) -> tuple[list[ev.Event], GameState]:
    """The events a command produces and the state they lead to, or ``IllegalCommand``."""
    d = Decision(state)
    _judge(d, command)
    return d.events, d.state


def decide(state: GameState, command: cmd.Command) -> list[ev.Event]:
    """The events a command produces, or ``IllegalCommand``. ``command.side`` is the seat."""
    return execute(state, command)[0]
