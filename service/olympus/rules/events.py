"""Events: the facts a game is made of, and their msgpack encoding.

Every event is a small frozen dataclass. On the wire and in the store an event is a msgpack map
``{"t": type, "v": schema version, ...fields}``; ``decode`` upcasts old versions through
``UPCASTERS`` before building the dataclass, so stored games stay readable as events evolve.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any, ClassVar, TypeVar, dataclass_transform

import msgpack

from .characters import Faction
from .state import Maneuver


@dataclass(frozen=True, slots=True)
class Event:
    TYPE: ClassVar[str] = ""
    VERSION: ClassVar[int] = 1
    # Sealed events belong to one side until an event reveals them (R2, R8); see observation.
    SEALED: ClassVar[bool] = False


E = TypeVar("E", bound=Event)


@dataclass_transform(frozen_default=True)
def _event(name: str, *, sealed: bool = False) -> Callable[[type[E]], type[E]]:
    """Make ``cls`` a frozen slotted dataclass registered as event type ``name``
    (``dataclass_transform`` tells type checkers so)."""

    def register(cls: type[E]) -> type[E]:
        cls = dataclass(frozen=True, slots=True)(cls)
        cls.TYPE = name
        cls.SEALED = sealed
        EVENT_TYPES[name] = cls
        return cls

    return register


EVENT_TYPES: dict[str, type[Event]] = {}


@_event("game_created")
class GameCreated(Event):
    open_combat: bool = False
    random_setup: bool = False
    chthonian_honor: int = 0
    # Secret seed of the token draws (R7): which fresh token a re-hidden unit gets. Never shown
    # to a seat before the end, so token numbers say nothing about who is under them.
    token_seed: int = 0
    move_seconds: int | None = None
    commit_seconds: int | None = None
    forfeit_seconds: int | None = None


@_event("setup_submitted", sealed=True)
class SetupSubmitted(Event):
    faction: Faction
    placements: dict[str, int]


@_event("random_setup_drawn", sealed=True)
class RandomSetupDrawn(Event):
    """The seed of a Random Setup (R2); the placements follow as ``SetupSubmitted`` events."""

    seed: int


@_event("setup_revealed")
class SetupRevealed(Event):
    pass


@_event("turn_started")
class TurnStarted(Event):
    faction: Faction
    number: int


@_event("honor_changed")
class HonorChanged(Event):
    faction: Faction
    delta: int
    reason: str


@_event("energy_changed")
class EnergyChanged(Event):
    faction: Faction
    delta: int
    reason: str


@_event("units_revealed")
class UnitsRevealed(Event):
    units: tuple[str, ...]


@_event("units_hidden")
class UnitsHidden(Event):
    """R7: these units' identities are hidden again; each gets a fresh token (re-drawn)."""

    units: tuple[str, ...]
    tokens: dict[str, int]


@_event("units_moved")
class UnitsMoved(Event):
    faction: Faction
    units: tuple[str, ...]
    origin: int
    destination: int
    flight: bool = False


@_event("liturgy_performed")
class LiturgyPerformed(Event):
    faction: Faction


@_event("passed")
class Passed(Event):
    faction: Faction


@_event("thunderbolt_thrown")
class ThunderboltThrown(Event):
    faction: Faction
    thrower: str
    region: int


@_event("unit_recalled")
class UnitRecalled(Event):
    faction: Faction
    leader: str
    unit: str
    token: int


@_event("leader_succeeded")
class LeaderSucceeded(Event):
    """The leader fell; ``leader`` is the successor, or None when there is none. Emitted
    whether or not there is one, so that its presence tells nobody who was picked (R7)."""

    faction: Faction
    leader: str | None


@_event("combat_started")
class CombatStarted(Event):
    region: int
    attacker: Faction
    origin: int | None


@_event("combat_committed", sealed=True)
class CombatCommitted(Event):
    faction: Faction
    round: int
    maneuver: Maneuver
    energy: int


@_event("commitment_withdrawn")
class CommitmentWithdrawn(Event):
    """A side may commit again (Aphrodite revealed next to the combat, R8)."""

    faction: Faction


@_event("combat_round_resolved")
class CombatRoundResolved(Event):
    round: int
    olympian_maneuver: Maneuver
    olympian_energy: int
    chthonian_maneuver: Maneuver
    chthonian_energy: int
    olympian_power: int
    chthonian_power: int
    winner: Faction | None  # None when nobody fought (a retreat)


@_event("choice_pending")
class ChoicePending(Event):
    """What is still to settle (``Step.encode``); the first step awaits its side's choice."""

    steps: tuple[str, ...]


@_event("unit_eliminated")
class UnitEliminated(Event):
    unit: str
    cause: str


@_event("units_retreated")
class UnitsRetreated(Event):
    faction: Faction
    units: tuple[str, ...]
    destination: int


@_event("stayed_in_combat")
class StayedInCombat(Event):
    faction: Faction


@_event("combat_round_started")
class CombatRoundStarted(Event):
    round: int


@_event("combat_ended")
class CombatEnded(Event):
    region: int


@_event("clock_set")
class ClockSet(Event):
    """R12: the deadlines now running and the sides missing theirs (times in ms)."""

    deadlines: dict[str, dict[str, Any]]
    absent_since: dict[str, int]


@_event("deadline_missed")
class DeadlineMissed(Event):
    faction: Faction
    kind: str


@_event("game_ended")
class GameEnded(Event):
    result: str  # "olympians", "chthonians" or "draw"
    reason: str


# --- encoding ---------------------------------------------------------------------------------

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
# (type, version) → function returning the same event at version + 1.
UPCASTERS: dict[tuple[str, int], Upcaster] = {}


def _converter(hint: Any) -> Callable[[Any], Any] | None:
    origin = typing.get_origin(hint)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint
    if origin is tuple:
        return tuple
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        conv = _converter(inner[0]) if len(inner) == 1 else None
        return None if conv is None else (lambda v: None if v is None else conv(v))
    return None


_CONVERTERS: dict[type, tuple[tuple[str, Callable[[Any], Any] | None], ...]] = {
    cls: tuple((f.name, _converter(typing.get_type_hints(cls)[f.name])) for f in fields(cls))
    for cls in EVENT_TYPES.values()
}


def to_dict(event: Event) -> dict[str, Any]:
    data: dict[str, Any] = {"t": event.TYPE, "v": event.VERSION}
    for name, _ in _CONVERTERS[type(event)]:
        value = getattr(event, name)
        data[name] = list(value) if isinstance(value, tuple) else value
    return data


def from_dict(data: dict[str, Any]) -> Event:
    data = dict(data)
    cls = EVENT_TYPES[data["t"]]
    while data["v"] < cls.VERSION:
        data = UPCASTERS[(data["t"], data["v"])](data)
    kwargs = {}
    for name, conv in _CONVERTERS[cls]:
        if name in data:
            value = data[name]
            kwargs[name] = conv(value) if conv is not None and value is not None else value
    return cls(**kwargs)


def encode(event: Event) -> bytes:
    packed: bytes = msgpack.packb(to_dict(event), use_bin_type=True)
    return packed


def decode(raw: bytes) -> Event:
    return from_dict(msgpack.unpackb(raw, raw=False, strict_map_key=False))
