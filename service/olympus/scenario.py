"""Rule scenarios: a position, commands played as a seat, and what must follow (docs/scenarios.md).

A scenario file is YAML; the runner builds the position as a ``GameState`` directly (so any
position, a combat included, can be set up in a few lines), plays each step through ``execute``
and compares the outcome with the step's expectations. Both ``olympus scenario`` and the test
suite use this module, so a scenario means the same everywhere. Beyond the expectations written
in a file, every scenario checks the invariants no rule may break: replaying the emitted events
rebuilds the state, every event survives ``encode``/``decode``, an illegal command changes
nothing, and ``legal_actions`` offers exactly the commands that ``decide`` accepts.
"""

from __future__ import annotations

import copy
import glob
import sys
import traceback
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from pathlib import Path
from typing import Any, TextIO, get_args

import pydantic
import yaml

from .rules import (
    BOARD,
    BY_NAME,
    GameState,
    IllegalCommand,
    Options,
    Phase,
    create,
    decode,
    encode,
    evolve,
    execute,
    legal_actions,
    parse_command,
)
from .rules import commands as cmd
from .rules import events as ev
from .rules.characters import Faction
from .rules.state import Combat, Commitment, Maneuver, Step

SIDES = {f.value: f for f in Faction}
# The YAML key of a command is its ``type``; read from the union so new commands just work.
COMMAND_TYPES: dict[str, type[pydantic.BaseModel]] = {
    model.model_fields["type"].default: model for model in get_args(get_args(cmd.Command)[0])
}
# Fields every command has (side, type, clock…); the others are the command's own.
COMMON_FIELDS = set.intersection(*(set(m.model_fields) for m in COMMAND_TYPES.values()))
# Setup and system commands, resignation and abort, which ``legal_actions`` does not list.
NOT_LISTED = {"submit_setup", "draw_random_setup", "timeout", "resign", "abort"}
GIVEN_KEYS = {
    "setup", "options", "units", "revealed", "eliminated", "honor", "energy", "turn",
    "turn_number", "combat", "pending",
}  # fmt: skip
STEP_KEYS = {"as", "expect", "expect_error", "note"}
SET_FORMS = {"exactly", "includes", "excludes"}


class ScenarioError(Exception):
    """The scenario file itself is wrong (unknown key, bad unit name…): fix the file."""


@dataclass
class Mismatch(AssertionError):
    """The rules disagree with a scenario: where it happened and expected vs actual."""

    where: str
    problems: list[str]
    context: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [f"FAIL {self.where}", *(f"  {p}" for p in self.problems)]
        if self.context:
            lines += ["  events of this step:", *(f"    {c}" for c in self.context)]
        return "\n".join(lines)


@dataclass(frozen=True)
class Scenario:
    file: str
    name: str
    data: dict[str, Any]

    @property
    def id(self) -> str:
        return f"{self.file}::{self.name}"


def differs(label: str, expected: Any, actual: Any) -> str:
    """One readable problem: what was expected, what the rules did."""
    return f"{label}\n    expected: {expected}\n    actual:   {actual}"


# --- loading ------------------------------------------------------------------------------------


def expand(paths: Iterable[str]) -> list[Path]:
    """Files named on the command line; directories and unexpanded globs (``**``) are walked,
    so ``make scenarios`` works whether or not the shell expanded its patterns."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += sorted(path.rglob("*.yaml"))
        elif path.exists():
            found.append(path)
        elif any(c in raw for c in "*?["):
            found += sorted(Path(p) for p in glob.glob(raw, recursive=True))
        else:
            raise ScenarioError(f"{raw}: no such file")
    return list(dict.fromkeys(found))


def load(path: Path) -> list[Scenario]:
    """The scenarios of one file: ``scenarios:`` (a list); other top keys hold YAML anchors."""
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as error:
        raise ScenarioError(f"{path}: not valid YAML: {error}") from error
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), list):
        raise ScenarioError(f"{path}: the file needs a top-level 'scenarios:' list")
    scenarios, names = [], set()
    for i, item in enumerate(data["scenarios"], 1):
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ScenarioError(f"{path}: scenario #{i} needs a 'name'")
        _keys(item, {"name", "rules", "given", "steps"}, f"{path}: {item['name']}")
        if item["name"] in names:
            raise ScenarioError(f"{path}: two scenarios are called {item['name']!r}")
        names.add(item["name"])
        scenarios.append(Scenario(str(path), item["name"], item))
    return scenarios


def _keys(data: Any, allowed: set[str], where: str) -> dict[str, Any]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ScenarioError(f"{where}: expected a mapping, got {data!r}")
    unknown = set(map(str, data)) - allowed
    if unknown:
        raise ScenarioError(f"{where}: unknown key(s) {sorted(unknown)}; allowed {sorted(allowed)}")
    return data


def _side(value: Any, where: str) -> Faction:
    if value not in SIDES:
        raise ScenarioError(f"{where}: {value!r} is not a side (olympians, chthonians)")
    return SIDES[value]


def _per_side(data: Any, where: str) -> dict[Faction, Any]:
    return {_side(k, where): v for k, v in _keys(data, set(SIDES), where).items()}


def _unit(name: Any, where: str) -> str:
    if name not in BY_NAME:
        raise ScenarioError(f"{where}: {name!r} is not a character")
    return name


def _region(region: Any, where: str) -> int:
    if not isinstance(region, int) or region not in range(len(BOARD.regions)):
        raise ScenarioError(f"{where}: {region!r} is not a region (0–35)")
    return region


def _units(names: Any, where: str) -> list[str]:
    if not isinstance(names, list):
        raise ScenarioError(f"{where}: expected a list of units, got {names!r}")
    return [_unit(n, where) for n in names]


# --- the position -------------------------------------------------------------------------------


def build(given: Any, where: str) -> tuple[GameState, list[ev.Event]]:
    """The state a scenario starts from, and the events already in its log (setup mode).

    ``setup: true`` starts from ``GameCreated`` so setup commands can be played; otherwise the
    position is put on the board directly, with the defaults of a game in progress.
    """
    given = _keys(given, GIVEN_KEYS, f"{where}: given")
    option_names = {f.name for f in fields(Options)}
    options = Options(**_keys(given.get("options"), option_names, f"{where}: options"))
    if given.get("setup"):
        if set(given) - {"setup", "options"}:
            raise ScenarioError(f"{where}: a setup scenario takes only 'options'")
        return GameState(), create(options)
    positions = {_unit(u, where): _region(r, where) for u, r in (given.get("units") or {}).items()}
    eliminated = tuple(_units(given.get("eliminated", []), f"{where}: eliminated"))
    honor = 10 if options.open_combat else 16
    honors = {Faction.OLYMPIANS: honor, Faction.CHTHONIANS: honor + options.chthonian_honor}
    honors.update(_per_side(given.get("honor"), f"{where}: honor"))
    energy = {f: 24 for f in Faction} | _per_side(given.get("energy"), f"{where}: energy")
    revealed = given.get("revealed", [])
    revealed = set(positions) if revealed == "all" else set(_units(revealed, f"{where}: revealed"))
    combat, phase = None, Phase.TURN
    if "combat" in given:
        c = _keys(
            given["combat"],
            {"region", "attacker", "origin", "round", "committed"},
            f"{where}: combat",
        )
        if "origin" not in c or "region" not in c or "attacker" not in c:
            raise ScenarioError(f"{where}: combat needs region, attacker and origin (or null)")
        committed = {
            side: Commitment(Maneuver(v["maneuver"]), int(v.get("energy", 0)))
            for side, v in _per_side(c.get("committed"), f"{where}: committed").items()
        }
        attacker = _side(c["attacker"], f"{where}: combat")
        combat = Combat(c["region"], attacker, c["origin"], c.get("round", 1), committed)
        phase = Phase.COMBAT
        revealed |= {u for u, r in positions.items() if r == combat.region}  # R8
    turn = given.get("turn", combat.attacker.value if combat else "chthonians")
    pending = tuple(_pending(s, combat, where) for s in given.get("pending", []))
    # tokens as the setup reveal draws them: Olympians first, in region order (R7)
    ordered = sorted(
        positions.items(), key=lambda i: (BY_NAME[i[0]].faction is not Faction.OLYMPIANS, i[1])
    )
    tokens = {u: n for n, (u, _) in enumerate(ordered, 1)}
    state = replace(
        GameState(),
        options=options,
        phase=phase,
        turn=_side(turn, f"{where}: turn"),
        turn_number=given.get("turn_number", 1),
        honor=honors,
        energy=energy,
        positions=positions,
        picked=frozenset(positions) | frozenset(eliminated),
        revealed=frozenset(revealed) | frozenset(eliminated),  # R7: eliminated units are shown
        eliminated=eliminated,
        combat=combat,
        pending=pending,
        tokens=tokens,
        next_token=len(tokens) + 1,
    )
    return state, []


def _pending(text: Any, combat: Combat | None, where: str) -> Step:
    """A pending step written ``kind:side`` or ``kind:side:region`` (the combat's by default)."""
    parts = str(text).split(":")
    if len(parts) == 2 and combat is not None:
        parts.append(str(combat.region))
    try:
        return Step.decode(":".join(parts))
    except ValueError as error:
        raise ScenarioError(f"{where}: bad pending step {text!r} ({error})") from error


# --- steps --------------------------------------------------------------------------------------


def command_of(step: dict[str, Any], where: str) -> cmd.Command | None:
    """The command of a step: its one command key, fields as in ``commands.py``; scalars are
    shorthands for one-field commands (``retreat: 17``, ``remove_unit: Hermes``)."""
    keys = [k for k in step if k not in STEP_KEYS]
    if not keys:
        if "as" in step or "expect_error" in step:
            raise ScenarioError(f"{where}: 'as' and 'expect_error' need a command")
        return None
    if len(keys) > 1 or keys[0] not in COMMAND_TYPES:
        raise ScenarioError(
            f"{where}: unknown or several commands {keys}; one of {sorted(COMMAND_TYPES)}"
        )
    kind = keys[0]
    body = step[kind]
    if body is None:
        body = {}
    elif not isinstance(body, dict):
        body = {_own_fields(kind)[0]: body}
    data = {"type": kind, **body}
    if "as" in step:
        data["side"] = step["as"]  # validated by the command model, like a seat's input
    try:
        return parse_command(data)
    except pydantic.ValidationError as error:
        raise Invalid(error) from error


def _own_fields(kind: str) -> list[str]:
    fields_ = [n for n in COMMAND_TYPES[kind].model_fields if n not in COMMON_FIELDS]
    if not fields_:
        raise ScenarioError(f"{kind} has no field: write '{kind}:' with no value")
    return fields_


class Invalid(Exception):
    """A command the service would refuse at its edge (pydantic), e.g. a region 36."""


def describe(step: dict[str, Any]) -> str:
    """The step as written, on one line, for the failure report."""
    parts = [f"{k}: {_flow(v)}" for k, v in step.items() if k not in ("expect", "note")]
    return ", ".join(parts) or "(check only)"


def _flow(value: Any) -> str:
    return (
        yaml.safe_dump(value, default_flow_style=True, width=10_000, sort_keys=False)
        .strip()
        .removesuffix("\n...")
    )


# --- running ------------------------------------------------------------------------------------


def run(scenario: Scenario) -> None:
    """Play a scenario; raise ``Mismatch`` at the first step the rules disagree with."""
    where = scenario.id
    start, log = build(scenario.data.get("given"), where)
    state = start
    for event in log:
        state = evolve(state, event)
    steps = scenario.data.get("steps") or []
    if not isinstance(steps, list):
        raise ScenarioError(f"{where}: 'steps' must be a list")
    for index, step in enumerate(steps, 1):
        at = f"{where} · step {index}: {describe(step) if isinstance(step, dict) else step}"
        step = _keys(step, STEP_KEYS | set(COMMAND_TYPES), at)
        state, events = play(state, step, at)
        log += events
    check_log(start, log, state, where)


def play(state: GameState, step: dict[str, Any], at: str) -> tuple[GameState, list[ev.Event]]:
    """One step; a crash inside the rules is reported as a failure of this step, not a traceback
    of the runner, so the CLI still names the file, the scenario and the step."""
    try:
        return _play(state, step, at)
    except (Mismatch, ScenarioError):
        raise
    except Exception as crash:
        frames = traceback.extract_tb(crash.__traceback__)[-3:]
        path = " → ".join(f"{Path(f.filename).name}:{f.lineno} {f.name}" for f in frames)
        raise Mismatch(
            at, [f"the rules raised {type(crash).__name__}: {crash}\n    in {path}"]
        ) from crash


def _play(state: GameState, step: dict[str, Any], at: str) -> tuple[GameState, list[ev.Event]]:
    """The command (if any), its error or events, then the step's expectations."""
    snapshot = copy.deepcopy(state)
    events: list[ev.Event] = []
    error: str | None = None
    try:
        command = command_of(step, at)
    except Invalid as invalid:
        command, error = None, f"invalid_command ({invalid.__cause__})"
    if command is not None:
        try:
            events, after = execute(state, command)
        except IllegalCommand as illegal:
            error, after = f"{illegal.code} ({illegal.sentence})", state
        _check_legal(state, command, error is None, at)
    else:
        after = state
    expected_error = step.get("expect_error")
    if expected_error != (error.split(" ")[0] if error else None):
        outcome = differs("outcome", expected_error or "accepted", error or "accepted")
        raise Mismatch(at, [outcome], [show(e) for e in events])
    if error and state != snapshot:
        raise Mismatch(at, ["an illegal command changed the state"])
    problems = check(step.get("expect"), state, after, events, at)
    if problems:
        raise Mismatch(at, problems, [show(e) for e in events])
    for event in events:  # the step's own invariant: its events rebuild its state
        state = evolve(state, event)
    if events and state != after:
        raise Mismatch(
            at, ["replaying the step's events does not give its state", *diff(after, state)]
        )
    return after, events


def _check_legal(state: GameState, command: cmd.Command, accepted: bool, at: str) -> None:
    """``legal_actions`` must list a seat's command exactly when ``decide`` accepts it.

    Hermes' paths are listed up to one further step (longer ones may revisit regions without
    end); a longer path is checked through its first two steps."""
    if command.type in NOT_LISTED or command.side is None:
        return
    if isinstance(command, cmd.Move) and len(command.steps) > 1:
        command = command.model_copy(update={"steps": command.steps[:1]})
        accepted = _accepted(state, command)
    listed = any(_same(a.command, command) for a in legal_actions(state, command.side))
    if listed != accepted:
        verdict = "accepts" if accepted else "refuses"
        offer = "does not offer" if accepted else "offers"
        raise Mismatch(at, [f"decide {verdict} the command but legal_actions {offer} it"])


def _accepted(state: GameState, command: cmd.Command) -> bool:
    try:
        execute(state, command)
    except IllegalCommand:
        return False
    return True


def _same(a: cmd.Command, b: cmd.Command) -> bool:
    """The same command from the same seat; service stamps (the clock) do not matter."""
    stamps = COMMON_FIELDS - {"side", "type"}
    return _plain(a.model_dump(exclude=stamps), True) == _plain(b.model_dump(exclude=stamps), True)


def check_log(start: GameState, log: list[ev.Event], final: GameState, where: str) -> None:
    """Event sourcing: the log alone rebuilds the final state, and every event round-trips."""
    for event in log:
        back = decode(encode(event))
        if back != event:
            raise Mismatch(where, [differs("event round-trip", event, back)])
    state = start
    for event in log:
        state = evolve(state, event)
    if state != final:
        raise Mismatch(
            where, ["replaying the log does not rebuild the final state", *diff(final, state)]
        )


def diff(expected: GameState, actual: GameState) -> list[str]:
    """The fields of two states that differ (for the event-sourcing checks)."""
    return [
        differs(f.name, repr(getattr(expected, f.name)), repr(getattr(actual, f.name)))
        for f in fields(GameState)
        if f.compare and getattr(expected, f.name) != getattr(actual, f.name)
    ]


def show(event: ev.Event) -> str:
    """An event on one line: ``type field=value …``."""
    data = ev.to_dict(event)
    data.pop("v")
    kind = data.pop("t")
    return " ".join([kind, *(f"{k}={_plain(v)}" for k, v in data.items())])


def _plain(value: Any, sort: bool = False) -> Any:
    """Comparable YAML-like values: enums as strings, tuples and sets as (sorted) lists."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {(k.value if isinstance(k, Enum) else k): _plain(v, sort) for k, v in value.items()}
    if isinstance(value, set | frozenset):
        return sorted(_plain(v) for v in value)
    if isinstance(value, list | tuple):
        items = [_plain(v, sort) for v in value]
        return sorted(items, key=repr) if sort else items
    return value


# --- expectations -------------------------------------------------------------------------------

EXPECT_KEYS = {
    "honor", "energy", "honor_delta", "energy_delta", "positions", "occupants", "unit_count",
    "eliminated", "revealed", "phase", "turn", "turn_number", "winner", "result", "pending",
    "combat", "round", "committed", "events", "no_events", "legal",
}  # fmt: skip


def check(
    expect: Any, before: GameState, after: GameState, events: list[ev.Event], at: str
) -> list[str]:
    """Every expectation of a step that the state or the events contradict, readably."""
    expect = _keys(expect, EXPECT_KEYS, f"{at}: expect")
    problems: list[str] = []

    def compare(label: str, wanted: Any, actual: Any) -> None:
        if _plain(wanted) != _plain(actual):
            problems.append(differs(label, _plain(wanted), _plain(actual)))

    for key, stock in (("honor", "honor"), ("energy", "energy")):
        for side, wanted in _per_side(expect.get(key), at).items():
            compare(f"{key}.{side.value}", wanted, getattr(after, stock)[side])
        for side, wanted in _per_side(expect.get(f"{key}_delta"), at).items():
            actual = getattr(after, stock)[side] - getattr(before, stock)[side]
            compare(f"{key}_delta.{side.value}", wanted, actual)
    for unit, wanted in (expect.get("positions") or {}).items():
        actual = after.positions.get(_unit(unit, at))
        if isinstance(wanted, list):
            if actual not in wanted:
                compare(f"positions.{unit} (one of {wanted})", wanted, actual)
        else:
            compare(f"positions.{unit}", wanted, actual)
    for region, wanted in (expect.get("occupants") or {}).items():
        compare(f"occupants.{region}", sorted(_units(wanted, at)), sorted(after.units_in(region)))
    for side, wanted in _per_side(expect.get("unit_count"), at).items():
        compare(f"unit_count.{side.value}", wanted, len(after.units_of(side)))
    for key in ("eliminated", "revealed"):
        if key in expect:
            problems += _set_check(key, expect[key], set(getattr(after, key)), at)
    simple = {
        "phase": after.phase,
        "turn": after.turn,
        "turn_number": after.turn_number,
        "winner": after.winner,
        "result": after.result,
    }
    for key, actual in simple.items():
        if key in expect:
            compare(key, expect[key], actual)
    if "pending" in expect:
        wanted = [
            _pending(s, after.combat or before.combat, at).encode() for s in expect["pending"]
        ]
        compare("pending", wanted, [s.encode() for s in after.pending])
    if "combat" in expect:
        problems += _combat_check(expect["combat"], after.combat, at)
    if "round" in expect:
        compare("round", expect["round"], after.combat.round if after.combat else None)
    if "committed" in expect:
        actual = sorted(f.value for f in after.combat.commitments) if after.combat else []
        compare("committed", sorted(expect["committed"]), actual)
    if "events" in expect:
        problems += _events_check(expect["events"], events, at)
    for kind in expect.get("no_events", []):
        _event_type(kind, at)
        if kind in {e.TYPE for e in events}:
            problems.append(f"no_events: a {kind} event was emitted")
    if "legal" in expect:
        problems += _legal_check(expect["legal"], after, at)
    return problems


def _set_check(key: str, wanted: Any, actual: set[str], at: str) -> list[str]:
    """A list means exactly these; a mapping may say ``exactly``, ``includes``, ``excludes``."""
    forms = {"exactly": wanted} if isinstance(wanted, list) else _keys(wanted, SET_FORMS, at)
    problems = []
    for form, units in forms.items():
        units = set(_units(units, f"{at}: {key}"))
        missing = units - actual if form in ("exactly", "includes") else set()
        extra = (
            (actual - units)
            if form == "exactly"
            else (actual & units if form == "excludes" else set())
        )
        if missing or extra:
            problems.append(
                f"{key} ({form} {sorted(units)})\n    actual:   {sorted(actual)}"
                + (f"\n    missing:  {sorted(missing)}" if missing else "")
                + (
                    f"\n    {'unexpected' if form == 'exactly' else 'present'}: {sorted(extra)}"
                    if extra
                    else ""
                )
            )
    return problems


def _combat_check(wanted: Any, actual: Combat | None, at: str) -> list[str]:
    if wanted is None or actual is None:
        if wanted is None and actual is None:
            return []
        return [differs("combat", wanted, actual)]
    wanted = _keys(wanted, {"region", "attacker", "origin", "round"}, f"{at}: combat")
    got = {
        "region": actual.region,
        "attacker": actual.attacker.value,
        "origin": actual.origin,
        "round": actual.round,
    }
    bad = {k: v for k, v in wanted.items() if got[k] != v}
    return [differs("combat", bad, got)] if bad else []


def _event_type(kind: Any, at: str) -> type[ev.Event]:
    if kind not in ev.EVENT_TYPES:
        raise ScenarioError(f"{at}: {kind!r} is not an event type; one of {sorted(ev.EVENT_TYPES)}")
    return ev.EVENT_TYPES[kind]


def _events_check(wanted: Any, events: list[ev.Event], at: str) -> list[str]:
    """The wanted events must appear in this order (others may come between them).

    An item is a type name or ``{type: {field: value}}``; lists of names compare as sets.
    """
    if not isinstance(wanted, list):
        raise ScenarioError(f"{at}: 'events' must be a list")
    position = 0
    for item in wanted:
        kind, fields_ = (item, {}) if isinstance(item, str) else next(iter(_one(item, at).items()))
        _event_type(kind, at)
        for i in range(position, len(events)):
            data = {k: _plain(v, sort=True) for k, v in ev.to_dict(events[i]).items()}
            if data["t"] == kind and all(
                k in data and data[k] == _plain(v, sort=True) for k, v in (fields_ or {}).items()
            ):
                position = i + 1
                break
        else:
            return [f"events: no {_flow(item)} after the first {position} event(s) of this step"]
    return []


def _one(item: Any, at: str) -> dict[str, Any]:
    if not isinstance(item, dict) or len(item) != 1:
        raise ScenarioError(f"{at}: an event is a type name or {{type: {{fields}}}}, not {item!r}")
    return item


def _legal_check(wanted: Any, state: GameState, at: str) -> list[str]:
    """``legal: {side: {command type: values}}``: the set of legal values of a one-field command
    (``retreat: [17, 24]``), or true/false for a command without fields (``pass: false``);
    ``commit`` takes ``{maneuvers: [...], max_energy: n}``."""
    problems = []
    for side, spec in _per_side(wanted, at).items():
        actions = [a.command for a in legal_actions(state, side)]
        for kind, value in _keys(spec, set(COMMAND_TYPES), f"{at}: legal").items():
            mine = [c for c in actions if c.type == kind]
            label = f"legal.{side.value}.{kind}"
            if isinstance(value, bool):
                if bool(mine) != value:
                    problems.append(differs(label, value, bool(mine)))
            elif kind == "commit":
                spec_ = _keys(value, {"maneuvers", "max_energy"}, label)
                got = {
                    "maneuvers": sorted({c.maneuver.value for c in mine}),
                    "max_energy": max((c.energy for c in mine), default=None),
                }
                bad = {k: (v, got[k]) for k, v in spec_.items() if _plain(v, True) != got[k]}
                problems += [differs(f"{label}.{k}", e, a) for k, (e, a) in bad.items()]
            else:
                own = _own_fields(kind)[0]
                got_values = sorted({getattr(c, own) for c in mine}, key=repr)
                if sorted(set(value), key=repr) != got_values:
                    problems.append(differs(label, sorted(set(value), key=repr), got_values))
    return problems


# --- the command line ---------------------------------------------------------------------------


def main(paths: list[str], out: TextIO = sys.stdout) -> int:
    """``olympus scenario FILE...``: run every scenario, stop at the first failure (exit 1)."""
    try:
        scenarios = [s for path in expand(paths) for s in load(path)]
        for scenario in scenarios:
            run(scenario)
            print(f"ok   {scenario.id}", file=out)
    except (Mismatch, ScenarioError) as failure:
        print(str(failure), file=out)
        return 1
    print(f"{len(scenarios)} scenario(s) passed", file=out)
    return 0
