"""An encoding of listed actions: the form a legal action is carried in, and the keys its
client form is cached by.

Which actions are legal and what they cost is ``legal.py``'s; this module is how they are
handed over, shaped for speed (docs/performance.md):

- ``LegalAction``: a legal command with its Honor and Energy cost, carried in its client form
  (``wire``), the pydantic command built from it only when asked for.
- ``LegalAction.key``: a hashable stand-in for what an action lists, by which the service keeps
  each encoded ``legal`` entry: a listed move's packs its fields and costs into one int
  (``listed_move_key``), another listed action's is a negative number (``_numbered``).
- ``Listing``: where ``legal.list_legal`` puts what it finds: ``ListedActions`` keeps the
  ``LegalAction`` objects; a caller that needs only each move's key (the service's ``legal``
  frames) takes the move's fields as they come (``listed_key``) and makes no object for an
  entry it holds.
- the commitments of the combat positions seen, kept (``held_commitments``).
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

from mypy_extensions import i64, mypyc_attr

from . import commands as cmd
from .board import BOARD
from .characters import ORDER, Faction
from .powers import MoveContext

# A listed move's fields: (units, to, fly, reveal, use_power, steps), as in its ``wire``.
MoveFields = tuple[tuple[str, ...], int, bool, tuple[str, ...], bool, tuple[int, ...]]


@mypyc_attr(acyclic=True)  # compiled, outside the cyclic collector: it never refers back to itself
class LegalAction:
    """A legal command with what it costs at once: ``honor``, the Honor change (negative: a
    loss), and ``energy``, the Energy spent (positive: paid; the Liturgy's −6 is a gain).

    ``wire`` is the command as a client sends it: exactly
    ``command.model_dump(mode="json", exclude=SERVICE_FIELDS)``; shared, not to be mutated.
    ``command`` is the pydantic command, built from ``wire`` on first use, and ``type`` its tag;
    a listed move's ``wire`` is itself built on first use from its fields (``MoveFields``).
    ``key`` stands for what it lists. Equality, hashing and repr are those of
    (command, honor, energy). ``outcome``, set on a move whose meeting at its destination
    eliminates units at once (``legal``: Cronus meeting Zeus, Demeter meeting Persephone, a
    sneak attack), is (the units it eliminates, the game's result if it ends it), else None.
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
        "outcome",
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
        """One of three: the action whose command is
        ``kind(side=side, **{f: wire[f] for f in given})`` (``wire`` its client form:
        tests/test_legal.py checks); the move of ``move``'s fields (``group_key``: its units'
        ``units_key``, or 0 to work it out); or ``command`` itself (``of``)."""
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
        self.outcome: tuple[tuple[str, ...], str | None] | None = None

    @classmethod
    def of(cls, command: cmd.Command, honor: int = 0, energy: int = 0) -> LegalAction:
        """The action of a command already built (as a client sends it, without a side, or as
        the service passes it on, with one). It has no ``key``."""
        return cls(type(command), command.side, honor, energy, command=command)

    @property
    def type(self) -> str:
        """The command's ``type`` tag (``move``, ``commit``…), read without building it."""
        return _type_tag(self._kind)

    @property
    def command(self) -> cmd.Command:
        """The pydantic command, built from ``wire`` on first use."""
        command = self._command
        if command is None:
            wire = self.wire
            fields = {name: wire[name] for name in self._given}
            command = self._command = self._kind(side=self._side, **fields)
        return command

    @property
    def wire(self) -> dict[str, Any]:
        """The command as a client sends it (not to be mutated)."""
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
        ``energy``): two listed actions with equal keys list the same. A listed move's is an
        int (``listed_move_key``; beyond the int's ranges the tuple of its fields and costs),
        another listed action's a negative int (``_numbered``); None for an action made ``of``
        a command. Made on first use and kept: the listed commitments of a combat are the same
        objects from position to position (``held_commitments``)."""
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
            if self.outcome is not None:  # what it lists includes what its meeting does
                key = (key, self.outcome)
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


@cache
def _type_tag(kind: type[cmd.Command]) -> str:
    tag: str = kind.model_fields["type"].default
    return tag


# --- the keys of listed actions other than moves ---------------------------------------------

# Each listed action other than a move, as (class, given fields, costs), by its key: -1, -2, …
# in the order first listed. A few thousand (commitments, choices, the powers' actions), never
# forgotten: a number given again to another action would find the other's held entry.
_NUMBERS: Final[dict[tuple[object, ...], int]] = {}


def _numbered(listed: tuple[object, ...]) -> int:
    """The number of ``listed`` (a non-move's class, given fields and costs), given on first
    use: -1, -2, …"""
    number = _NUMBERS.get(listed)
    if number is None:
        number = _NUMBERS[listed] = -1 - len(_NUMBERS)
    return number


# --- the keys of listed moves ----------------------------------------------------------------

# A listed move's key packs its fields and costs into the bits of one int, each field in a
# range of its own: the units as one bit each (by ORDER), the destination, a revealed unit and
# a further step each as 0 (none) or 1 + its number, the two flags, then Honor and Energy
# offset by half their range; the packed bits are then spread (``_spread``). Below 2**62: a
# machine word, compiled. A move beyond these ranges (more than one unit revealed or one
# further step, a cost beyond −128…127) is keyed by the tuple of its fields and costs.
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

# The shifts of ``_spread``. A dict finds an int key by its low bits first, and as packed the
# low bits are the units', the same for every move of a group: spread, the keys probe as few
# slots as random ones would (docs/performance.md).
_SPREAD: Final[tuple[int, int, int]] = (7, 13, 24)


def _units_mask(units: tuple[str, ...]) -> int:
    """The bits of ``units`` in a move's key: R1-ordered (as every listed group is), so the
    set tells the tuple."""
    mask = 0
    for unit in units:
        mask |= 1 << ORDER[unit]
    return mask


def _spread(packed: i64) -> i64:
    """``packed`` with its high bits folded into its low ones by three xor-shifts: a bijection
    below 2**62, and linear over the bits."""
    a, b, c = _SPREAD
    packed ^= packed >> a
    packed ^= packed >> b
    return packed ^ (packed >> c)


def units_key(units: tuple[str, ...]) -> int:
    """The part of a move's key its units give: the spread of their bits (``_units_mask``),
    worked out once per group. (``_spread`` is linear: the spread of fields packed in bits
    apart is the xor of each one's spread.)"""
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
    """The key of a move whose units' part is ``group_key`` (``units_key``): the spread of its
    other fields and costs, packed above the units' bits, xor ``group_key``; None if one is
    beyond its range. The fields come one by one, as a listing has them (``listed_key``)."""
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
    flags: i64 = 0  # (a variable: compiled, a literal 1 would be shifted as a 32-bit int)
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


# --- the listing -----------------------------------------------------------------------------

# The fields a listed move's command is given (they make its ``model_fields_set``): ``steps``
# only for a walk. (Typed tuple[str, ...]: compiled, a fixed-length tuple type is boxed anew at
# every use.)
_MOVE_GIVEN: Final[tuple[str, ...]] = ("units", "to", "fly", "reveal", "use_power")
_WALK_GIVEN: Final[tuple[str, ...]] = (*_MOVE_GIVEN, "steps")
_MOVE: Final = cmd.Move  # (a constant: read without a module attribute lookup)


def _move_fields(move: MoveContext, reveal: tuple[str, ...], steps: tuple[int, ...]) -> MoveFields:
    """The fields of the listed ``cmd.Move`` of ``move``, as a client sends them."""
    return (move.units, move.destination, move.flight, reveal, move.use_power, steps)


class Listing:
    """Where ``legal.list_legal`` puts the legal actions it finds, in order: each move as it
    was judged (``move``), the other actions as ``LegalAction`` objects (``extend``).

    ``ListedActions`` keeps them all as ``LegalAction`` objects (``legal_actions``). A caller
    that needs only each move's key derives its own and takes ``move``'s fields as they come
    (``listed_key``; the service's ``legal`` frames), making a ``LegalAction`` only for a move
    it does not hold yet (``listed_move``)."""

    def move(
        self,
        move: MoveContext,
        group_key: int,
        reveal: tuple[str, ...],
        steps: tuple[int, ...],
        honor: int,
        energy: int,
    ) -> None:
        """A legal move: ``move`` as judged, ``group_key`` its units' part of its key
        (``units_key``), the units it reveals for their power (R3), its further steps
        (Hermes, D1), and its Honor change and Energy paid: its listed fields are ``move``'s
        and these (``MoveFields``)."""
        raise NotImplementedError

    def extend(self, actions: list[LegalAction]) -> None:
        """Legal actions other than moves, in order."""
        raise NotImplementedError


class ListedActions(Listing):
    """The listed actions themselves, in order (``actions``)."""

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


def listed_move(
    move: MoveContext,
    group_key: int,
    reveal: tuple[str, ...],
    steps: tuple[int, ...],
    honor: int,
    energy: int,
) -> LegalAction:
    """The ``LegalAction`` of a move as ``Listing.move`` is given it."""
    given = _WALK_GIVEN if steps else _MOVE_GIVEN
    fields = _move_fields(move, reveal, steps)
    return LegalAction(_MOVE, move.faction, honor, energy, None, given, fields, None, group_key)


def listed_walk(side: Faction, fields: MoveFields, honor: int, energy: int) -> LegalAction:
    """The ``LegalAction`` of the move of ``fields`` (its units R1-ordered), with its further
    steps given (``legal.further_steps``: a walk of any length), at ``honor`` and ``energy``
    as ``Listing.move`` has them."""
    return LegalAction(_MOVE, side, honor, energy, None, _WALK_GIVEN, fields, None, 0)


def listed_key(
    move: MoveContext,
    group_key: int,
    reveal: tuple[str, ...],
    steps: tuple[int, ...],
    honor: int,
    energy: int,
) -> object:
    """The key of a move as ``Listing.move`` is given it: ``listed_move(...).key``, made
    without the object, and without the tuple of its fields unless it is beyond the int's
    ranges."""
    key: object = _move_key(
        group_key, move.destination, move.flight, reveal, move.use_power, steps, honor, energy
    )
    return (_move_fields(move, reveal, steps), honor, energy) if key is None else key


# --- commitments kept ------------------------------------------------------------------------

# The commitments of the combat positions seen, by what they are made of (``legal``'s
# ``_commitments``): a combat lists the same few again and again. At most this many.
_COMMITMENTS: Final[dict[tuple[object, ...], tuple[LegalAction, ...]]] = {}
_COMMITMENTS_KEPT: Final = 4096


def held_commitments(made_of: tuple[object, ...]) -> tuple[LegalAction, ...] | None:
    """The commitments kept for ``made_of`` (``hold_commitments``), or None."""
    return _COMMITMENTS.get(made_of)


def hold_commitments(
    made_of: tuple[object, ...], listed: tuple[LegalAction, ...]
) -> tuple[LegalAction, ...]:
    """Keep ``listed``, the commitments made of ``made_of``, and return it (all the kept ones
    are forgotten at once when there are too many)."""
    if len(_COMMITMENTS) >= _COMMITMENTS_KEPT:
        _COMMITMENTS.clear()
    _COMMITMENTS[made_of] = listed
    return listed
