"""Snapshots: a compact, safe msgpack encoding of a whole ``GameState``.

A room's state is the fold of its event log (``replay``); a snapshot only caches that fold at
some version, so that a room can be rebuilt from the snapshot and the events after it. Nothing is
lost by distrusting one: ``decode_state`` raises ``SnapshotError`` for a snapshot written in
another format (``STATE_FORMAT``) or for bytes that do not decode to a well-typed state, and the
caller then ignores the snapshot and replays the log. Bump ``STATE_FORMAT`` whenever the encoding
changes (a field added, removed, renamed or retyped): old snapshots then just stop being used.

Why not pickle: the bytes live in Redis, and whoever can write a key there must not be able to
run code in the server, which unpickling grants. Pickle also binds the bytes to the classes'
layout and module paths, so a refactoring breaks stored states or, worse, misreads them. Here
the data is only ever plain msgpack values: decoding checks the type of every value and builds
the enums, dataclasses and containers itself, so malformed bytes can only raise.

Layout: ``{"f": STATE_FORMAT, "s": [one value per fact of GameState, in FIELDS order]}``. Enums go
by value, frozensets as sorted lists, tuples as lists, the nested dataclasses (Options, Combat,
Commitment, Step) as lists of their fields, maps in their insertion order (Factions by value).
The order is kept because a restored room must behave exactly like one folded from the log,
byte for byte in what it sends: state equality ignores dict order, but a view that copies a
dict (``deadlines``) does not.

Every field and nested dataclass is encoded from an explicit list of field names, checked at
import against ``dataclasses.fields``: a field added to a class cannot be silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from enum import Enum
from typing import Any, TypeVar

import msgpack

from .characters import Faction
from .state import Combat, Commitment, GameState, Maneuver, Options, Phase, Step, StepKind

STATE_FORMAT: int = 1  # bump when the encoding changes

Plain = Any  # a value msgpack carries as is: None, bool, int, float, str, list, dict
Encoder = Callable[[Any], Plain]
Decoder = Callable[[Plain], Any]
Codec = tuple[Encoder, Decoder]

T = TypeVar("T")
E = TypeVar("E", bound=Enum)


class SnapshotError(ValueError):
    """The snapshot cannot be used (malformed, or another format): replay the log instead."""


def _describe(value: object) -> str:
    """A short repr for an error message (the value may be a whole snapshot's worth)."""
    text = repr(value)
    if len(text) > 40:
        text = text[:40] + "..."
    return f"{text} ({type(value).__name__})"


def _bad(expected: str, value: object) -> SnapshotError:
    return SnapshotError(f"expected {expected}, got {_describe(value)}")


def _check_fields(cls: type, names: tuple[str, ...]) -> None:
    """Fail at import when a dataclass's fields are not exactly the ones the codec encodes
    (its compared fields: a cache such as ``GameState``'s occupancy is not encoded)."""
    actual = tuple(f.name for f in fields(cls) if f.compare)
    if names != actual:
        raise AssertionError(
            f"snapshot.py encodes {cls.__name__} as {names} but its fields are {actual}: "
            "update the codec and bump STATE_FORMAT"
        )


# --- scalars ----------------------------------------------------------------------------------


def _same(value: T) -> T:
    return value


def _int(value: Plain) -> int:
    if type(value) is not int:  # not a bool either
        raise _bad("an integer", value)
    return value


def _bool(value: Plain) -> bool:
    if type(value) is not bool:
        raise _bad("a boolean", value)
    return value


def _str(value: Plain) -> str:
    if type(value) is not str:
        raise _bad("a string", value)
    return value


def _scalar(value: Plain) -> bool | int | float | str | None:
    """A plain value of an ``Any`` field (the deadlines); checked both ways, since msgpack would
    turn a tuple into a list and the state would not come back equal."""
    if value is None or type(value) in (bool, int, float, str):
        return value  # type: ignore[no-any-return]
    raise _bad("None, a boolean, a number or a string", value)


def _enum_value(member: Enum) -> str:
    return member.value  # type: ignore[no-any-return]


def _enum(cls: type[E]) -> Decoder:
    def decode(value: Plain) -> E:
        if type(value) is str:
            try:
                return cls(value)
            except ValueError:
                pass
        raise _bad(f"a {cls.__name__} ({', '.join(m.value for m in cls)})", value)

    return decode


def _optional(codec: Codec) -> Codec:
    encode, decode = codec

    def encode_optional(value: Any) -> Plain:
        return None if value is None else encode(value)

    def decode_optional(value: Plain) -> Any:
        return None if value is None else decode(value)

    return encode_optional, decode_optional


INT: Codec = (_same, _int)
BOOL: Codec = (_same, _bool)
STR: Codec = (_same, _str)
SCALAR: Codec = (_scalar, _scalar)


def _enum_codec(cls: type[Enum]) -> Codec:
    return _enum_value, _enum(cls)


FACTION = _enum_codec(Faction)


# --- containers -------------------------------------------------------------------------------


def _list(value: Plain, length: int | None = None) -> list[Plain]:
    if type(value) is not list:
        raise _bad("a list", value)
    if length is not None and len(value) != length:
        raise SnapshotError(f"expected a list of {length} values, got {len(value)}")
    return value


def _map(key: Codec, item: Codec) -> Codec:
    """A dict, in its insertion order (msgpack maps keep it), keys encoded as strings."""
    encode_key, decode_key = key
    encode_item, decode_item = item

    def encode(value: dict[Any, Any]) -> dict[str, Plain]:
        return {encode_key(k): encode_item(v) for k, v in value.items()}

    def decode(value: Plain) -> dict[Any, Any]:
        if type(value) is not dict:
            raise _bad("a map", value)
        result: dict[Any, Any] = {}
        for k, v in value.items():
            try:
                result[decode_key(k)] = decode_item(v)
            except SnapshotError as error:
                raise SnapshotError(f"[{k!r}]: {error}") from None
        return result

    return encode, decode


def _frozenset(item: Codec) -> Codec:
    encode_item, decode_item = item

    def encode(value: frozenset[Any]) -> list[Plain]:
        return sorted(encode_item(v) for v in value)

    def decode(value: Plain) -> frozenset[Any]:
        items = [decode_item(v) for v in _list(value)]
        result = frozenset(items)
        if len(result) != len(items):
            raise SnapshotError(f"duplicates in a set: {_describe(value)}")
        return result

    return encode, decode


def _tuple(item: Codec) -> Codec:
    encode_item, decode_item = item

    def encode(value: tuple[Any, ...]) -> list[Plain]:
        return [encode_item(v) for v in value]

    def decode(value: Plain) -> tuple[Any, ...]:
        return tuple(decode_item(v) for v in _list(value))

    return encode, decode


def _record(cls: Callable[..., T], parts: dict[str, Codec]) -> Codec:
    """A dataclass as the list of its fields in ``parts`` order (checked against the class)."""
    _check_fields(cls, tuple(parts))  # type: ignore[arg-type]
    names = tuple(parts)
    encoders = tuple(encode for encode, _ in parts.values())
    decoders = tuple(decode for _, decode in parts.values())

    def encode(value: T) -> list[Plain]:
        return [enc(getattr(value, name)) for name, enc in zip(names, encoders, strict=True)]

    def decode(value: Plain) -> T:
        items = _list(value, len(names))
        kwargs: dict[str, Any] = {}
        for name, dec, item in zip(names, decoders, items, strict=True):
            try:
                kwargs[name] = dec(item)
            except SnapshotError as error:
                raise SnapshotError(f"{name}: {error}") from None
        return cls(**kwargs)

    return encode, decode


# --- the state --------------------------------------------------------------------------------

OPTIONS = _record(
    Options,
    {
        "open_combat": BOOL,
        "random_setup": BOOL,
        "chthonian_honor": INT,
        "move_seconds": _optional(INT),
        "commit_seconds": _optional(INT),
        "forfeit_seconds": _optional(INT),
    },
)
COMMITMENT = _record(Commitment, {"maneuver": _enum_codec(Maneuver), "energy": INT})
COMBAT = _record(
    Combat,
    {
        "region": INT,
        "attacker": FACTION,
        "origin": _optional(INT),
        "round": INT,
        "commitments": _map(FACTION, COMMITMENT),
    },
)
STEP = _record(
    Step,
    {"kind": _enum_codec(StepKind), "faction": FACTION, "region": INT, "to": _optional(INT)},
)

# Every fact of ``GameState`` (``state.FACTS``), in its order: the list a snapshot holds.
_STATE_PARTS: dict[str, Codec] = {
    "options": OPTIONS,
    "phase": _enum_codec(Phase),
    "turn": FACTION,
    "turn_number": INT,
    "honor": _map(FACTION, INT),
    "energy": _map(FACTION, INT),
    "positions": _map(STR, INT),
    "picked": _frozenset(STR),
    "revealed": _frozenset(STR),
    "eliminated": _tuple(STR),
    "unrecallable": _frozenset(STR),
    "setups": _map(FACTION, _map(STR, INT)),
    "combat": _optional(COMBAT),
    "pending": _tuple(STEP),
    "tokens": _map(STR, INT),
    "next_token": INT,
    "token_seed": INT,
    "deadlines": _map(STR, _map(STR, SCALAR)),  # {side: {"kind", "key", "since", "due"}}
    "absent_since": _map(STR, INT),
    "winner": _optional(FACTION),
    "result": _optional(STR),
    "version": INT,
}
FIELDS: tuple[str, ...] = tuple(_STATE_PARTS)
_encode_fields, _decode_fields = _record(GameState, _STATE_PARTS)


def encode_state(state: GameState) -> bytes:
    """The snapshot of ``state``; equal states give equal bytes. Raises ``SnapshotError`` for
    a state holding what the format cannot carry (an integer beyond 64 bits, say)."""
    payload = {"f": STATE_FORMAT, "s": _encode_fields(state)}
    try:
        return msgpack.packb(payload, use_bin_type=True)  # type: ignore[no-any-return]
    except (TypeError, ValueError, OverflowError) as error:
        raise SnapshotError(f"cannot encode the state: {error}") from error


def _unpack(data: bytes) -> dict[Any, Any]:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise SnapshotError(f"a snapshot is bytes, got {type(data).__name__}")
    try:
        payload = msgpack.unpackb(data, raw=False, strict_map_key=True)
    except Exception as error:  # msgpack raises several types (ValueError, TypeError, ...)
        raise SnapshotError(f"not a msgpack snapshot: {error!r}") from error
    if type(payload) is not dict:
        raise SnapshotError(f"a snapshot is a map, got {_describe(payload)}")
    return payload


def decode_state(data: bytes) -> GameState:
    """The state ``encode_state`` encoded, or ``SnapshotError`` (then replay the log)."""
    payload = _unpack(data)
    fmt = payload.get("f")
    if type(fmt) is not int or fmt != STATE_FORMAT:
        raise SnapshotError(
            f"snapshot format {fmt!r}, this code reads format {STATE_FORMAT}: replay the log"
        )
    if set(payload) != {"f", "s"}:
        raise SnapshotError(
            f"a snapshot map has keys 'f' and 's', got {sorted(map(repr, payload))}"
        )
    try:
        state: GameState = _decode_fields(payload["s"])
    except SnapshotError as error:
        raise SnapshotError(f"bad snapshot: {error}") from None
    return state
