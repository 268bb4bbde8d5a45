"""The game state: an immutable value folded from the events by ``evolve``.

Containers inside are never mutated once a state is built; ``evolve`` copies what it changes.
That keeps states shareable (views, undo-free replay, property tests) at a small copying cost.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from .board import BOARD
from .characters import BY_NAME, CHARACTERS, ORDER, Faction


class Phase(StrEnum):
    SETUP = "setup"
    TURN = "turn"
    COMBAT = "combat"
    OVER = "over"


class Maneuver(StrEnum):
    STANDARD = "standard"
    RETREAT = "retreat"
    CHASE = "chase"
    ALL_OUT_ATTACK = "all_out_attack"
    ALL_OUT_DEFENSE = "all_out_defense"


class StepKind(StrEnum):
    """What a combat round still has to settle after its resolution (R8)."""

    REMOVE = "remove"  # the side removes one of its units, of its choice
    RETREAT = "retreat"  # the side leaves to a region of its choice (R9)
    LEAVE_OR_STAY = "leave_or_stay"  # after losing to a Chase, the rest may leave
    LEAVE_OR_STRIKE = "leave_or_strike"  # won against a Chase: leave, or stay and strike
    ANNIHILATE = "annihilate"  # All-out Attack: every unit of the side dies
    STRUCK = "struck"  # a thunderbolt hit the region: the side picks its victim (R10)
    WITHDRAW = "withdraw"  # the side's units go back to ``to`` (after a sneak attack)


@dataclass(frozen=True, slots=True)
class Step:
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
class Commitment:
    maneuver: Maneuver
    energy: int


@dataclass(frozen=True, slots=True)
class Combat:
    region: int
    attacker: Faction
    origin: int | None  # None after a flight (R9: any adjacent region)
    round: int = 1
    commitments: dict[Faction, Commitment] = field(default_factory=dict)

    @property
    def defender(self) -> Faction:
        return self.attacker.enemy


@dataclass(frozen=True, slots=True)
class Options:
    """The variants chosen when the game is created."""

    open_combat: bool = False
    random_setup: bool = False
    chthonian_honor: int = 0  # Challenge: −5…+5 for the Chthonians (R2)
    # Clocks (R12): None means no limit.
    move_seconds: int | None = None
    commit_seconds: int | None = None
    forfeit_seconds: int | None = None


# (name, faction) of every character, in R1 order.
_ROSTER = tuple((c.name, c.faction) for c in CHARACTERS)


REGIONS = len(BOARD.regions)


@dataclass(frozen=True, slots=True)
class Occupancy:
    """Who stands where in one state, in R1 order: ``units_in``, ``units_of`` and ``count_in``
    as lookups instead of scans of every unit, for code that asks them many times of one state
    (``legal_actions`` asks hundreds). ``counts[faction][region]`` is the number of the side's
    units in the region: the question every candidate move asks twice."""

    in_region: dict[int, list[str]]
    in_region_of: dict[tuple[int, Faction], list[str]]
    of: dict[Faction, list[str]]
    counts: dict[Faction, list[int]]

    @staticmethod
    def of_positions(positions: dict[str, int]) -> Occupancy:
        in_region: dict[int, list[str]] = {}
        in_region_of: dict[tuple[int, Faction], list[str]] = {}
        of: dict[Faction, list[str]] = {f: [] for f in Faction}
        counts: dict[Faction, list[int]] = {f: [0] * REGIONS for f in Faction}
        for unit, faction in _ROSTER:
            region = positions.get(unit)
            if region is not None:
                in_region.setdefault(region, []).append(unit)
                in_region_of.setdefault((region, faction), []).append(unit)
                of[faction].append(unit)
                counts[faction][region] += 1
        return Occupancy(in_region, in_region_of, of, counts)


@dataclass(frozen=True, slots=True)
class GameState:
    """Everything a game is at one point: its facts (every field but the last) and a cache
    slot for their ``Occupancy``.

    The cache is not a fact: it is built only when ``occupancy`` is asked for
    (``legal_actions`` does), never compared, shown, pickled or copied to the next state
    (``evolved``, ``dataclasses.replace``), and the snapshot codec leaves it out (``FACTS``).
    Until it is built, ``units_in``, ``units_of`` and ``count_in`` scan the positions, which is
    cheaper for the states that are asked only a question or two (most states ``execute`` and
    replay go through). A plain frozen dataclass, so that mypyc compiles it to a native class.
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
    result: str | None = None  # "olympians", "chthonians" or "draw" once over
    version: int = 0  # number of events folded
    _occupancy: Occupancy | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_occupancy", None)  # compiled, a slot has no class default

    def __reduce__(self) -> tuple[type[GameState], tuple[Any, ...]]:
        """Pickled as its facts alone (the cache is rebuilt on demand)."""
        return (GameState, tuple(getattr(self, name) for name in FACTS))

    @property
    def occupancy(self) -> Occupancy:
        """The occupancy index of this state, built on first use."""
        occupancy = self._occupancy
        if occupancy is None:
            occupancy = Occupancy.of_positions(self.positions)
            object.__setattr__(self, "_occupancy", occupancy)
        return occupancy

    def evolved(self, changes: dict[str, Any]) -> GameState:
        """A copy with ``changes`` (field name → new value): ``dataclasses.replace`` without
        its overhead, because every event makes one (replay speed). Spelled out field by
        field, which mypyc compiles to direct slot reads; the cache is not copied."""
        get = changes.get
        return GameState(
            get("options", self.options),
            get("phase", self.phase),
            get("turn", self.turn),
            get("turn_number", self.turn_number),
            get("honor", self.honor),
            get("energy", self.energy),
            get("positions", self.positions),
            get("picked", self.picked),
            get("revealed", self.revealed),
            get("eliminated", self.eliminated),
            get("unrecallable", self.unrecallable),
            get("setups", self.setups),
            get("combat", self.combat),
            get("pending", self.pending),
            get("tokens", self.tokens),
            get("next_token", self.next_token),
            get("token_seed", self.token_seed),
            get("deadlines", self.deadlines),
            get("absent_since", self.absent_since),
            get("winner", self.winner),
            get("result", self.result),
            get("version", self.version),
        )

    # Without the index these scan the positions (plain loops: they run on every event).
    def units_in(self, region: int, faction: Faction | None = None) -> list[str]:
        """Units in a region, in R1 order (never in an order that depends on hidden facts)."""
        index = self._occupancy
        if index is not None:
            if faction is None:
                return list(index.in_region.get(region, ()))
            return list(index.in_region_of.get((region, faction), ()))
        units = [u for u, r in self.positions.items() if r == region]
        if faction is not None:
            units = [u for u in units if BY_NAME[u].faction is faction]
        if len(units) > 1:
            units.sort(key=ORDER.__getitem__)
        return units

    def units_of(self, faction: Faction) -> list[str]:
        """A side's units on the board, in R1 order."""
        index = self._occupancy
        if index is not None:
            return list(index.of[faction])
        units = [u for u in self.positions if BY_NAME[u].faction is faction]
        units.sort(key=ORDER.__getitem__)
        return units

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


FACTS: tuple[str, ...] = tuple(f.name for f in fields(GameState) if f.compare)
"""The names of a state's facts, in order: its fields but the cache."""
