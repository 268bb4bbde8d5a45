"""``legal_actions(state, seat)``: every legal command in a position, with what it costs.

The client warns before a loss of Honor from these figures (as Yucata does) and bots pick from
them. Setup is the one exception: its placements are too many to list; ``random_placements``
draws one.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from functools import cache
from itertools import combinations
from typing import Any, Final

from mypy_extensions import i64, mypyc_attr

from . import combat
from . import commands as cmd
from . import events as ev
from .board import BOARD
from .characters import CHARACTERS, ORDER, Faction
from .decide import begin_steps, make_move, may_pass, next_step, takes_extra_steps
from .decision import Decision
from .errors import IllegalCommand
from .honor import penalty
from .movement import MovePlan, Movers, Refusal, revealed
from .powers import POWERS, Action, MoveContext, Power, powers_of
from .state import GameState, Maneuver, Phase, StepKind


@mypyc_attr(acyclic=True)
class LegalAction:
    """A legal command with what it costs at once: ``honor``, the Honor change (negative: a
    loss), and ``energy``, the Energy spent (positive: paid).

    ``wire`` is the command as a client sends it: exactly
    ``command.model_dump(mode="json", exclude=SERVICE_FIELDS)``; shared, not to be mutated.

    Moves and commitments (dozens per position, listed after every command) are listed by their
    ``wire`` alone; the pydantic ``command`` is built from it only when asked for (the bots ask
    for the one they play, tests for all), because validating every listed command cost more
    than judging it. A move's ``wire`` itself is built on first use from a tuple of its fields
    (``move``): a bot or a playout reads the costs of every action and the form of one.
    Equality, hashing and repr are those of (command, honor, energy).

    One plain constructor (no ``__new__`` tricks), so that mypyc compiles it to a native class;
    ``of`` wraps a command that is already built. Compiled, outside the cyclic garbage
    collector (``acyclic``: dozens are made per listing; untracked, they are cheaper to make and
    free and never bring a collection nearer): what it holds never refers back to it (a command
    class, a pydantic command, its wire of plain values, ints and its key).
    """

    __slots__ = (
        "_command",
        "_given",
        "_group_key",
        "_key",
        "_kind",
        "_listed",
        "_move",
        "_side",
        "_wire",
        "energy",
        "honor",
    )

    def __init__(
        self,
        kind: type[cmd.Command],
        side: Faction | None,
        honor: int,
        energy: int,
        wire: dict[str, Any] | None = None,
        given: tuple[str, ...] = (),
        move: MoveFields | None = None,
        command: cmd.Command | None = None,
        group_key: int = 0,
    ) -> None:
        """The action whose command is ``kind(side=side, **{f: wire[f] for f in given})``
        (``wire`` must be its client form: tests/test_legal.py checks), or the move of
        ``move``'s fields (``group_key``: its units' part of its key, ``units_key``, as its
        group has it), or ``command`` itself."""
        self._kind = kind
        self._side = side
        self.honor = honor
        self.energy = energy
        self._wire = wire
        self._given = given
        self._move = move
        self._command = command
        self._group_key = group_key
        self._key: object = None
        self._listed = command is None  # made ``of`` a command: no key (``key``)

    @classmethod
    def of(cls, command: cmd.Command, honor: int = 0, energy: int = 0) -> LegalAction:
        """The action of a command already built (as a client sends it, without a side, or as
        the service passes it on, with one)."""
        return cls(type(command), command.side, honor, energy, command=command)

    @property
    def type(self) -> str:
        """The command's ``type`` tag (``move``, ``commit``…), read without building it."""
        return _type_tag(self._kind)

    @property
    def command(self) -> cmd.Command:
        command = self._command
        if command is None:
            wire = self.wire
            fields = {name: wire[name] for name in self._given}
            command = self._command = self._kind(side=self._side, **fields)
        return command

    @property
    def wire(self) -> dict[str, Any]:
        wire = self._wire
        if wire is None:
            move = self._move
            if move is not None:
                units, to, fly, reveal, use_power, steps = move
                wire = {
                    "type": "move",
                    "units": list(units),
                    "to": to,
                    "fly": fly,
                    "reveal": list(reveal),
                    "use_power": use_power,
                    "steps": list(steps),
                }
            else:
                wire = self.command.model_dump(mode="json", exclude=set(cmd.SERVICE_FIELDS))
            self._wire = wire
        return wire

    @property
    def key(self) -> object:
        """A hashable stand-in for what the action lists (its ``wire``, ``honor`` and
        ``energy``), at hand without building the wire: two actions with equal keys list the
        same. For callers that keep what they derive from it (the service's encoded ``legal``
        entries, looked up dozens of times a position). A listed move's is one int
        (``_move_key``: hashed and compared at once, where a tuple of its fields was a deep
        compare), another listed action's the negative int its class, given fields (lists as
        tuples) and costs are numbered by (``_numbered``); None for an action made ``of`` a
        command. Kept once made: the listed commitments of a combat are the same objects from
        position to position.

        Made when first asked for, not when listed: a bot's playouts and searches never ask,
        and packing a move's key was a tenth of listing a turn position's moves."""
        key = self._key
        if key is None and self._listed:
            move = self._move
            if move is not None:
                group_key = self._group_key or units_key(move[0])  # (made without its group)
                key = listed_move_key(group_key, move, self.honor, self.energy)
            elif self._wire is not None:
                given = [self._wire[f] for f in self._given]
                fields = tuple([tuple(v) if isinstance(v, list) else v for v in given])
                key = _numbered((self._kind, fields, self.honor, self.energy))
            self._key = key
        return key

    def _identity(self) -> tuple[cmd.Command, int, int]:
        return (self.command, self.honor, self.energy)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LegalAction):
            return NotImplemented
        return self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def __repr__(self) -> str:
        return (
            f"LegalAction(command={self.command!r}, honor={self.honor!r}, energy={self.energy!r})"
        )


# Each listed action other than a move, as a tuple of its class, given fields and costs, by
# the number that is its key (``LegalAction.key``): negative, so never a move's. An int hashes
# at once, where the tuple was hashed field by field at every lookup of its entry (a combat's
# commitments are looked up in every position of it). As many as there are such actions:
# commitments, choices and powers' actions with their costs, a few thousand. Never forgotten:
# a number given again to another action would find the other's held entry.
_NUMBERS: Final[dict[tuple[object, ...], int]] = {}


def _numbered(listed: tuple[object, ...]) -> int:
    """The number of ``listed`` (a non-move's class, given fields and costs), given on first
    use: -1, -2, …"""
    number = _NUMBERS.get(listed)
    if number is None:
        number = _NUMBERS[listed] = -1 - len(_NUMBERS)
    return number


@cache
def _type_tag(kind: type[cmd.Command]) -> str:
    tag: str = kind.model_fields["type"].default
    return tag


# Powers contribute their own "instead of moving" actions (thunderbolt, recall).
POWER_ACTIONS: Final[list[Callable[[GameState, Faction], list[LegalAction]]]] = []

# Destinations from each region, in the order they are listed: of a step, of a flight.
_STEPS: Final = tuple(tuple(sorted(BOARD.neighbours(r))) for r in range(len(BOARD.regions)))
_FLIGHTS: Final = tuple(
    tuple(to for to in range(len(BOARD.regions)) if to != r) for r in range(len(BOARD.regions))
)

Form = tuple[tuple[str, ...], bool]  # a move's (units revealed for their power, use_power)
# A listed move's fields: (units, to, fly, reveal, use_power, steps), as in its ``wire``.
MoveFields = tuple[tuple[str, ...], int, bool, tuple[str, ...], bool, tuple[int, ...]]
_PLAIN: Final[tuple[Form, ...]] = (((), False),)  # the only form of most moves
_USE: Final[tuple[Form, ...]] = (((), False), ((), True))  # without, with the movers' power


# The fields ``legal_actions`` has always passed to ``cmd.Move`` (``steps`` only for a walk):
# the listed command is built with the same ones, so that it has the same ``model_fields_set``.
# (Typed tuple[str, ...]: mypyc keeps a tuple of fixed length unboxed and would box it anew at
# every use.)
_MOVE_GIVEN: Final[tuple[str, ...]] = ("units", "to", "fly", "reveal", "use_power")
_WALK_GIVEN: Final[tuple[str, ...]] = (*_MOVE_GIVEN, "steps")
_COMMIT_GIVEN: Final[tuple[str, ...]] = ("maneuver", "energy", "reveal")
_MOVE: Final = cmd.Move  # read once per listed move: a constant, not a module attribute


def _move_fields(move: MoveContext, reveal: tuple[str, ...], steps: tuple[int, ...]) -> MoveFields:
    """The listed ``cmd.Move`` of ``move``'s fields, as a client sends them."""
    return (move.units, move.destination, move.flight, reveal, move.use_power, steps)


# A listed move's key (``LegalAction.key``) packs its fields and costs into the bits of one
# int, each field in a range of its own: the units as one bit each (by ORDER), the
# destination, a revealed unit and a further step each as 0 (none) or 1 + its number, the two
# flags, then Honor and Energy offset by half their range. Below 2**62, an int mypyc keeps
# unboxed. A move outside these ranges (more than one unit revealed or one further step, a
# cost beyond ±127) has none, and its key is the tuple of its fields (``LegalAction.key``).
# The packed bits are then spread (``_spread``) to make the key (``_move_key``).
_UNIT_BITS: Final = len(ORDER)
_REGION_BITS: Final = (len(BOARD.regions) + 1).bit_length()
_UNIT_CODE_BITS: Final = (len(ORDER) + 1).bit_length()
_COST_BITS: Final = 8
_TO_AT: Final = _UNIT_BITS
_REVEAL_AT: Final = _TO_AT + _REGION_BITS
_STEP_AT: Final = _REVEAL_AT + _UNIT_CODE_BITS
_FLY_AT: Final = _STEP_AT + _REGION_BITS
_HONOR_AT: Final = _FLY_AT + 2
_ENERGY_AT: Final = _HONOR_AT + _COST_BITS
_COST_OFFSET: Final = 1 << (_COST_BITS - 1)
assert _ENERGY_AT + _COST_BITS <= 62


def _units_mask(units: tuple[str, ...]) -> int:
    """The bits of ``units`` in a move's key: R1-ordered (as every listed group is), so the
    set tells the tuple."""
    mask = 0
    for unit in units:
        mask |= 1 << ORDER[unit]
    return mask


# The shifts of ``_spread``: a dict finds an int key by its low bits first (an int's hash is
# itself), and as packed the low bits are the units', the same for every move of a group: a
# lookup probed 5.5 slots on average. Folding the high bits into the low ones with these
# xor-shifts (each a bijection, so distinct keys stay distinct) brings that to 1.4, as for
# random keys (the moves of 60 games, docs/performance.md).
_SPREAD: Final[tuple[int, int, int]] = (7, 13, 24)


def _spread(packed: i64) -> i64:
    """``packed`` with its high bits folded into its low ones, a bijection below 2**62.
    (``i64``: compiled, machine words throughout; interpreted, an int.)"""
    a, b, c = _SPREAD
    packed ^= packed >> a
    packed ^= packed >> b
    return packed ^ (packed >> c)


def units_key(units: tuple[str, ...]) -> int:
    """The spread of ``units``' bits (``_units_mask``): the part of a move's key its group
    gives, worked out once per group. (``_spread`` is linear over the bits, a xor of shifts:
    the spread of fields packed in bits apart is the xor of each one's spread.)"""
    return _spread(_units_mask(units))


def _move_key(
    group_key: int,
    to: int,
    fly: bool,
    reveal: tuple[str, ...],
    use_power: bool,
    steps: tuple[int, ...],
    honor: int,
    energy: int,
) -> int | None:
    """``_spread`` of the move's fields and costs packed above its units' bits (``group_key``:
    their ``units_key``), or None if one does not fit its range.

    Packed and spread in ``i64`` words, which the compiled code keeps in registers, where a
    spread looked up per field from tables was an int unboxed at every lookup: the key's own
    instructions fell by half (docs/performance.md). The fields come one by one, as a
    listing has them (``listed_key``): no tuple of them is made for a listed move whose entry
    is held."""
    if len(reveal) > 1 or len(steps) > 1:
        return None
    if not (-_COST_OFFSET <= honor < _COST_OFFSET and -_COST_OFFSET <= energy < _COST_OFFSET):
        return None
    packed: i64 = i64(to) << _TO_AT
    packed |= i64(honor + _COST_OFFSET) << _HONOR_AT
    packed |= i64(energy + _COST_OFFSET) << _ENERGY_AT
    if reveal:
        packed |= i64(ORDER[reveal[0]] + 1) << _REVEAL_AT
    if steps:
        packed |= i64(steps[0] + 1) << _STEP_AT
    flags: i64 = 0  # (a variable: mypyc's C would shift a constant 1 as a 32-bit int)
    if fly:
        flags |= 1
    if use_power:
        flags |= 2
    packed |= flags << _FLY_AT
    return group_key ^ _spread(packed)


def listed_move_key(group_key: int, fields: MoveFields, honor: int, energy: int) -> object:
    """``LegalAction.key`` of the listed move of ``fields`` and costs (``group_key``: its
    units' ``units_key``): the int, or beyond its ranges the tuple of its fields and costs."""
    _, to, fly, reveal, use_power, steps = fields
    key: object = _move_key(group_key, to, fly, reveal, use_power, steps, honor, energy)
    return (fields, honor, energy) if key is None else key


def listed_key(
    move: MoveContext,
    group_key: int,
    reveal: tuple[str, ...],
    steps: tuple[int, ...],
    honor: int,
    energy: int,
) -> object:
    """``listed_move_key`` of a move as ``Listing.move`` is given it: the same key, without
    the tuple of its fields unless it is beyond the int's ranges."""
    key: object = _move_key(
        group_key, move.destination, move.flight, reveal, move.use_power, steps, honor, energy
    )
    return (_move_fields(move, reveal, steps), honor, energy) if key is None else key


def listed_move(
    move: MoveContext,
    group_key: int,
    reveal: tuple[str, ...],
    steps: tuple[int, ...],
    honor: int,
    energy: int,
) -> LegalAction:
    """The ``LegalAction`` of a listed move (``Listing.move``)."""
    given = _WALK_GIVEN if steps else _MOVE_GIVEN
    fields = _move_fields(move, reveal, steps)
    return LegalAction(_MOVE, move.faction, honor, energy, None, given, fields, None, group_key)


class Listing:
    """Where ``list_legal`` puts what it finds, in order: ``ListedActions`` keeps the actions
    (``legal_actions``).

    A caller that reads only each listed move's key (the service's ``legal`` frame looks up
    an entry encoded before by it) derives its own ``Listing`` and takes ``move``'s fields
    as they come: making, keying and freeing a ``LegalAction`` per move cost about 1,200
    instructions of the ~8,800 a listed move costs in all (docs/performance.md)."""

    def move(
        self,
        move: MoveContext,
        group_key: int,
        reveal: tuple[str, ...],
        steps: tuple[int, ...],
        honor: int,
        energy: int,
    ) -> None:
        """A legal move: ``move`` judged, ``group_key`` its units' part of its key
        (``units_key``), the units it reveals for their power, its further steps (Hermes),
        and its costs: its listed fields are ``move``'s and these (``MoveFields``)."""
        raise NotImplementedError

    def extend(self, actions: list[LegalAction]) -> None:
        """Legal actions other than moves."""
        raise NotImplementedError


class ListedActions(Listing):
    """The listed actions themselves, in order."""

    def __init__(self) -> None:
        self.actions: list[LegalAction] = []

    def move(
        self,
        move: MoveContext,
        group_key: int,
        reveal: tuple[str, ...],
        steps: tuple[int, ...],
        honor: int,
        energy: int,
    ) -> None:
        self.actions.append(listed_move(move, group_key, reveal, steps, honor, energy))

    def extend(self, actions: list[LegalAction]) -> None:
        self.actions += actions


def _revealers(state: GameState, side: Faction) -> list[tuple[str, Power]]:
    """Hidden units that might be revealed for a move: the same for every candidate move."""
    hidden = [u for u in state.units_of(side) if u not in state.revealed]
    return [(p.unit, p) for p in powers_of(hidden, "may_reveal_for_move")]


def _groups(state: GameState, side: Faction) -> list[tuple[tuple[str, ...], bool]]:
    """Every (units, fly) group that may try to move, in the order its moves are listed: by
    region, every combination of the units there by size, then each flier alone, flying."""
    positions = state.positions
    origins: dict[int, list[str]] = {}
    for unit in state.units_of(side):
        region = positions[unit]
        here = origins.get(region)
        if here is None:
            origins[region] = [unit]
        else:
            here.append(unit)
    groups: list[tuple[tuple[str, ...], bool]] = []
    for units in origins.values():
        for unit in units:  # one alone: no combinations object to make
            groups.append(((unit,), False))
        for size in range(2, len(units) + 1):
            for group in combinations(units, size):
                groups.append((group, False))
        for unit in units:
            if unit in _FLIERS:
                groups.append(((unit,), True))
    return groups


_FLIERS: Final = frozenset(c.name for c in CHARACTERS if c.flier)


@mypyc_attr(acyclic=True, free_list_len=1)  # one per group (Movers: why)
class _Group:
    """What listing a group's moves asks of the group alone, once for all its destinations."""

    __slots__ = ("fly", "group_key", "movers", "users", "walks")

    def __init__(self, state: GameState, side: Faction, units: tuple[str, ...], fly: bool) -> None:
        # a group of ``_groups``: own units on the board, R1-ordered, together (no check needed)
        self.movers = Movers(state, side, units, state.positions[units[0]])
        self.group_key = units_key(units)  # its moves' keys' part
        self.fly = fly
        # the movers' optional powers (use_power); Hermes alone, walking: paths of further steps
        powers = self.movers.powers
        self.users = powers.uses_power_on_move
        self.walks = not fly and len(units) == 1 and bool(powers.takes_extra_steps)

    @property
    def destinations(self) -> tuple[int, ...]:
        return _destinations(self.movers.origin, self.fly)


def _destinations(origin: int, fly: bool) -> tuple[int, ...]:
    """Where a group from ``origin`` may try to go: each neighbour, or by flight everywhere."""
    return _FLIGHTS[origin] if fly else _STEPS[origin]


def _moves(listing: Listing, state: GameState, side: Faction) -> None:
    revealers = _revealers(state, side)
    for units, fly in _groups(state, side):
        group = _Group(state, side, units, fly)
        for to in group.destinations:
            _destination_moves(listing, state, group, to, revealers)


def _destination_moves(
    listing: Listing,
    state: GameState,
    group: _Group,
    to: int,
    revealers: list[tuple[str, Power]],
) -> None:
    """Add the legal moves of ``group`` to ``to`` in every form: with or without revealing a
    unit for its power, with or without the movers' optional power; and Hermes' paths of one
    further step."""
    movers, fly = group.movers, group.fly
    move = movers.move(to, fly)
    forms = _forms(state, move, revealers, group.users) if revealers or group.users else _PLAIN
    for reveal, use_power in forms:
        variant = move
        if reveal or use_power:
            variant = movers.move(to, fly, revealed(reveal), use_power)
        plan = movers.verdict(variant, reveal)
        if isinstance(plan, Refusal):
            continue
        listing.move(variant, group.group_key, reveal, (), plan.honor, plan.energy)
        if group.walks and not state.occupied(to):
            _extra_steps(listing, state, plan, group.group_key, reveal)


def _forms(
    state: GameState,
    move: MoveContext,
    revealers: list[tuple[str, Power]],
    users: tuple[Power, ...],
) -> tuple[Form, ...]:
    """The (reveal, use_power) forms of ``move`` worth judging, in the order they are listed:
    with or without each hidden unit whose power may be revealed for it (none first), each
    without and then with the movers' optional power if they have one to use here. Most
    candidates have one form, or two: their tuples are made once (``_PLAIN``, ``_USE``)."""
    use = False
    for user in users:
        if user.uses_power_on_move(state, move):
            use = True
            break
    forms: list[Form] | None = None  # (none made for most candidates)
    for unit, power in revealers:
        if power.may_reveal_for_move(state, move):
            if forms is None:
                forms = list(_USE if use else _PLAIN)
            forms.append(((unit,), False))
            if use:
                forms.append(((unit,), True))
    if forms is None:
        return _USE if use else _PLAIN
    return tuple(forms)


def _extra_steps(
    listing: Listing,
    state: GameState,
    plan: MovePlan,
    group_key: int,
    reveal: tuple[str, ...],
) -> None:
    """Hermes' paths of one further step (R3) after the first step ``plan`` to an empty region;
    longer paths are legal too, not listed.

    The first step is made once, by ``decide``'s own ``make_move`` and ``begin_steps``, not
    once per path; each further step is then judged by ``decide``'s ``next_step``, without
    being made: what it costs this side is what ``make_move`` would charge for its plan (its
    Honor and Styx Energy); the rest of executing it (a meeting, the end of the turn) charges
    this side nothing. ``tests/test_legal.py`` checks the figures against the events of
    executing every listed path, as they used to be counted.
    """
    if not takes_extra_steps(state, plan.move):
        return
    side, units = plan.move.faction, list(plan.move.units)
    d = Decision(state)
    if make_move(d, plan):
        return  # he stopped (the game is over): no further step
    begin_steps(d, units)
    honor = sum(e.delta for e in d.events if isinstance(e, ev.HonorChanged) and e.faction is side)
    energy = -sum(
        e.delta
        for e in d.events
        if isinstance(e, ev.EnergyChanged) and e.faction is side and e.reason == "styx"
    )
    try:
        walker = next_step(d, units, plan)
    except IllegalCommand:
        return  # he stopped
    for step in _STEPS[plan.move.destination]:
        further = walker.verdict(walker.move(step))
        if isinstance(further, Refusal):
            continue
        honor_, energy_ = honor + further.honor, energy + further.energy
        listing.move(plan.move, group_key, reveal, (step,), honor_, energy_)


# The commitment lists of the combat positions seen, by everything they are made of: a combat
# asks for the same few again and again (each round, each position of each game).
_COMMITMENTS: Final[dict[tuple[object, ...], tuple[LegalAction, ...]]] = {}
_COMMITMENTS_KEPT: Final = 4096


def _commitments(state: GameState, side: Faction) -> list[LegalAction]:
    try:
        combat.check_turn_to_commit(state, side)
    except IllegalCommand:
        return []
    limit = combat.energy_limit(state, side)
    reveals = tuple(
        (u,)
        for u in state.units_of(side)
        if u not in state.revealed and u in POWERS and POWERS[u].may_reveal_in_commit(state, side)
    )
    maneuvers = tuple(sorted(combat.allowed_maneuvers(state, side)))
    prices = combat.commitment_prices(state, side)
    key = (side, maneuvers, limit, reveals, prices)
    listed = _COMMITMENTS.get(key)
    if listed is None:
        listed = tuple(_list_commitments(side, maneuvers, limit, ((), *reveals), prices))
        if len(_COMMITMENTS) >= _COMMITMENTS_KEPT:
            _COMMITMENTS.clear()
        _COMMITMENTS[key] = listed
    return list(listed)


def _list_commitments(
    side: Faction,
    maneuvers: tuple[Maneuver, ...],
    limit: int,
    reveals: tuple[tuple[str, ...], ...],
    prices: combat.CommitmentPrices,
) -> Iterator[LegalAction]:
    for maneuver in maneuvers:
        name = maneuver.value
        for energy in range(limit + 1):
            honor = -combat.commitment_price(prices, maneuver, energy)
            for reveal in reveals:
                wire = {
                    "type": "commit",
                    "maneuver": name,
                    "energy": energy,
                    "reveal": list(reveal),
                }
                yield LegalAction(cmd.Commit, side, honor, energy, wire, _COMMIT_GIVEN)


def _choices(state: GameState, side: Faction) -> list[LegalAction]:
    step = state.pending[0]
    if step.faction is not side:
        return []
    if step.kind in (StepKind.REMOVE, StepKind.STRUCK):
        return [
            LegalAction(cmd.RemoveUnit, side, 0, 0, {"type": "remove_unit", "unit": u}, ("unit",))
            for u in combat.removal_candidates(state, step)
        ]
    units = combat.combatants(state, side)
    points = penalty(
        state, Action(side, tuple(units), "retreat"), "retreat", combat.RETREAT_HONOR
    )
    actions = [
        LegalAction(cmd.Retreat, side, -points, 0, {"type": "retreat", "region": r}, ("region",))
        for r in combat.retreat_regions(state, side)
    ]
    if step.kind is not StepKind.RETREAT:
        actions.append(LegalAction(cmd.Stay, side, 0, 0, {"type": "stay"}))
    return actions


def _instead_of_moving(state: GameState, side: Faction) -> list[LegalAction]:
    """A turn's actions other than moves: the Liturgy, passing, the leaders' powers."""
    points = 1 if state.energy[side] == 0 else 2
    actions = [LegalAction(cmd.Liturgy, side, -points, -6, {"type": "liturgy"})]
    if may_pass(state, side):
        actions.append(LegalAction(cmd.Pass, side, 0, 0, {"type": "pass"}))
    for contribute in POWER_ACTIONS:
        actions.extend(contribute(state, side))
    return actions


def _acts_in_turn(state: GameState, side: Faction) -> bool:
    """Whether ``side`` chooses a turn's action now (a move, the Liturgy…)."""
    return not state.pending and state.phase is Phase.TURN and side is state.turn


def lists_nothing(state: GameState, side: Faction) -> bool:
    """Whether ``legal_actions(state, side)`` is empty, known without listing anything: the
    game is over or in its setup, a choice or the turn is the other side's: ``legal_actions``
    asks it first. False in a combat: a side that has committed is only known by trying."""
    if state.phase in (Phase.OVER, Phase.SETUP):
        return True
    if state.pending:
        return state.pending[0].faction is not side
    return state.phase is not Phase.COMBAT and not _acts_in_turn(state, side)


def legal_actions(state: GameState, side: Faction) -> list[LegalAction]:
    listing = ListedActions()
    list_legal(listing, state, side)
    return listing.actions


def list_legal(listing: Listing, state: GameState, side: Faction) -> None:
    """``legal_actions`` into ``listing``, in the same order."""
    if lists_nothing(state, side):
        return
    # Build the index: listing the moves asks hundreds of questions of the state, listing the
    # commitments a few dozen of the combat's region.
    state.occupancy  # noqa: B018
    if state.pending:
        listing.extend(_choices(state, side))
    elif state.phase is Phase.COMBAT:
        listing.extend(_commitments(state, side))
    else:
        _moves(listing, state, side)
        listing.extend(_instead_of_moving(state, side))


def waiting_reason(state: GameState, side: Faction) -> str:
    """Why ``side`` has nothing to do, when ``legal_actions`` lists nothing for it (and it has
    no setup to submit, ``setup_options``): said with the empty list, so that a client can tell
    "nothing to do now" from "options still coming". Made of public facts only: the phase,
    whose turn or choice it is, which sides have committed (their ``combat_committed`` events
    reach everyone)."""
    if state.phase is Phase.OVER:
        return "game_over"
    if state.phase is Phase.SETUP:
        return "random_setup" if state.options.random_setup else "opponent_setup"
    if state.pending:
        return "opponent_choice"
    if state.phase is Phase.COMBAT:
        committed = state.combat is not None and side in state.combat.commitments
        return "committed" if committed else "opponent_commits_first"
    return "opponent_turn"


def random_legal_action(state: GameState, side: Faction, rng: random.Random) -> LegalAction | None:
    """One of ``legal_actions(state, side)`` at random, for playouts: None when there is none.

    In a turn it does not list every move: it draws (group, destination) candidates at random,
    without repeats, and judges only those it draws until one has a legal move, then returns
    one of that destination's moves at random; each action other than a move (the Liturgy,
    passing, a leader's power) is a candidate of its own. So every legal action can come, by
    the same judging as ``legal_actions`` (tests/test_legal.py checks both), though not all
    equally often: a destination with several forms of a move is one candidate. Elsewhere
    (combat, choices) the lists are short and it draws from the whole list.
    """
    if state.pending or state.phase is not Phase.TURN:
        actions = legal_actions(state, side)
        return rng.choice(actions) if actions else None
    if not _acts_in_turn(state, side):
        return None
    state.occupancy  # noqa: B018 -- the same index as for listing
    others = _instead_of_moving(state, side)
    groups = _groups(state, side)
    slots = [
        (g, to)
        for g, (units, fly) in enumerate(groups)
        for to in _destinations(state.positions[units[0]], fly)
    ]
    judged: dict[int, _Group] = {}
    revealers = _revealers(state, side)
    remaining = len(slots) + len(others)
    while remaining:
        k = rng.randrange(remaining)
        remaining -= 1
        if k >= len(slots):
            return others[k - len(slots)]
        g, to = slots[k]
        slots[k] = slots[-1]
        slots.pop()
        group = judged.get(g)
        if group is None:
            group = judged[g] = _Group(state, side, *groups[g])
        listing = ListedActions()
        _destination_moves(listing, state, group, to, revealers)
        if listing.actions:
            return rng.choice(listing.actions)
    return None
