"""Events survive msgpack: every type round-trips, and old versions are upcast on the way in.

The stored log is the game, so an event that does not decode to itself, or a stored version that
cannot be read any more, loses games. Samples are derived from each event's type hints, so a new
event type or field is covered without touching this file: the hints as written in events.py
(``declared_hints``), since a compiled class keeps only the class of each field's type.
"""

from __future__ import annotations

import ast
import enum
import types
import typing
from dataclasses import fields, replace
from functools import cache
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import olympus
from olympus.rules import events as ev
from olympus.rules.characters import CHARACTERS, Faction
from olympus.rules.state import Maneuver

UNITS = [c.name for c in CHARACTERS]
INT64 = st.integers(-(2**63), 2**63 - 1)
# An ``Any`` field holds plain data: what msgpack maps back to equal values (no tuples, no NaN).
PLAIN = st.recursive(
    st.none() | st.booleans() | INT64 | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def strategy_for(hint: Any) -> st.SearchStrategy[Any]:
    """Values of a field's type that msgpack can carry (ints within 64 bits)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return PLAIN
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(strategy_for(a) for a in args))
    if hint is type(None):
        return st.none()
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return st.sampled_from(list(hint))
    if hint is bool:
        return st.booleans()
    if hint is int:
        return INT64
    if hint is str:
        return st.sampled_from(UNITS) | st.text(max_size=12)
    if origin is tuple:
        return st.lists(strategy_for(args[0]), max_size=5).map(tuple)
    if origin is dict:
        return st.dictionaries(strategy_for(args[0]), strategy_for(args[1]), max_size=5)
    raise TypeError(f"no sample strategy for {hint!r}: extend strategy_for")


@cache
def declared_hints(cls: type[ev.Event]) -> dict[str, Any]:
    """The types of ``cls``'s fields as events.py writes them. (``typing.get_type_hints``
    would give what a compiled class keeps: ``tuple`` for ``tuple[str, ...]``, ``type`` for
    ``Faction | None``.)"""
    source = Path(olympus.__file__).parent / "rules" / "events.py"
    tree = ast.parse(source.read_text())
    node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls.__name__)
    names = {**vars(typing), **vars(ev), "Faction": Faction, "Maneuver": Maneuver}
    return {
        statement.target.id: eval(ast.unparse(statement.annotation), names)
        for statement in node.body
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
    }


def event_strategy(cls: type[ev.Event]) -> st.SearchStrategy[ev.Event]:
    hints = declared_hints(cls)
    return st.builds(cls, **{f.name: strategy_for(hints[f.name]) for f in fields(cls)})


def _fixed_value(hint: Any) -> Any:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return _fixed_value(next(a for a in args if a is not type(None)))
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return list(hint)[-1]
    fixed: dict[Any, Any] = {bool: True, int: 35, str: "Persephone"}
    if hint in fixed:
        return fixed[hint]
    if hint is Any:
        return {"ms": 30_000, "on": True, "sides": ["olympians"], "none": None}
    if origin is tuple:
        return (_fixed_value(args[0]), _fixed_value(args[0]))
    if origin is dict:
        return {_fixed_value(args[0]): _fixed_value(args[1])}
    raise TypeError(f"no fixed sample for {hint!r}: extend _fixed_value")


def _fixed(cls: type[ev.Event]) -> ev.Event:
    """One fixed, non-default value per field: the readable regression case."""
    hints = declared_hints(cls)
    return cls(**{f.name: _fixed_value(hints[f.name]) for f in fields(cls)})


# The stored names of the event types: the log holds them, so none may change (a class renamed
# renames its type, events.py).
STORED_TAGS = {
    "game_created", "setup_submitted", "random_setup_drawn", "setup_revealed", "turn_started",
    "honor_changed", "energy_changed", "units_revealed", "units_hidden", "units_moved",
    "liturgy_performed", "passed", "thunderbolt_thrown", "unit_recalled", "leader_succeeded",
    "combat_started", "combat_committed", "commitment_withdrawn", "combat_round_resolved",
    "choice_pending", "unit_eliminated", "units_retreated", "stayed_in_combat",
    "combat_round_started", "combat_ended", "clock_set", "deadline_missed", "game_ended",
}  # fmt: skip


def test_the_stored_names_of_the_types_stay() -> None:
    """Every name a stored log may hold is still a type's; a new type adds its name here."""
    assert set(ev.EVENT_TYPES) == STORED_TAGS


def test_every_type_is_registered_under_its_tag() -> None:
    assert ev.EVENT_TYPES, "no event types registered"
    for tag, cls in ev.EVENT_TYPES.items():
        assert tag == cls.TYPE
        assert isinstance(cls.VERSION, int) and cls.VERSION >= 1


@pytest.mark.parametrize("tag", sorted(ev.EVENT_TYPES))
def test_representative_event_round_trips(tag: str) -> None:
    event = _fixed(ev.EVENT_TYPES[tag])
    raw = ev.encode(event)
    assert isinstance(raw, bytes)
    assert ev.decode(raw) == event
    assert_same_types(ev.decode(raw), event)
    data = msgpack.unpackb(raw, raw=False, strict_map_key=False)
    assert data["t"] == tag
    assert data["v"] == event.VERSION
    assert set(data) == {"t", "v"} | {f.name for f in fields(event)}


def _optional_fields(cls: type[ev.Event]) -> list[str]:
    hints = declared_hints(cls)
    return [f.name for f in fields(cls) if type(None) in typing.get_args(hints[f.name])]


@pytest.mark.parametrize("tag", sorted(t for t, c in ev.EVENT_TYPES.items() if _optional_fields(c)))
def test_optional_fields_round_trip_as_none(tag: str) -> None:
    cls = ev.EVENT_TYPES[tag]
    event = replace(_fixed(cls), **dict.fromkeys(_optional_fields(cls)))
    assert ev.decode(ev.encode(event)) == event
    assert_same_types(ev.decode(ev.encode(event)), event)


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_any_event_round_trips(data: st.DataObject) -> None:
    cls = data.draw(st.sampled_from(sorted(ev.EVENT_TYPES.values(), key=lambda c: c.TYPE)))
    event = data.draw(event_strategy(cls))
    decoded = ev.decode(ev.encode(event))
    assert decoded == event
    assert type(decoded) is cls
    assert_same_types(decoded, event)


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_every_event_holds_what_it_is_made_with(data: st.DataObject) -> None:
    """Each field holds the value given for it, made by keyword or by position in the fields'
    order: the hot events' ``__init__`` is spelled out (events.py's docstring: why), and a
    round trip alone would not see two fields of one type swapped (decoding makes the event
    the same way)."""
    cls = data.draw(st.sampled_from(sorted(ev.EVENT_TYPES.values(), key=lambda c: c.TYPE)))
    hints = declared_hints(cls)
    given_ = {f.name: data.draw(strategy_for(hints[f.name])) for f in fields(cls)}
    by_name, by_position = cls(**given_), cls(*given_.values())
    for name, value in given_.items():  # (a compiled int field is read back as a new int)
        for made in (by_name, by_position):
            held = getattr(made, name)
            assert held == value and type(held) is type(value), name
    assert by_name == by_position


def test_a_spelled_out_init_keeps_the_fields_defaults() -> None:
    """``UnitsMoved``'s spelled-out ``__init__`` defaults ``flight`` as its field does."""
    moved = ev.UnitsMoved(Faction.OLYMPIANS, ("Zeus",), 1, 2)
    assert moved.flight is next(f for f in fields(moved) if f.name == "flight").default


def assert_same_types(decoded: ev.Event, event: ev.Event) -> None:
    """Each field decoded to a value of the type it was made with: equality alone would take a
    ``str`` for a ``Faction`` (a ``StrEnum``), or a list for a tuple."""
    for f in fields(event):
        assert type(getattr(decoded, f.name)) is type(getattr(event, f.name)), f.name


def _raw(tag: str, version: int, **fields_: Any) -> bytes:
    return msgpack.packb({"t": tag, "v": version, **fields_}, use_bin_type=True)


def test_old_versions_are_upcast_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stored map of an older version passes every upcaster from its version to the current.

    Two fake old versions of ``honor_changed`` are registered only for this test.
    """
    cls = ev.HonorChanged
    tag, current = cls.TYPE, cls.VERSION
    calls: list[int] = []

    def from_two_back(data: dict[str, Any]) -> dict[str, Any]:  # had "side", not "faction"
        calls.append(data["v"])
        data = dict(data)
        data["faction"] = data.pop("side")
        return {**data, "v": current - 1}

    def from_one_back(data: dict[str, Any]) -> dict[str, Any]:  # had no "reason"
        calls.append(data["v"])
        return {**data, "reason": "base", "v": current}

    registered = dict(ev.UPCASTERS)
    with monkeypatch.context() as patch:
        patch.setitem(ev.UPCASTERS, (tag, current - 2), from_two_back)
        patch.setitem(ev.UPCASTERS, (tag, current - 1), from_one_back)

        old = _raw(tag, current - 2, side="olympians", delta=-3)
        assert ev.decode(old) == cls(faction=ev.Faction.OLYMPIANS, delta=-3, reason="base")
        assert calls == [current - 2, current - 1]

        calls.clear()  # a map of the current version is left alone
        event = cls(faction=ev.Faction.CHTHONIANS, delta=2, reason="attack")
        assert ev.decode(ev.encode(event)) == event
        assert calls == []
    assert registered == ev.UPCASTERS, "the temporary upcasters must be gone"


def test_an_old_version_without_upcaster_is_refused() -> None:
    """Without its upcaster an old map must fail loudly, never decode to a half-filled event."""
    tag = ev.HonorChanged.TYPE
    version = min([v for t, v in ev.UPCASTERS if t == tag] + [ev.HonorChanged.VERSION]) - 1
    old = _raw(tag, version, faction="olympians", delta=-1)
    with pytest.raises((LookupError, ValueError)):
        ev.decode(old)
