"""Moves (R3, R5, R6): what may go where, at what cost in Energy and Honor."""

from __future__ import annotations

from collections.abc import Callable

from .board import BOARD
from .characters import BY_NAME, ORDER, Faction
from .errors import IllegalCommand
from .honor import move_honor
from .powers import POWERS, MoveContext, Power, powers_of
from .state import GameState

STACK_LIMIT = 4  # R6
STYX_ENERGY = 2  # R5


class MovePlan:
    """A legal move with everything it costs; ``decide`` turns it into events. (A plain class
    with slots, read-only by convention, like ``MoveContext``: ``legal_actions`` makes one per
    candidate move.)"""

    __slots__ = ("energy", "honor", "honor_reason", "move", "reveal")

    def __init__(
        self,
        move: MoveContext,
        honor: int,
        honor_reason: str,
        energy: int,  # Energy paid to cross the Styx (R5)
        reveal: tuple[str, ...],  # units revealed for this move (R3)
    ) -> None:
        self.move = move
        self.honor = honor
        self.honor_reason = honor_reason
        self.energy = energy
        self.reveal = reveal


def own_units(state: GameState, faction: Faction, units: list[str]) -> tuple[str, ...]:
    """Check that ``units`` are distinct units of ``faction`` on the board; R1-ordered."""
    if len(set(units)) != len(units):
        raise IllegalCommand("duplicate_units", "A unit was named more than once.")
    for unit in units:
        character = BY_NAME.get(unit)
        if character is None:
            raise IllegalCommand("unknown_unit", f"There is no character called {unit!r}.")
        if character.faction is not faction:
            raise IllegalCommand("not_your_unit", f"{unit} is not one of your units.")
        if unit not in state.positions:
            raise IllegalCommand("unit_not_on_board", f"{unit} is not on the board.")
    return tuple(sorted(units, key=ORDER.__getitem__))


def check_reveals(
    state: GameState, faction: Faction, units: list[str], useful: Callable[[Power], bool]
) -> tuple[str, ...]:
    """Units to reveal for their power (R3): own, on the board, hidden, and of use here."""
    revealing = own_units(state, faction, units)
    for unit in revealing:
        if unit in state.revealed:
            raise IllegalCommand("cannot_reveal", f"{unit} is revealed already.")
        power = POWERS.get(unit)
        if power is None or not useful(power):
            raise IllegalCommand("cannot_reveal", f"Revealing {unit} does nothing here.")
    return revealing


def styx_cost(state: GameState, move: MoveContext) -> int:
    """R5: 2 Energy per crossing move, unless a flight or a power makes it free."""
    if move.flight or not BOARD.crosses_styx(move.origin, move.destination):
        return 0
    helpers = [u for u in state.units_of(move.faction) if u in state.revealed or u in move.reveal]
    if any(p.styx_free(state, move) for p in powers_of(helpers, "styx_free")):
        return 0
    return STYX_ENERGY


def mover_group(
    state: GameState, faction: Faction, units: list[str]
) -> tuple[tuple[str, ...], int]:
    """Check that ``units`` are own units on the board standing together: the R1-ordered movers
    and their region. ``legal_actions`` asks this once per group, not once per destination."""
    movers = own_units(state, faction, units)
    origins = {state.positions[u] for u in movers}
    if len(origins) != 1:
        raise IllegalCommand("units_not_together", "A group must move from one region.")
    return movers, origins.pop()


def plan_move(
    state: GameState,
    faction: Faction,
    units: list[str],
    destination: int,
    fly: bool = False,
    reveal: list[str] | tuple[str, ...] = (),
    use_power: bool = False,
) -> MovePlan:
    """Judge a move; raise ``IllegalCommand`` with the first rule it breaks."""
    movers, origin = mover_group(state, faction, units)
    move = MoveContext(faction, movers, origin, destination, fly, frozenset(reveal), use_power)
    return judge_move(state, move, reveal)


def judge_move(
    state: GameState, move: MoveContext, reveal: list[str] | tuple[str, ...] = ()
) -> MovePlan:
    """Judge ``move`` of a group that ``mover_group`` accepted; ``reveal`` is the list of units
    to reveal as the command gives it (``move.reveal`` is its set). ``plan_move`` is this after
    ``mover_group``; ``legal_actions`` calls it directly with one ``MoveContext`` per candidate,
    which it also asks the powers about."""
    faction, movers, destination = move.faction, move.units, move.destination
    if destination == move.origin:
        raise IllegalCommand("same_region", "The units are already there.")
    newly: tuple[str, ...] = ()
    if reveal:
        newly = check_reveals(
            state, faction, list(reveal), lambda p: p.may_reveal_for_move(state, move)
        )
    if move.use_power and not any(p.uses_power_on_move(state, move) for p in powers_of(movers)):
        raise IllegalCommand("no_power_to_use", "None of these units has a power to use here.")
    if move.flight:
        power = POWERS.get(movers[0]) if len(movers) == 1 else None
        if power is None or not power.flies(state, move):
            raise IllegalCommand(
                "cannot_fly", "Only a single flier, revealed before or by this move, may fly."
            )
    elif not BOARD.adjacent(move.origin, destination):
        raise IllegalCommand("not_adjacent", f"Region {destination} is not next to {move.origin}.")
    if state.count_in(destination, faction) + len(movers) > STACK_LIMIT:
        raise IllegalCommand(
            "stack_limit", f"At most {STACK_LIMIT} of your units may stand in one region."
        )
    energy = styx_cost(state, move)
    if energy > state.energy[faction]:
        raise IllegalCommand(
            "styx_energy", f"Crossing the Styx costs {energy} Energy and you have less."
        )
    honor, reason = move_honor(state, move)
    return MovePlan(move, honor, reason, energy, newly)
