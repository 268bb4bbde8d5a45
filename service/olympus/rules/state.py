"""The game state: an immutable value folded from the events by ``evolve``.

Containers inside are never mutated once a state is built; ``evolve`` copies what it changes.
That keeps states shareable (views, undo-free replay, property tests) at a small copying cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, Final

from .board import BOARD
from .characters import BY_NAME, CHARACTERS, ORDER, ROSTER, Faction


class Phase(StrEnum):
    """Where a game is: its setup (R2), a turn (R3), a combat (R8), or over (R11)."""

    SETUP = "setup"
    TURN = "turn"
    COMBAT = "combat"
    OVER = "over"


class Maneuver(StrEnum):
    """A combat maneuver (R8; rulebook "Standard Maneuver" to "All-out Defense")."""

    STANDARD = "standard"
    RETREAT = "retreat"
    CHASE = "chase"
    ALL_OUT_ATTACK = "all_out_attack"
    ALL_OUT_DEFENSE = "all_out_defense"


MANEUVERS: Final[tuple[Maneuver, ...]] = tuple(Maneuver)  # in order; see ``FACTIONS``


class StepKind(StrEnum):
    """What a combat round still has to settle after its resolution (R8, R9, R10)."""

    REMOVE = "remove"  # the side removes one of its units, of its choice
    RETREAT = "retreat"  # the side leaves to a region of its choice (R9)
    LEAVE_OR_STAY = "leave_or_stay"  # after losing to a Chase, the rest may leave
    LEAVE_OR_STRIKE = "leave_or_strike"  # won against a Chase: leave, or stay and strike
    ANNIHILATE = "annihilate"  # All-out Attack: every unit of the side dies
    STRUCK = "struck"  # a thunderbolt hit the region: the side picks its victim (R10)
    WITHDRAW = "withdraw"  # the side's units go back to ``to`` (after a sneak attack)


class Value:
    """Base of the state's frozen dataclasses: pickled as the arguments of their constructor
    (compiled, their fields refuse the assignments of unpickling field by field). Pickling is
    for tests and worker processes, never for the store (``snapshot.py``)."""

    __slots__ = ()

    def __reduce__(self) -> tuple[type[Value], tuple[Any, ...]]:
        value: Any = self
        return (type(self), tuple(getattr(self, f.name) for f in fields(value) if f.init))


@dataclass(frozen=True, slots=True)
class Step(Value):
    """One thing still to settle; a step that needs a choice waits for its side's command."""

    kind: StepKind
    faction: Faction
    region: int
    to: int | None = None

    def encode(self) -> str:
        tail = "" if self.to is None else f":{self.to}"
        return f"{self.kind.value}:{self.faction.value}:{self.region}{tail}"

    @staticmethod
    def decode(text: str) -> Step:
        kind, faction, region, *to = text.split(":")
        return Step(StepKind(kind), Faction(faction), int(region), int(to[0]) if to else None)


@dataclass(frozen=True, slots=True)
class Commitment(Value):
    """A side's sealed choice for a combat round (R8): a maneuver and the Energy committed."""

    maneuver: Maneuver
    energy: int


@dataclass(frozen=True, slots=True)
class Combat(Value):
    """The combat going on (R8): its region, the original attacker (who wins ties), where the
    attacker came from (R9), the round, and the commitments made in it so far."""

    region: int
    attacker: Faction
    origin: int | None  # None after a flight (R9: any adjacent region)
    round: int = 1
    commitments: dict[Faction, Commitment] = field(default_factory=dict)

    @property
    def defender(self) -> Faction:
        return self.attacker.enemy

    def with_commitments(
        self, commitments: dict[Faction, Commitment], round: int | None = None
    ) -> Combat:
        """A copy with other ``commitments`` (and ``round``, if given): what
        ``dataclasses.replace`` gives, without its interpreted Python (every commitment and
        every round makes one)."""
        return Combat(
            region=self.region,
            attacker=self.attacker,
            origin=self.origin,
            round=self.round if round is None else round,
            commitments=commitments,
        )


@dataclass(frozen=True, slots=True)
class Options(Value):
    """The variants chosen when the game is created."""

    open_combat: bool = False
    random_setup: bool = False
    chthonian_honor: int = 0  # Challenge: −5…+5 for the Chthonians (R2)
    # Clocks (R12): None means no limit.
    move_seconds: int | None = None
    commit_seconds: int | None = None
    forfeit_seconds: int | None = None


# (name, faction) of every character, in R1 order.
_ROSTER: Final = tuple((c.name, c.faction) for c in CHARACTERS)
_NAMES: Final[tuple[str, ...]] = tuple(ORDER)  # every character's name, by R1 number
# R1 lists the Olympians first: each side's units are a range of the roster, and the units on
# the board in R1 order are the Olympians' then the Chthonians'.
_OLYMPIANS_END: Final = len(ROSTER[Faction.OLYMPIANS])
assert ROSTER[Faction.OLYMPIANS] + ROSTER[Faction.CHTHONIANS] == _NAMES
_OLYMPIANS: Final = Faction.OLYMPIANS  # (constants: read without a lookup, compiled)
_CHTHONIANS: Final = Faction.CHTHONIANS
_NOWHERE: Final = -1  # a unit's region in ``Occupancy.where`` when it is not on the board


REGIONS: Final = len(BOARD.regions)


class Occupancy:
    """Who stands where in one state, per side in R1 order: ``units_of`` and ``count_in`` as
    lookups, and ``units_in`` as a scan of a table of each unit's region, for code that asks
    them many times of one state (``legal_actions`` asks hundreds). ``counts[faction][region]``
    is the number of the side's units in the region: the question every candidate move asks
    twice. Read-only once built; shared by the states that follow while the units stand where
    they stood, and ``moved`` along with a move: a plain class with slots, the cheapest to
    build, interpreted or compiled."""

    __slots__ = ("counts", "of", "on_board", "where")

    def __init__(
        self,
        on_board: list[str],
        of: dict[Faction, list[str]],
        counts: dict[Faction, list[int]],
        where: list[int],
    ) -> None:
        self.on_board = on_board  # both sides', in R1 order
        self.of = of
        self.counts = counts
        self.where = where  # each character's region by R1 number (``_NOWHERE``: off the board)

    def units_in(self, region: int, faction: Faction | None) -> list[str]:
        """``GameState.units_in``: a scan of the side's part of ``where`` (of both sides' for
        None), in R1 order, with no dict to look a unit up in."""
        first = _OLYMPIANS_END if faction is _CHTHONIANS else 0
        last = _OLYMPIANS_END if faction is _OLYMPIANS else len(_NAMES)
        where = self.where
        return [_NAMES[i] for i in range(first, last) if where[i] == region]

    @staticmethod
    def of_positions(positions: dict[str, int]) -> Occupancy:
        """The index of ``positions``, built: each side's part of the roster read once."""
        where = [_NOWHERE] * len(_NAMES)
        olympians, on_olympus = _stand(positions, 0, _OLYMPIANS_END, where)
        chthonians, below = _stand(positions, _OLYMPIANS_END, len(_NAMES), where)
        return Occupancy(
            olympians + chthonians,
            {_OLYMPIANS: olympians, _CHTHONIANS: chthonians},
            {_OLYMPIANS: on_olympus, _CHTHONIANS: below},
            where,
        )

    def moved(self, units: tuple[str, ...], before: dict[str, int], to: int) -> Occupancy | None:
        """This index after ``units`` (at their regions in ``before``, this index's positions)
        went to region ``to``: a move or a retreat changes the counts and regions only (the
        units on the board and their R1 order stay). None if one of them was not on the
        board."""
        counts = dict(self.counts)
        where = list(self.where)
        for unit in units:
            was = before.get(unit)
            if was is None:
                return None
            faction = BY_NAME[unit].faction
            row = counts[faction]
            if row is self.counts[faction]:
                row = counts[faction] = list(row)
            row[was] = row[was] - 1  # (``_stand``: why not ``-=``)
            row[to] = row[to] + 1
            where[ORDER[unit]] = to
        return Occupancy(self.on_board, self.of, counts, where)


def _stand(
    positions: dict[str, int], first: int, last: int, where: list[int]
) -> tuple[list[str], list[int]]:
    """The units on the board of the roster's part ``first`` to ``last`` (a side's), in R1
    order, and their count per region; each one's region noted in ``where``."""
    units: list[str] = []
    counts = [0] * REGIONS
    for i in range(first, last):
        unit = _NAMES[i]
        region = positions.get(unit, _NOWHERE)
        if region != _NOWHERE:
            units.append(unit)
            # (not ``+=``: compiled, an augmented item assignment adds the boxed ints
            # generically; this one adds them as ints)
            counts[region] = counts[region] + 1
            where[i] = region
    return units, counts


_DEFAULT_OPTIONS: Final = Options()


@dataclass(frozen=True, slots=True)
class GameState(Value):
    """Everything a game is at one point: its facts (every field but the last) and a cache
    slot for their ``Occupancy``.

    The cache is not a fact: it is built only when ``occupancy`` is asked for
    (``legal_actions`` does), never compared, shown, pickled (``Value``: not a constructor
    argument) or copied by ``dataclasses.replace``, and the snapshot codec leaves it out
    (``FACTS``). ``evolved`` carries a built one to the next state while the positions stay,
    and through a move or a retreat (``Occupancy.moved``): the states a command's events lead
    through, from a listed state to the next one listed. Without it, ``units_in`` and
    ``units_of`` scan the roster and ``count_in`` and ``occupied`` the positions, which is
    cheaper for the states that are asked only a question or two (replay never builds one).

    ``__init__`` is spelled out with ``object.__setattr__``, as the events made every command
    are (events.py: why): a state is made per event.
    """

    options: Options = Options()
    phase: Phase = Phase.SETUP
    turn: Faction = Faction.CHTHONIANS
    turn_number: int = 0
    honor: dict[Faction, int] = field(default_factory=dict)
    energy: dict[Faction, int] = field(default_factory=dict)
    positions: dict[str, int] = field(default_factory=dict)  # units on the board → region
    picked: frozenset[str] = frozenset()
    revealed: frozenset[str] = frozenset()
    eliminated: tuple[str, ...] = ()
    unrecallable: frozenset[str] = frozenset()  # Persephone eliminated by Demeter (R10)
    setups: dict[Faction, dict[str, int]] = field(default_factory=dict)  # sealed until both in
    combat: Combat | None = None
    pending: tuple[Step, ...] = ()  # the head awaits a choice of its side; the rest follow
    # R7: every unit on the board has a token number, the label the enemy sees. Tokens are
    # drawn from public facts or the secret seed only, and re-drawn when units go into hiding.
    tokens: dict[str, int] = field(default_factory=dict)
    next_token: int = 1
    token_seed: int = 0
    # R12: per side, the awaited action's deadline {"kind", "key", "since", "due"} (ms), and
    # since when a side has been missing its deadlines (for the forfeit limit).
    deadlines: dict[str, dict[str, Any]] = field(default_factory=dict)
    absent_since: dict[str, int] = field(default_factory=dict)
    winner: Faction | None = None
    result: str | None = None  # "olympians", "chthonians", "draw" or "aborted" once over
    version: int = 0  # number of events folded
    _occupancy: Occupancy | None = field(default=None, init=False, repr=False, compare=False)

    def __init__(
        self,
        options: Options = _DEFAULT_OPTIONS,
        phase: Phase = Phase.SETUP,
        turn: Faction = Faction.CHTHONIANS,
        turn_number: int = 0,
        honor: dict[Faction, int] | None = None,
        energy: dict[Faction, int] | None = None,
        positions: dict[str, int] | None = None,
        picked: frozenset[str] = frozenset(),
        revealed: frozenset[str] = frozenset(),
        eliminated: tuple[str, ...] = (),
        unrecallable: frozenset[str] = frozenset(),
        setups: dict[Faction, dict[str, int]] | None = None,
        combat: Combat | None = None,
        pending: tuple[Step, ...] = (),
        tokens: dict[str, int] | None = None,
        next_token: int = 1,
        token_seed: int = 0,
        deadlines: dict[str, dict[str, Any]] | None = None,
        absent_since: dict[str, int] | None = None,
        winner: Faction | None = None,
        result: str | None = None,
        version: int = 0,
    ) -> None:
        """The dataclass's ``__init__``; None stands for an empty dict, as the fields' default
        factories do."""
        object.__setattr__(self, "options", options)
        object.__setattr__(self, "phase", phase)
        object.__setattr__(self, "turn", turn)
        object.__setattr__(self, "turn_number", turn_number)
        object.__setattr__(self, "honor", {} if honor is None else honor)
        object.__setattr__(self, "energy", {} if energy is None else energy)
        object.__setattr__(self, "positions", {} if positions is None else positions)
        object.__setattr__(self, "picked", picked)
        object.__setattr__(self, "revealed", revealed)
        object.__setattr__(self, "eliminated", eliminated)
        object.__setattr__(self, "unrecallable", unrecallable)
        object.__setattr__(self, "setups", {} if setups is None else setups)
        object.__setattr__(self, "combat", combat)
        object.__setattr__(self, "pending", pending)
        object.__setattr__(self, "tokens", {} if tokens is None else tokens)
        object.__setattr__(self, "next_token", next_token)
        object.__setattr__(self, "token_seed", token_seed)
        object.__setattr__(self, "deadlines", {} if deadlines is None else deadlines)
        object.__setattr__(self, "absent_since", {} if absent_since is None else absent_since)
        object.__setattr__(self, "winner", winner)
        object.__setattr__(self, "result", result)
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "_occupancy", None)

    @property
    def occupancy(self) -> Occupancy:
        """The occupancy index of this state, built on first use."""
        occupancy = self._occupancy
        if occupancy is None:
            occupancy = Occupancy.of_positions(self.positions)
            object.__setattr__(self, "_occupancy", occupancy)
        return occupancy

    def evolved(self, changes: dict[str, Any]) -> GameState:
        """A copy with ``changes`` (field name → new value), as ``dataclasses.replace`` makes
        it but cheaper: every event makes one (``evolve``). A name that is no field raises; a
        value is set as given (a None is not read as an empty dict, as ``__init__`` reads it).
        A built index goes along while the positions stay; with new positions, the index given
        with them (``changes["_occupancy"]``: ``index_after_move``), or none."""
        state = GameState(
            self.options,
            self.phase,
            self.turn,
            self.turn_number,
            self.honor,
            self.energy,
            self.positions,
            self.picked,
            self.revealed,
            self.eliminated,
            self.unrecallable,
            self.setups,
            self.combat,
            self.pending,
            self.tokens,
            self.next_token,
            self.token_seed,
            self.deadlines,
            self.absent_since,
            self.winner,
            self.result,
            self.version,
        )
        if "positions" not in changes:
            object.__setattr__(state, "_occupancy", self._occupancy)
        for name, value in changes.items():
            object.__setattr__(state, name, value)
        return state

    def index_after_move(self, units: tuple[str, ...], to: int) -> Occupancy | None:
        """The occupancy index once ``units`` went to region ``to``, if this state's is built
        (``Occupancy.moved``): what ``evolve`` passes ``evolved`` with a move's positions."""
        index = self._occupancy
        return None if index is None else index.moved(units, self.positions, to)

    # Without the index these scan the roster or the positions (plain loops: they run on every
    # event).
    def units_in(self, region: int, faction: Faction | None = None) -> list[str]:
        """Units in a region, in R1 order (never in an order that depends on hidden facts)."""
        index = self._occupancy
        if index is not None:
            return index.units_in(region, faction)
        positions = self.positions
        # the roster is in R1 order: a scan of it needs no sort
        return [
            u
            for u, side in _ROSTER
            if (faction is None or side is faction) and positions.get(u, -1) == region
        ]

    def units_of(self, faction: Faction) -> list[str]:
        """A side's units on the board, in R1 order."""
        index = self._occupancy
        if index is not None:
            return list(index.of[faction])
        positions = self.positions
        return [u for u, side in _ROSTER if side is faction and u in positions]

    def occupied(self, region: int) -> bool:
        """Whether any unit stands in ``region``."""
        index = self._occupancy
        if index is not None:
            counts = index.counts
            return counts[Faction.OLYMPIANS][region] + counts[Faction.CHTHONIANS][region] > 0
        return region in self.positions.values()

    def count_in(self, region: int, faction: Faction) -> int:
        index = self._occupancy
        if index is not None:
            return index.counts[faction][region]
        count = 0
        for unit, where in self.positions.items():
            if where == region and BY_NAME[unit].faction is faction:
                count += 1
        return count

    def leader(self, faction: Faction) -> str | None:
        """The acting leader (R10): Zeus then Hera; Hades then Persephone."""
        first, second = (
            ("Zeus", "Hera") if faction is Faction.OLYMPIANS else ("Hades", "Persephone")
        )
        if first in self.positions:
            return first
        return second if second in self.positions else None


FACTS: Final[tuple[str, ...]] = tuple(f.name for f in fields(GameState) if f.compare)
"""The names of a state's facts, in order: its fields but the cache."""
