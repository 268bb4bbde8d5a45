"""Snapshots of the state survive msgpack exactly, and nothing else decodes.

A snapshot stands in for the fold of a room's log, so a decoded state must be the very state
that was encoded: equal, with the same types all the way down (a ``str`` key where a ``Faction``
was, a list where a frozenset was, would compare or hash differently later), and behaving the
same (same legal actions, same views). And since snapshots come back from Redis, any bytes that
are not a snapshot of this format must raise ``SnapshotError``, the signal to replay the log.

The states are every intermediate state (event by event) of random legal games in every
variant, clocks included, with deadlines that are sometimes missed.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, fields, is_dataclass, make_dataclass, replace
from typing import Any

import msgpack
import pytest

from olympus.bots import choose, setup_commands
from olympus.rules import Faction, GameState, Options, Phase, create, evolve, execute, replay
from olympus.rules import commands as cmd
from olympus.rules.legal import legal_actions
from olympus.rules.observation import view
from olympus.rules.snapshot import (
    FIELDS,
    STATE_FORMAT,
    SnapshotError,
    _check_fields,
    decode_state,
    encode_state,
)
from olympus.rules.state import (
    FACTS,
    Combat,
    Commitment,
    Maneuver,
    Step,
    StepKind,
)

_O, _C = Faction.OLYMPIANS, Faction.CHTHONIANS
GAMES = 60
MAX_COMMANDS = 300


# --- random games -----------------------------------------------------------------------------


def game_options(rng: random.Random) -> Options:
    """Every variant; half the games on the clock (R12), some with a forfeit limit."""
    clocked = rng.random() < 0.5
    return Options(
        open_combat=rng.random() < 0.5,
        random_setup=rng.random() < 0.5,
        chthonian_honor=rng.randint(-5, 5),
        move_seconds=rng.choice([10, 60]) if clocked else None,
        commit_seconds=rng.choice([None, 30]) if clocked else None,
        forfeit_seconds=rng.choice([None, 45, 600]) if clocked else None,
    )


@dataclass
class Game:
    options: Options
    states: list[GameState]  # after every event, the created game first
    events: list[Any]


def timeout(rng: random.Random, state: GameState, lazy: Faction) -> cmd.Timeout | None:
    """A missed deadline now and then, mostly by the game's lazy side (absences, forfeits)."""
    for side, entry in sorted(state.deadlines.items()):
        odds = 0.4 if side == lazy.value else 0.05
        if rng.random() < odds:
            seed = rng.randrange(2**63)
            return cmd.Timeout(side=Faction(side), at_ms=entry["due"], seed=seed)
    return None


def play(seed: int) -> Game:
    rng = random.Random(seed)
    options = game_options(rng)
    clocked = options.move_seconds is not None
    lazy = rng.choice(list(Faction))
    events = create(options, token_seed=rng.randrange(2**63))
    states = [replay(events)]
    now, setups = 0, setup_commands(rng, options)
    for _ in range(MAX_COMMANDS):
        state = states[-1]
        if state.phase is Phase.OVER:
            break
        command: cmd.Command | None = timeout(rng, state, lazy) if clocked else None
        if command is None and state.phase is Phase.SETUP:
            command = setups.pop(0)
        if command is None:
            action = choose(rng, state)
            assert action is not None, "a game in play offers some seat an action"
            command = action.command
        if clocked:
            now = max(now + rng.randint(0, 15_000), command.at_ms or 0)
            command = command.model_copy(update={"at_ms": now})
        new, after = execute(state, command)
        for event in new:  # every intermediate state, not only the one after the command
            states.append(evolve(states[-1], event))
        assert states[-1] == after
        events += new
    return Game(options, states, events)


@pytest.fixture(scope="module")
def games() -> list[Game]:
    return [play(seed) for seed in range(GAMES)]


@pytest.fixture(scope="module")
def all_states(games: list[Game]) -> list[GameState]:
    return [s for game in games for s in game.states]


# --- exact types ------------------------------------------------------------------------------


def typed(value: Any) -> Any:
    """``value`` with the exact type of every part next to it: equal only when both values are
    equal and built of the same types (``Faction.OLYMPIANS == "olympians"``, but not here), and
    their dicts in the same order."""
    if is_dataclass(value) and not isinstance(value, type):
        parts = tuple((f.name, typed(getattr(value, f.name))) for f in fields(value) if f.compare)
        return (type(value), parts)
    if isinstance(value, dict):
        return (type(value), [(typed(k), typed(v)) for k, v in value.items()])
    if isinstance(value, frozenset | set):
        return (type(value), sorted((typed(v) for v in value), key=repr))
    if isinstance(value, tuple | list):
        return (type(value), [typed(v) for v in value])
    return (type(value), value)


def test_typed_tells_types_apart() -> None:
    """The type check below would catch the mistakes a codec makes."""
    assert typed({_O: 1}) != typed({"olympians": 1})
    assert typed(frozenset({"Zeus"})) != typed(["Zeus"])
    assert typed(("Zeus",)) != typed(["Zeus"])
    assert typed(1) != typed(True)
    assert typed(Step(StepKind.REMOVE, _O, 3)) != typed(Step(StepKind.REMOVE, _O, 3, 4))


def assert_roundtrip(state: GameState) -> bytes:
    data = encode_state(state)
    decoded = decode_state(data)
    assert decoded == state
    assert type(decoded) is GameState
    assert typed(decoded) == typed(state), state
    assert encode_state(decoded) == data  # deterministic
    return data


# --- round trips ------------------------------------------------------------------------------


def test_every_state_of_random_games_round_trips(all_states: list[GameState]) -> None:
    for state in all_states:
        assert_roundtrip(state)


def test_random_games_cover_what_the_codec_carries(
    games: list[Game], all_states: list[GameState]
) -> None:
    """The games above reach every kind of value the state holds (else the round trips would
    prove less than they seem to)."""
    seen: Counter[str] = Counter()
    for s in all_states:
        seen["setups"] += bool(s.setups)
        seen["combat"] += s.combat is not None
        seen["commitments"] += bool(s.combat and s.combat.commitments)
        seen["both committed"] += bool(s.combat and len(s.combat.commitments) == 2)
        seen["later round"] += bool(s.combat and s.combat.round > 1)
        seen["pending"] += bool(s.pending)
        seen["several pending"] += len(s.pending) > 1
        seen["eliminated"] += bool(s.eliminated)
        seen["revealed"] += bool(s.revealed)
        seen["deadlines"] += bool(s.deadlines)
        seen["absent"] += bool(s.absent_since)
        seen["over"] += s.phase is Phase.OVER
        seen["winner"] += s.winner is not None
    options = [g.options for g in games]
    seen["open combat"] = sum(o.open_combat for o in options)
    seen["random setup"] = sum(o.random_setup for o in options)
    seen["challenge"] = sum(o.chthonian_honor != 0 for o in options)
    seen["clocks"] = sum(o.move_seconds is not None for o in options)
    seen["forfeit"] = sum(o.forfeit_seconds is not None for o in options)
    seen["forfeited"] = sum(
        any(e.TYPE == "game_ended" and e.reason == "forfeit" for e in g.events) for g in games
    )
    seen["missed"] = sum(any(e.TYPE == "deadline_missed" for e in g.events) for g in games)
    missing = [k for k in FEATURES if not seen[k]]
    assert not missing, f"no random state had {missing}: {seen}"


FEATURES = (
    "setups",
    "combat",
    "commitments",
    "both committed",
    "later round",
    "pending",
    "several pending",
    "eliminated",
    "revealed",
    "deadlines",
    "absent",
    "over",
    "winner",
    "open combat",
    "random setup",
    "challenge",
    "clocks",
    "forfeit",
    "forfeited",
    "missed",
)


def rare_state() -> GameState:
    """A state with a value in every field, and the rarer values random games seldom reach: a
    Step with ``to``, a combat after a flight (no origin), a Demeter elimination, a draw."""
    return GameState(
        options=Options(True, True, -5, 10, 20, 30),
        phase=Phase.OVER,
        turn=_O,
        turn_number=41,
        honor={_O: 0, _C: -3},
        energy={_O: 0, _C: 57},
        positions={"Zeus": 35, "Hades": 0, "Nyx": 17},
        picked=frozenset({"Zeus", "Hades", "Nyx", "Persephone"}),
        revealed=frozenset({"Zeus", "Persephone"}),
        eliminated=("Persephone",),
        unrecallable=frozenset({"Persephone"}),
        setups={_C: {"Hades": 1, "Nyx": 3}, _O: {"Zeus": 34}},
        combat=Combat(17, _C, None, 3, {_O: Commitment(Maneuver.CHASE, 0)}),
        pending=(Step(StepKind.WITHDRAW, _C, 17, 16), Step(StepKind.STRUCK, _O, 17)),
        tokens={"Zeus": 1, "Hades": 2, "Nyx": 40},
        next_token=41,
        token_seed=2**63 - 1,
        deadlines={"olympians": {"kind": "commit", "key": "41:3", "since": 1, "due": 2**40}},
        absent_since={"chthonians": 1_700_000_000_000},
        winner=None,
        result="draw",
        version=1234,
    )


def test_rare_values_round_trip() -> None:
    assert_roundtrip(rare_state())
    assert_roundtrip(GameState())


@pytest.mark.parametrize("name", FIELDS)
def test_no_field_is_dropped(name: str) -> None:
    """Each field on its own changes the bytes and comes back: none is ignored or defaulted."""
    value = _C if name == "winner" else getattr(rare_state(), name)  # the rare state is a draw
    changed = replace(GameState(), **{name: value})
    assert changed != GameState()
    assert encode_state(changed) != encode_state(GameState())
    assert typed(getattr(decode_state(encode_state(changed)), name)) == typed(value)


def test_types_come_back_exactly(games: list[Game]) -> None:
    """Spelled out for a mid-game state with a combat (``typed`` checks every state)."""
    state = next(
        s for g in games for s in g.states if s.combat is not None and s.combat.commitments
    )
    decoded = decode_state(encode_state(state))
    assert type(decoded.picked) is frozenset and type(decoded.revealed) is frozenset
    assert type(decoded.eliminated) is tuple and type(decoded.pending) is tuple
    assert all(type(k) is Faction for k in [*decoded.honor, *decoded.energy])
    assert decoded.phase is Phase.COMBAT and type(decoded.turn) is Faction
    assert decoded.combat is not None and type(decoded.combat) is Combat
    assert all(type(k) is Faction for k in decoded.combat.commitments)
    assert all(type(c.maneuver) is Maneuver for c in decoded.combat.commitments.values())
    assert type(decode_state(encode_state(rare_state())).pending[0].kind) is StepKind


def test_dict_order_is_kept(all_states: list[GameState]) -> None:
    """Dicts built in another order are equal states, but they come back in their own order:
    a view copies ``deadlines`` as it is, and a restored room must send the same bytes."""
    names = ("honor", "energy", "positions", "tokens", "deadlines", "setups", "absent_since")
    for state in all_states[::25]:
        shuffled = state.evolved({n: dict(reversed(getattr(state, n).items())) for n in names})
        assert shuffled == state
        decoded = decode_state(encode_state(shuffled))
        for name in names:
            assert list(getattr(decoded, name)) == list(getattr(shuffled, name)), name
        assert view(decoded, None) == view(shuffled, None)
        assert json.dumps(view(decoded, None)) == json.dumps(view(shuffled, None))


def test_a_decoded_state_plays_the_same(games: list[Game]) -> None:
    """What a server does with a decoded state is what it does with the folded one: the same
    legal actions in the same order, the same views, the same state after the rest of the log."""
    seats = (_O, _C, None)
    for game in games[:15]:
        for state in game.states[::7]:
            decoded = decode_state(encode_state(state))
            for side in Faction:
                expected = [(a.wire, a.honor, a.energy) for a in legal_actions(state, side)]
                assert [(a.wire, a.honor, a.energy) for a in legal_actions(decoded, side)] == (
                    expected
                )
            for seat in seats:
                assert view(decoded, seat) == view(state, seat)
        snapshot = decode_state(encode_state(game.states[len(game.states) // 2]))
        assert replay(game.events[snapshot.version :], snapshot) == game.states[-1]


# --- the field-list guard ---------------------------------------------------------------------


def test_fields_are_those_of_the_state() -> None:
    assert list(FIELDS) == list(FACTS)
    assert list(FIELDS) == [f.name for f in fields(GameState) if f.name != "_occupancy"]


def test_the_guard_refuses_a_field_the_codec_does_not_know() -> None:
    grown = make_dataclass("Grown", [*FACTS, ("favour", int)])  # the state with one fact more

    with pytest.raises(AssertionError, match="favour"):
        _check_fields(grown, FIELDS)
    with pytest.raises(AssertionError, match="bump STATE_FORMAT"):
        _check_fields(GameState, FIELDS[:-1])
    _check_fields(GameState, FIELDS)  # the real one passes


# --- what is not a snapshot -------------------------------------------------------------------


def payload() -> dict[str, Any]:
    """The unpacked snapshot of ``rare_state``, to break in one place."""
    data = msgpack.unpackb(encode_state(rare_state()), raw=False)
    assert data["f"] == STATE_FORMAT
    return data  # type: ignore[no-any-return]


def pack(data: Any) -> bytes:
    return msgpack.packb(data, use_bin_type=True)  # type: ignore[no-any-return]


def at(name: str) -> int:
    return FIELDS.index(name)


def with_field(name: str, value: Any) -> bytes:
    data = payload()
    data["s"][at(name)] = value
    return pack(data)


GARBAGE = [
    b"",
    b"\xc1",  # a byte msgpack never uses
    b"not a snapshot at all",
    b"\x91" * 100_000 + b"\x90",  # nested too deep
    b"\xdd\xff\xff\xff\xff",  # a huge array announced, nothing follows
    b"\x82\xa1f\x01\xa1s",  # cut short
    pack(None),
    pack([1, []]),
    pack("f"),
    pack({1: 1}),
    pack({b"f": 1, b"s": []}),
    pack({"f": 1}),
    pack({"f": 1, "s": None}),
    pack({"f": 1, "s": {}}),
    pack({"s": []}),
    pack({"f": msgpack.ExtType(5, b"x"), "s": []}),
]


@pytest.mark.parametrize("data", GARBAGE, ids=range(len(GARBAGE)))
def test_garbage_is_refused(data: bytes) -> None:
    with pytest.raises(SnapshotError):
        decode_state(data)


def test_truncated_and_padded_snapshots_are_refused() -> None:
    data = encode_state(rare_state())
    for cut in range(len(data)):
        with pytest.raises(SnapshotError):
            decode_state(data[:cut])
    with pytest.raises(SnapshotError):
        decode_state(data + b"\x00")


def test_not_bytes_is_refused() -> None:
    with pytest.raises(SnapshotError, match="bytes"):
        decode_state("a string")  # type: ignore[arg-type]
    with pytest.raises(SnapshotError):
        decode_state(None)  # type: ignore[arg-type]
    assert decode_state(bytearray(encode_state(rare_state()))) == rare_state()


@pytest.mark.parametrize("fmt", [0, STATE_FORMAT + 1, -1, True, "1", None, 1.0])
def test_another_format_is_refused(fmt: Any) -> None:
    data = payload()
    data["f"] = fmt
    with pytest.raises(SnapshotError, match="format"):
        decode_state(pack(data))
    del data["f"]
    with pytest.raises(SnapshotError, match="format"):
        decode_state(pack(data))


def test_a_missing_or_extra_field_is_refused() -> None:
    data = payload()
    data["s"].pop()
    with pytest.raises(SnapshotError, match=f"{len(FIELDS)} values"):
        decode_state(pack(data))
    data = payload()
    data["s"].append(0)
    with pytest.raises(SnapshotError, match=f"{len(FIELDS)} values"):
        decode_state(pack(data))
    data = payload()
    data["x"] = 1
    with pytest.raises(SnapshotError, match="keys"):
        decode_state(pack(data))


# Values no field accepts: a float, a list holding a list, a map whose values are lists.
NOWHERE = [1.5, [[]], {"zz": [[]]}]


@pytest.mark.parametrize("name", FIELDS)
def test_a_wrong_type_in_any_field_is_refused(name: str) -> None:
    for value in NOWHERE:
        with pytest.raises(SnapshotError, match=name):
            decode_state(with_field(name, value))


def options_with(index: int, value: Any) -> list[Any]:
    options = payload()["s"][at("options")]
    options[index] = value
    return options


WRONG: list[tuple[str, Any]] = [
    ("turn_number", True),  # a bool is not an integer here
    ("version", "7"),
    ("turn_number", None),
    ("phase", "intermission"),
    ("turn", "titans"),
    ("turn", None),
    ("honor", {"titans": 3}),
    ("honor", {"olympians": "3"}),
    ("positions", {"Zeus": b"\x01"}),
    ("positions", [["Zeus", 1]]),
    ("picked", ["Zeus", "Zeus"]),  # a set holds each unit once
    ("picked", [1, 2]),
    ("picked", "Zeus"),
    ("eliminated", [b"Zeus"]),
    ("setups", {"olympians": {"Zeus": "34"}}),
    ("combat", [17, "chthonians", None, 1]),
    ("combat", [17, "chthonians", None, 1, {"olympians": ["chase"]}]),
    ("combat", [17, "chthonians", None, 1, {"olympians": ["tango", 0]}]),
    ("combat", [17, "chthonians", 1.0, 1, {}]),
    ("pending", [["withdraw", "chthonians", 17, 16, 1]]),
    ("pending", [["lunch", "chthonians", 17, None]]),
    ("pending", [["withdraw", "chthonians", 17, "16"]]),
    ("pending", [None]),
    ("deadlines", {"olympians": {"due": [1]}}),
    ("deadlines", {"olympians": 5}),
    ("absent_since", {"olympians": None}),
    ("winner", "nobody"),
    ("result", 3),
    ("options", options_with(0, 1)),  # open_combat must be a bool
    ("options", options_with(3, "10")),
    ("options", options_with(2, None)),
    ("token_seed", msgpack.ExtType(1, b"\x00")),
    ("next_token", msgpack.Timestamp(0)),
]


@pytest.mark.parametrize(
    ("name", "value"), WRONG, ids=[f"{n}-{i}" for i, (n, _) in enumerate(WRONG)]
)
def test_a_wrong_value_is_refused_with_its_field(name: str, value: Any) -> None:
    with pytest.raises(SnapshotError, match=name):
        decode_state(with_field(name, value))


def test_a_good_value_in_the_same_place_is_accepted() -> None:
    """The refusals above are about the values, not the way the test builds snapshots."""
    for name in FIELDS:
        good = msgpack.unpackb(encode_state(rare_state()), raw=False)["s"][at(name)]
        assert decode_state(with_field(name, good)) == rare_state()


def flipped(rng: random.Random, data: bytes) -> Iterator[bytes]:
    for _ in range(1500):
        mutated = bytearray(data)
        for _ in range(rng.randint(1, 3)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
        yield bytes(mutated)


def test_corrupted_snapshots_decode_or_raise_snapshot_error(games: list[Game]) -> None:
    """Random byte flips: the result is a state or a ``SnapshotError``, never anything else."""
    rng = random.Random(5)
    sources = [rare_state(), games[0].states[len(games[0].states) // 2], games[1].states[-1]]
    outcomes: Counter[str] = Counter()
    for source in sources:
        for data in flipped(rng, encode_state(source)):
            try:
                state = decode_state(data)
            except SnapshotError:
                outcomes["refused"] += 1
            else:
                assert type(state) is GameState
                outcomes["decoded"] += 1
    assert outcomes["refused"] and outcomes["decoded"], outcomes


# --- encoding what cannot be carried -------------------------------------------------------------


BAD_STATES: list[Callable[[], GameState]] = [
    lambda: replace(GameState(), token_seed=2**64),
    lambda: replace(GameState(), deadlines={"olympians": {"due": (1, 2)}}),
]


@pytest.mark.parametrize("make", BAD_STATES)
def test_encoding_what_the_format_cannot_carry_raises(make: Callable[[], GameState]) -> None:
    with pytest.raises(SnapshotError):
        encode_state(make())
