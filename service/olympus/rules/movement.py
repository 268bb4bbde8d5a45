"""Moves (R3, R5, R6): what may go where, at what cost in Energy and Honor (R4: ``honor.py``).

One judgment of a move for ``decide`` and ``legal_actions`` alike: ``Movers.verdict``. A move
that breaks a rule is refused with the first one it breaks, as ``IllegalCommand`` codes:
``duplicate_units``, ``unknown_unit``, ``not_your_unit``, ``unit_not_on_board``,
``units_not_together``, ``cannot_reveal``, ``same_region``, ``no_power_to_use``,
``cannot_fly``, ``not_adjacent``, ``stack_limit`` (R6), ``styx_energy`` (R5).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from mypy_extensions import mypyc_attr

from .board import BOARD
from .characters import BY_NAME, ORDER, Faction
from .errors import IllegalCommand
from .honor import MoveHonor
from .powers import NOBODY, POWERS, GroupPowers, MoveContext, Power, group_powers, powers_of
from .state import GameState

STACK_LIMIT: Final = 4  # R6
_STACK_LIMIT_SENTENCE: Final = f"At most {STACK_LIMIT} of your units may stand in one region."
STYX_ENERGY: Final = 2  # R5
_ALONE: Final[dict[str, frozenset[str]]] = {name: frozenset((name,)) for name in BY_NAME}


def revealed(reveal: Sequence[str]) -> frozenset[str]:
    """The units a move reveals for their power, as a set (``MoveContext.reveal``). The sets of
    no unit and of one unit are made once: a listing asks for one per candidate that reveals
    someone."""
    if not reveal:
        return NOBODY
    if len(reveal) == 1:
        return _ALONE.get(reveal[0]) or frozenset(reveal)
    return frozenset(reveal)


@mypyc_attr(acyclic=True, free_list_len=1)  # (MoveContext: why)
class Refusal:
    """The first rule a judged move breaks (``Movers.verdict``): what its ``IllegalCommand``
    will say. ``legal_actions`` refuses many candidate moves and reads none of their refusals:
    this is cheaper to make than an exception."""

    __slots__ = ("code", "sentence")

    def __init__(self, code: str, sentence: str) -> None:
        self.code = code
        self.sentence = sentence


@mypyc_attr(acyclic=True, free_list_len=1)  # (MoveContext: why)
class MovePlan:
    """A legal move with what it costs: ``honor`` the Honor change (R4, negative: a loss) and
    its ``honor_reason`` (``move`` or ``attack``), ``energy`` the Energy paid to cross the Styx
    (R5), ``reveal`` the units revealed for it (R3); ``decide`` turns it into events. (A plain
    class with slots, read-only by convention, like ``MoveContext``.)"""

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
    """``units`` in R1 order, once checked to be distinct units of ``faction`` on the board:
    else ``IllegalCommand`` ``duplicate_units``, ``unknown_unit``, ``not_your_unit`` or
    ``unit_not_on_board``."""
    several = len(units) > 1  # most groups are one unit: nothing to compare or sort
    if several and len(set(units)) != len(units):
        raise IllegalCommand("duplicate_units", "A unit was named more than once.")
    for unit in units:
        character = BY_NAME.get(unit)
        if character is None:
            raise IllegalCommand("unknown_unit", f"There is no character called {unit!r}.")
        if character.faction is not faction:
            raise IllegalCommand("not_your_unit", f"{unit} is not one of your units.")
        if unit not in state.positions:
            raise IllegalCommand("unit_not_on_board", f"{unit} is not on the board.")
    return tuple(sorted(units, key=ORDER.__getitem__)) if several else tuple(units)


def check_reveals(
    state: GameState, faction: Faction, units: list[str], useful: Callable[[Power], bool]
) -> tuple[str, ...]:
    """Units to reveal for their power (R3), R1-ordered: own, on the board (``own_units``),
    hidden and of use here (``useful``), else ``IllegalCommand`` ``cannot_reveal``."""
    revealing = own_units(state, faction, units)
    for unit in revealing:
        if unit in state.revealed:
            raise IllegalCommand("cannot_reveal", f"{unit} is revealed already.")
        power = POWERS.get(unit)
        if power is None or not useful(power):
            raise IllegalCommand("cannot_reveal", f"Revealing {unit} does nothing here.")
    return revealing


# One per group, as are its ``MoveHonor`` and the listing's ``_Group``: compiled, made outside
# the cyclic collector and from a free list of one (``MoveContext``; docs/performance.md).
@mypyc_attr(acyclic=True, free_list_len=1)
class Movers:
    """A group about to move: own units on the board standing together (R1-ordered, from
    ``origin``), with what judging a move of theirs asks of the group alone worked out once.

    ``legal_actions`` judges dozens of destinations and forms per group, ``decide`` one: both
    through ``judge``, the one judgment of a move (R3, R5, R6; R4 through ``MoveHonor``).
    ``Movers.of`` checks that a command's units are such a group (``legal_actions`` forms its
    groups from the occupancy index: they are).
    """

    __slots__ = (
        "_adjacent",
        "_crossings",
        "_energy",
        "_own",
        "_revealed_ferrymen",
        "faction",
        "honor",
        "origin",
        "powers",
        "state",
        "units",
    )

    @staticmethod
    def of(state: GameState, faction: Faction, units: Sequence[str]) -> Movers:
        """The group of a command's ``units``; raises ``IllegalCommand`` as ``own_units`` does,
    or ``units_not_together`` if they stand in several regions."""
        movers = own_units(state, faction, list(units))
        origins = {state.positions[u] for u in movers}
        if len(origins) != 1:
            raise IllegalCommand("units_not_together", "A group must move from one region.")
        return Movers(state, faction, movers, origins.pop())

    def __init__(
        self, state: GameState, faction: Faction, movers: tuple[str, ...], origin: int
    ) -> None:
        """``movers``: own units on the board, R1-ordered, all in ``origin``."""
        self.state = state
        self.faction = faction
        self.units = movers
        self.origin = origin
        self._own = state.occupancy.counts[faction]
        self._crossings = BOARD.crossings[self.origin]  # R5: to each region, over the Styx?
        self._adjacent = BOARD.adjacency[self.origin]  # to each region, a step?
        self._energy = state.energy[faction]
        self.powers: GroupPowers = group_powers(movers)  # who may fly, adjust, use, walk on
        self.honor = MoveHonor(state, faction, movers, self.origin, self.powers.honor_penalty)
        self._revealed_ferrymen: tuple[Power, ...] | None = None  # (``_ferrymen``)

    def move(
        self,
        destination: int,
        fly: bool = False,
        reveal: frozenset[str] = NOBODY,
        use_power: bool = False,
    ) -> MoveContext:
        """The move of these units to ``destination``, to be judged (and asked about);
        ``reveal``: see ``revealed``."""
        return MoveContext(
            self.faction, self.units, self.origin, destination, fly, reveal, use_power
        )

    def judge(self, move: MoveContext, reveal: Sequence[str] = ()) -> MovePlan:
        """The plan of ``move`` (one of ``self.move``); ``reveal`` is the list of units to
        reveal as the command gives it (``move.reveal`` is its set). Raises ``IllegalCommand``
        with the first rule it breaks (the module's codes)."""
        plan = self.verdict(move, reveal)
        if isinstance(plan, Refusal):
            raise IllegalCommand(plan.code, plan.sentence)
        return plan

    def verdict(self, move: MoveContext, reveal: Sequence[str] = ()) -> MovePlan | Refusal:
        """``judge``, with the first rule the move breaks returned rather than raised:
        ``legal_actions`` judges every candidate move. (A unit to reveal that may not be
        revealed still raises: candidates never ask that.)"""
        state, movers, destination = self.state, self.units, move.destination
        if destination == self.origin:
            return Refusal("same_region", "The units are already there.")
        newly = self._revealing(move, reveal) if reveal else ()
        if move.use_power and not any(
            p.uses_power_on_move(state, move) for p in self.powers.uses_power_on_move
        ):
            return Refusal("no_power_to_use", "None of these units has a power to use here.")
        if move.flight:
            power = self.powers.flier
            if power is None or not power.flies(state, move):
                return Refusal(
                    "cannot_fly", "Only a single flier, revealed before or by this move, may fly."
                )
        elif not self._adjacent[destination]:
            return Refusal("not_adjacent", f"Region {destination} is not next to {self.origin}.")
        if self._own[destination] + len(movers) > STACK_LIMIT:
            return Refusal("stack_limit", _STACK_LIMIT_SENTENCE)
        energy = self._styx_cost(move)
        if energy > self._energy:
            return Refusal(
                "styx_energy", f"Crossing the Styx costs {energy} Energy and you have less."
            )
        honor, reason = self.honor.of(move)
        return MovePlan(move, honor, reason, energy, newly)

    def _revealing(self, move: MoveContext, reveal: Sequence[str]) -> tuple[str, ...]:
        """The units ``move`` reveals for their power (``check_reveals``). (Apart from
        ``verdict``: a function with a lambda makes the lambda's closure at every call.)"""
        state = self.state
        useful: Callable[[Power], bool] = lambda p: p.may_reveal_for_move(state, move)  # noqa: E731
        return check_reveals(state, self.faction, list(reveal), useful)

    def _styx_cost(self, move: MoveContext) -> int:
        """R5: 2 Energy per crossing move, unless a flight or a power makes it free (Charon).
        Poseidon's +2 Energy comes after the move: the 2 must be there before (D20)."""
        if move.flight or not self._crossings[move.destination]:
            return 0
        for power in self._ferrymen(move.reveal):
            if power.styx_free(self.state, move):
                return 0
        return STYX_ENERGY

    def _ferrymen(self, now: frozenset[str]) -> tuple[Power, ...]:
        """The powers of the side's units revealed before or by the move (``now``) that may
        make a crossing free (R5); those revealed before, asked once for all the group's
        crossings that reveal no one."""
        if not now and self._revealed_ferrymen is not None:
            return self._revealed_ferrymen
        state = self.state
        revealed = state.revealed
        helpers = [u for u in state.units_of(self.faction) if u in revealed or u in now]
        ferrymen = powers_of(helpers, "styx_free")
        if not now:
            self._revealed_ferrymen = ferrymen
        return ferrymen


def plan_move(
    state: GameState,
    faction: Faction,
    units: Sequence[str],
    destination: int,
    fly: bool = False,
    reveal: Sequence[str] = (),
    use_power: bool = False,
) -> MovePlan:
    """The plan of a move as a command gives it; raises ``IllegalCommand`` with the first rule
    it breaks (the module's codes)."""
    movers = Movers.of(state, faction, units)
    return movers.judge(movers.move(destination, fly, revealed(reveal), use_power), reveal)
