"""Events: the facts a game is made of, and their msgpack encoding.

Every event is a small frozen dataclass. On the wire and in the store an event is a msgpack map
``{"t": type, "v": schema version, ...fields}``; ``decode`` upcasts old versions through
``UPCASTERS`` before building the dataclass, so stored games stay readable as events evolve.

The events made for every command spell out their dataclass's ``__init__`` with
``object.__setattr__``: compiled, that is a store into a slot, where the generated ``__init__``
stays interpreted (docs/performance.md; tests/test_events_codec.py holds each to its fields).
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, fields
from enum import Enum
from typing import Any, ClassVar, Final

import msgpack

from .characters import Faction
from .state import Maneuver, Value


class Event(Value):
    """An event type is a frozen dataclass deriving from this one. Its ``TYPE``, the name it
    is stored under, is its class's name in snake case (``GameCreated``: ``game_created``);
    its ``VERSION`` is the schema version of its fields (1, or one set in ``_named`` with its
    upcaster in ``UPCASTERS``). Both are set where the types are listed, not in each class's
    body: there a class variable of a compiled dataclass would become one of its fields.
    Renaming a class renames its stored type: the tests pin every name."""

    __slots__ = ()
    TYPE: ClassVar[str] = ""
    VERSION: ClassVar[int] = 1


@dataclass(frozen=True, slots=True)
class GameCreated(Event):
    """The first event of every game: its variants (R2: Open Combat, Random Setup, Challenge)
    and clocks (R12)."""

    open_combat: bool = False
    random_setup: bool = False
    chthonian_honor: int = 0
    # Secret seed of the token draws (R7): which fresh token a re-hidden unit gets. Never shown
    # to a seat before the end, so token numbers say nothing about who is under them.
    token_seed: int = 0
    move_seconds: int | None = None
    commit_seconds: int | None = None
    forfeit_seconds: int | None = None


@dataclass(frozen=True, slots=True)
class SetupSubmitted(Event):
    """A side's sealed setup (R2): its picked characters and their regions; the enemy learns
    that it is in, not what it is."""

    faction: Faction
    placements: dict[str, int]


@dataclass(frozen=True, slots=True)
class RandomSetupDrawn(Event):
    """The seed of a Random Setup (R2); the placements follow as ``SetupSubmitted`` events."""

    seed: int


@dataclass(frozen=True, slots=True)
class SetupRevealed(Event):
    """Both setups are in: the units stand on the board under their first tokens (D2)."""


@dataclass(frozen=True, slots=True)
class TurnStarted(Event):
    """``faction``'s turn ``number`` begins (R3); its base penalty follows, if any."""

    faction: Faction
    number: int

    def __init__(self, faction: Faction, number: int) -> None:
        object.__setattr__(self, "faction", faction)
        object.__setattr__(self, "number", number)


@dataclass(frozen=True, slots=True)
class HonorChanged(Event):
    """``faction``'s Honor changes by ``delta``; ``reason`` names what charged or earned it
    (``move``, ``attack``, ``base``, ``liturgy``, ``combat``…)."""

    faction: Faction
    delta: int
    reason: str

    def __init__(self, faction: Faction, delta: int, reason: str) -> None:
        object.__setattr__(self, "faction", faction)
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "reason", reason)


@dataclass(frozen=True, slots=True)
class EnergyChanged(Event):
    """``faction``'s Energy changes by ``delta``; ``reason`` names what spent or gave it
    (``styx``, ``liturgy``, ``combat``, ``hecate``…)."""

    faction: Faction
    delta: int
    reason: str

    def __init__(self, faction: Faction, delta: int, reason: str) -> None:
        object.__setattr__(self, "faction", faction)
        object.__setattr__(self, "delta", delta)
        object.__setattr__(self, "reason", reason)


@dataclass(frozen=True, slots=True)
class UnitsRevealed(Event):
    """These units' identities become known to both sides (R7)."""

    units: tuple[str, ...]

    def __init__(self, units: tuple[str, ...]) -> None:
        object.__setattr__(self, "units", units)


@dataclass(frozen=True, slots=True)
class UnitsHidden(Event):
    """R7: these units' identities are hidden again; each gets a fresh token (re-drawn)."""

    units: tuple[str, ...]
    tokens: dict[str, int]

    def __init__(self, units: tuple[str, ...], tokens: dict[str, int]) -> None:
        object.__setattr__(self, "units", units)
        object.__setattr__(self, "tokens", tokens)


@dataclass(frozen=True, slots=True)
class UnitsMoved(Event):
    """A move (R3): ``faction``'s ``units`` go from ``origin`` to ``destination``, by flight
    if ``flight``."""

    faction: Faction
    units: tuple[str, ...]
    origin: int
    destination: int
    flight: bool = False

    def __init__(
        self,
        faction: Faction,
        units: tuple[str, ...],
        origin: int,
        destination: int,
        flight: bool = False,
    ) -> None:
        object.__setattr__(self, "faction", faction)
        object.__setattr__(self, "units", units)
        object.__setattr__(self, "origin", origin)
        object.__setattr__(self, "destination", destination)
        object.__setattr__(self, "flight", flight)


@dataclass(frozen=True, slots=True)
class LiturgyPerformed(Event):
    """``faction`` performs the Liturgy (rulebook "Liturgy"); its Energy and Honor follow."""

    faction: Faction


@dataclass(frozen=True, slots=True)
class Passed(Event):
    """The Olympians pass their turn (R3)."""

    faction: Faction


@dataclass(frozen=True, slots=True)
class ThunderboltThrown(Event):
    """The Olympian leader ``thrower`` strikes ``region`` (R10); its victim is chosen next."""

    faction: Faction
    thrower: str
    region: int


@dataclass(frozen=True, slots=True)
class UnitRecalled(Event):
    """The Chthonian ``leader`` recalls ``unit`` to Tartarus under a fresh ``token`` (R10, D16)."""

    faction: Faction
    leader: str
    unit: str
    token: int


@dataclass(frozen=True, slots=True)
class LeaderSucceeded(Event):
    """The leader fell; ``leader`` is the successor, or None when there is none. Emitted
    whether or not there is one, so that its presence tells nobody who was picked (R7)."""

    faction: Faction
    leader: str | None


@dataclass(frozen=True, slots=True)
class CombatStarted(Event):
    """A move ended where enemies stand (R8): a combat in ``region``; ``origin`` is where the
    attacker came from, None after a flight (R9)."""

    region: int
    attacker: Faction
    origin: int | None


@dataclass(frozen=True, slots=True)
class CombatCommitted(Event):
    """``faction``'s sealed commitment for ``round`` (R8): seen by the enemy once the round
    is resolved, or before where the rules let it see (Athena, Open Combat: D12)."""

    faction: Faction
    round: int
    maneuver: Maneuver
    energy: int


@dataclass(frozen=True, slots=True)
class CommitmentWithdrawn(Event):
    """A side may commit again (Aphrodite revealed next to the combat, R8)."""

    faction: Faction


@dataclass(frozen=True, slots=True)
class CombatRoundResolved(Event):
    """Both commitments revealed and the round fought (R8): each side's maneuver, Energy
    and power, and the winner."""

    round: int
    olympian_maneuver: Maneuver
    olympian_energy: int
    chthonian_maneuver: Maneuver
    chthonian_energy: int
    olympian_power: int
    chthonian_power: int
    winner: Faction | None  # None when nobody fought (a retreat); in _UNIONS
    # Each side's power term by term (combat.Strength.to_dict), keyed by side; None in stored
    # games whose events lack it. Public: every term is about revealed units (R8).
    breakdown: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class ChoicePending(Event):
    """What is still to settle (``Step.encode``); the first step awaits its side's choice."""

    steps: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class UnitEliminated(Event):
    """``unit`` leaves the board (R8, R10); ``cause``: ``remove``, ``struck``,
    ``all_out_attack``, ``cronus``, ``demeter`` or ``thanatos``."""

    unit: str
    cause: str


@dataclass(frozen=True, slots=True)
class UnitsRetreated(Event):
    """``faction``'s units in the combat leave it for ``destination`` (R9), or the Erinyes
    go back after a sneak attack (D7)."""

    faction: Faction
    units: tuple[str, ...]
    destination: int


@dataclass(frozen=True, slots=True)
class StayedInCombat(Event):
    """``faction`` stays in the combat where it could leave (R8)."""

    faction: Faction


@dataclass(frozen=True, slots=True)
class CombatRoundStarted(Event):
    """Both sides still stand in the combat's region: round ``round`` follows (R8)."""

    round: int


@dataclass(frozen=True, slots=True)
class CombatEnded(Event):
    """The combat in ``region`` is over: at most one side is left there."""

    region: int


@dataclass(frozen=True, slots=True)
class ClockSet(Event):
    """R12: the deadlines now running and the sides missing theirs (times in ms)."""

    deadlines: dict[str, dict[str, Any]]
    absent_since: dict[str, int]


@dataclass(frozen=True, slots=True)
class DeadlineMissed(Event):
    """``faction`` missed its deadline of ``kind`` (``move``, ``commit``, ``choice`` or
    ``setup``); its fallback follows (R12, D15)."""

    faction: Faction
    kind: str


@dataclass(frozen=True, slots=True)
class GameEnded(Event):
    """The game is decided (R11, D13), or given up: ``result`` is ``olympians``,
    ``chthonians`` or ``draw``, or ``aborted`` (no result: resignation.py); ``reason`` says
    how (R11's, ``forfeit`` (R12), ``resignation`` or ``abort``)."""

    result: str  # "olympians", "chthonians", "draw" or "aborted"
    reason: str


# Every event type; a type left out here fails the first check below.
_TYPES: tuple[type[Event], ...] = (
    GameCreated,
    SetupSubmitted,
    RandomSetupDrawn,
    SetupRevealed,
    TurnStarted,
    HonorChanged,
    EnergyChanged,
    UnitsRevealed,
    UnitsHidden,
    UnitsMoved,
    LiturgyPerformed,
    Passed,
    ThunderboltThrown,
    UnitRecalled,
    LeaderSucceeded,
    CombatStarted,
    CombatCommitted,
    CommitmentWithdrawn,
    CombatRoundResolved,
    ChoicePending,
    UnitEliminated,
    UnitsRetreated,
    StayedInCombat,
    CombatRoundStarted,
    CombatEnded,
    ClockSet,
    DeadlineMissed,
    GameEnded,
)


def _named(types: tuple[type[Event], ...]) -> dict[str, type[Event]]:
    """Each type named (``TYPE``: its class's name in snake case), by its name."""
    for cls in types:
        cls.TYPE = re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()
    return {cls.TYPE: cls for cls in types}


EVENT_TYPES: dict[str, type[Event]] = _named(_TYPES)
assert {c.__name__ for c in Event.__subclasses__()} == {c.__name__ for c in _TYPES}, "unlisted"
assert len(EVENT_TYPES) == len(_TYPES), "two event types with one TYPE"


# --- encoding ---------------------------------------------------------------------------------

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]
# (type, version) → function returning the same event at version + 1.
UPCASTERS: dict[tuple[str, int], Upcaster] = {}


def _converter(hint: Any) -> Callable[[Any], Any] | None:
    """What turns a stored value of type ``hint`` back (None: nothing), a None aside
    (``from_dict`` keeps it). ``hint`` as the class says: ``tuple[str, ...]``, or ``tuple``
    alone where the class is compiled."""
    origin = typing.get_origin(hint)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint
    if origin is tuple or hint is tuple:
        return tuple
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        return _converter(inner[0]) if len(inner) == 1 else None
    return None


# The fields of a union type that decoding converts: compiled, a class's annotations keep the
# class of a field's type (``Faction``, ``tuple``) but make a union ``type``. Checked against
# the annotations where they keep their unions (interpreted), below.
_UNIONS: dict[tuple[type[Event], str], Any] = {(CombatRoundResolved, "winner"): Faction | None}


def _fields(cls: type[Event]) -> tuple[tuple[str, Callable[[Any], Any] | None], ...]:
    """Each field of the event dataclass ``cls`` with what turns its stored form back."""
    hints = typing.get_type_hints(cls)
    for name, hint in hints.items():
        if typing.get_origin(hint) in (typing.Union, types.UnionType) and _converter(hint):
            assert _UNIONS.get((cls, name)) == hint, f"{cls.__name__}.{name}: not in _UNIONS"
    return tuple(
        (f.name, _converter(_UNIONS.get((cls, f.name), hints[f.name])))
        for f in fields(typing.cast(Any, cls))  # (a dataclass: mypy cannot see it in the type)
    )


_CONVERTERS: dict[type, tuple[tuple[str, Callable[[Any], Any] | None], ...]] = {
    cls: _fields(cls) for cls in EVENT_TYPES.values()
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


# One packer for every event: ``msgpack.packb`` makes a packer per call, about half of a small
# event's cost. Events are encoded on the event loop's thread only (the service's appends; the
# bots' search threads never encode), so one packer serves them all. Packed as the service's
# msgpack codec packs (``protocol.pack``): its ``game_over`` splices these bytes in.
_pack: Final[Callable[[object], bytes]] = msgpack.Packer(use_bin_type=True).pack


def encode(event: Event) -> bytes:
    return _pack(to_dict(event))


def encode_dict(data: dict[str, Any]) -> bytes:
    """``encode`` of the event whose ``to_dict`` is ``data``: for a caller that reads the dict
    too (the service observes each event it appends for three audiences)."""
    return _pack(data)


def stored_dict(raw: bytes) -> dict[str, Any]:
    """An encoded event's map as it was stored, not upcast: ``to_dict`` of the event, if this
    code encoded it."""
    data: dict[str, Any] = msgpack.unpackb(raw, raw=False, strict_map_key=False)
    return data


def decode(raw: bytes) -> Event:
    return from_dict(stored_dict(raw))
