"""``legal_actions(state, seat)``: every legal command in a position, with what it costs.

The client warns before a loss of Honor from these figures (as Yucata does) and bots pick from
them. Setup is the one exception: its placements are too many to list; ``random_placements``
draws one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations

from . import combat
from . import commands as cmd
from . import events as ev
from .board import BOARD
from .characters import BY_NAME, Faction
from .decide import execute, may_pass
from .errors import IllegalCommand
from .movement import plan_move
from .powers import POWERS, MoveContext, powers_of
from .state import GameState, Maneuver, Phase, StepKind


@dataclass(frozen=True, slots=True)
class LegalAction:
    command: cmd.Command
    honor: int = 0  # Honor change it causes at once (negative: a loss)
    energy: int = 0  # Energy it spends at once (positive: paid)


# Powers contribute their own "instead of moving" actions (thunderbolt, recall).
POWER_ACTIONS: list[Callable[[GameState, Faction], list[LegalAction]]] = []


def _moves(state: GameState, side: Faction) -> list[LegalAction]:
    actions: list[LegalAction] = []
    origins: dict[int, list[str]] = {}
    for unit in state.units_of(side):
        origins.setdefault(state.positions[unit], []).append(unit)
    for origin, units in origins.items():
        for size in range(1, len(units) + 1):
            for group in combinations(units, size):
                for destination in sorted(BOARD.neighbours(origin)):
                    actions.extend(_variants(state, side, group, destination, False))
        for flier in (u for u in units if BY_NAME[u].flier):
            for destination in range(len(BOARD.regions)):
                if destination != origin:
                    actions.extend(_variants(state, side, (flier,), destination, True))
    return actions


def _variants(
    state: GameState, side: Faction, units: tuple[str, ...], to: int, fly: bool
) -> list[LegalAction]:
    """The legal forms of one move: with or without revealing a unit for its power, with or
    without the movers' optional power."""
    move = MoveContext(side, units, state.positions[units[0]], to, fly, frozenset())
    reveals: list[tuple[str, ...]] = [()] + [
        (u,)
        for u in state.units_of(side)
        if u not in state.revealed and u in POWERS and POWERS[u].may_reveal_for_move(state, move)
    ]
    uses = [False]
    if any(POWERS[u].uses_power_on_move(state, move) for u in units if u in POWERS):
        uses.append(True)
    found = []
    for reveal in reveals:
        for use_power in uses:
            try:
                plan = plan_move(state, side, list(units), to, fly, reveal, use_power)
            except IllegalCommand:
                continue
            command = cmd.Move(
                side=side,
                units=list(units),
                to=to,
                fly=fly,
                reveal=list(reveal),
                use_power=use_power,
            )
            found.append(LegalAction(command, plan.honor, plan.energy))
            found.extend(_extra_steps(state, command))
    return found


def _extra_steps(state: GameState, command: cmd.Move) -> list[LegalAction]:
    """Hermes' paths of one further step (R3); longer paths are legal too, not listed."""
    units = tuple(command.units)
    if command.fly or len(units) > 1 or state.units_in(command.to):
        return []
    move = MoveContext(
        command.side, units, state.positions[units[0]], command.to, False, frozenset()
    )
    if not any(p.takes_extra_steps(state, move) for p in powers_of(units)):
        return []
    found = []
    for step in sorted(BOARD.neighbours(command.to)):
        longer = command.model_copy(update={"steps": [step]})
        try:
            events, _ = execute(state, longer)
        except IllegalCommand:
            continue
        honor = sum(
            e.delta for e in events if isinstance(e, ev.HonorChanged) and e.faction is command.side
        )
        energy = -sum(
            e.delta
            for e in events
            if isinstance(e, ev.EnergyChanged) and e.faction is command.side and e.reason == "styx"
        )
        found.append(LegalAction(longer, honor, energy))
    return found


def _commitments(state: GameState, side: Faction) -> list[LegalAction]:
    try:
        combat.check_commitment(state, side, Maneuver.STANDARD, 0)
    except IllegalCommand as error:
        if error.code != "maneuver_not_allowed":
            return []
    actions = []
    limit = combat.energy_limit(state, side)
    reveals: list[list[str]] = [[]] + [
        [u]
        for u in state.units_of(side)
        if u not in state.revealed and u in POWERS and POWERS[u].may_reveal_in_commit(state, side)
    ]
    for maneuver in sorted(combat.allowed_maneuvers(state, side)):
        for energy in range(limit + 1):
            commitment = combat.Commitment(maneuver, energy)
            honor = -combat.commitment_honor(state, side, commitment)
            for reveal in reveals:
                command = cmd.Commit(side=side, maneuver=maneuver, energy=energy, reveal=reveal)
                actions.append(LegalAction(command, honor, energy))
    return actions


def _choices(state: GameState, side: Faction) -> list[LegalAction]:
    step = state.pending[0]
    if step.faction is not side:
        return []
    if step.kind in (StepKind.REMOVE, StepKind.STRUCK):
        return [
            LegalAction(cmd.RemoveUnit(side=side, unit=u))
            for u in combat.removal_candidates(state, step)
        ]
    units = combat.combatants(state, side)
    points = combat.penalty(
        state, combat.Action(side, tuple(units), "retreat"), "retreat", combat.RETREAT_HONOR
    )
    actions = [
        LegalAction(cmd.Retreat(side=side, region=r), -points)
        for r in combat.retreat_regions(state, side)
    ]
    if step.kind is not StepKind.RETREAT:
        actions.append(LegalAction(cmd.Stay(side=side)))
    return actions


def legal_actions(state: GameState, side: Faction) -> list[LegalAction]:
    if state.phase in (Phase.OVER, Phase.SETUP):
        return []
    if state.pending:
        return _choices(state, side)
    if state.phase is Phase.COMBAT:
        return _commitments(state, side)
    if side is not state.turn:
        return []
    actions = _moves(state, side)
    points = 1 if state.energy[side] == 0 else 2
    actions.append(LegalAction(cmd.Liturgy(side=side), -points, -6))
    if may_pass(state, side):
        actions.append(LegalAction(cmd.Pass(side=side)))
    for contribute in POWER_ACTIONS:
        actions.extend(contribute(state, side))
    return actions
