"""The compiled core (olympus.native) and the interpreted source are one implementation: the
same games give the same lists of legal actions, the same events and the same states, and the
service's tests pass on both.

``make test`` builds the compiled rules, store and service first, so this suite runs compiled
wherever a C compiler is; these tests also run the interpreted source (``OLYMPUS_PURE_PYTHON=1``)
in a child process: the same seeded games, the rules' scenarios, and a game played through a
server.
"""

from __future__ import annotations

import gc
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import olympus.rules
import olympus.store
from olympus import native
from olympus.bots import play_random_game
from olympus.rules import GameState, Options, Phase, legal, legal_actions
from olympus.rules.movement import MovePlan, Movers, Refusal
from olympus.rules.powers import Action
from olympus.server import app, room

ROOT = Path(__file__).resolve().parent.parent
FINGERPRINT = Path(__file__).with_name("native_fingerprint.py")
# CI runs ``make test``, which builds the compiled core first: there it must be what runs.
IN_CI = os.environ.get("CI", "").lower() == "true"


def _run(pure: bool, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    env.pop(native.PURE_PYTHON, None)
    if pure:
        env[native.PURE_PYTHON] = "1"
    return subprocess.run(
        [sys.executable, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=900
    )


def _fingerprint(pure: bool, games: int) -> dict[str, object]:
    child = _run(pure, str(FINGERPRINT), str(games))
    assert child.returncode == 0, child.stdout + child.stderr
    result: dict[str, object] = json.loads(child.stdout)
    return result


def test_the_compiled_core_runs_where_a_compiler_is() -> None:
    """``make test`` built it, so with a C compiler this process runs the native modules (the
    rules; the store's and the service's command path); an edit of the source turns the build
    off until the next one (the digest). Under CI (``CI=true``) the compiled build must be the
    one that runs, whatever the box: the comparisons below would otherwise set the interpreted
    source against itself and pass unseen."""
    compiler = bool(shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc"))
    expected = IN_CI or (compiler and not native.turned_off())
    assert (
        olympus.rules.COMPILED is olympus.store.COMPILED is olympus.server.COMPILED is expected
    ), f"CI={os.environ.get('CI')}, interpreted because: {native.interpreted_because()}"
    suffix = ".py" if not expected else ".so"
    assert olympus.rules.legal.__file__.endswith(suffix)
    assert olympus.rules.powers.zeus.__file__.endswith(suffix)
    assert olympus.store.event_store.__file__.endswith(suffix)
    assert room.__file__.endswith(suffix)
    assert app.__file__.endswith(".py")  # not on the command path: interpreted, from the copy
    assert app.WEB_CLIENT == ROOT / "web_client"


def test_the_service_says_why_it_runs_interpreted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``interpreted_because`` (``olympus serve`` logs it at start): turned off, no build, a
    build of other source (an edited module); None for a build of this source."""
    monkeypatch.setattr(native, "BUILD", tmp_path)
    monkeypatch.setenv(native.PURE_PYTHON, "1")
    assert native.interpreted_because() == "OLYMPUS_PURE_PYTHON=1 asks for it"
    monkeypatch.delenv(native.PURE_PYTHON)
    assert "there is no compiled build" in str(native.interpreted_because())
    native.CORE.digest_file.parent.mkdir(parents=True)
    native.CORE.digest_file.write_text("0" * 64)
    assert "out of date with the source" in str(native.interpreted_because())
    native.CORE.digest_file.write_text(native.digest(native.CORE))
    assert native.interpreted_because() is None


def test_the_listings_objects_are_made_outside_the_collector() -> None:
    """Compiled, the objects a listing makes per candidate move and per group are not tracked
    by the cyclic garbage collector (``mypyc_attr(acyclic=True)``); interpreted, the decorator
    changes nothing. Each is made here as ``legal_actions`` makes it (a group's powers are
    made once per group of units and kept: ``group_powers``). (The free list of one,
    ``free_list_len=1``, cannot be told from outside: Python's allocator also hands out the
    block freed last.)"""
    turns: list[GameState] = []

    def keep(before: GameState, *_: object) -> None:
        if not before.pending and before.phase is Phase.TURN:
            turns.append(before)

    play_random_game(random.Random(5), Options(), 200, observe=keep)
    state = turns[-1]
    side = state.turn
    plain = {"type": "move", "reveal": [], "use_power": False}
    listed = next(a for a in legal_actions(state, side) if plain.items() <= a.wire.items())
    units, to = tuple(listed.wire["units"]), listed.wire["to"]
    movers = Movers.of(state, side, units)
    move = movers.move(to, listed.wire["fly"])
    plan = movers.verdict(move)
    refusal = movers.verdict(movers.move(movers.origin))  # not a move: the same region
    assert isinstance(plan, MovePlan) and isinstance(refusal, Refusal)
    group = legal._Group(state, side, units, listed.wire["fly"])
    made = [movers, movers.honor, movers.powers, group, move, plan, refusal, listed]
    made.append(Action(side, units, "move"))
    compiled = olympus.rules.COMPILED
    assert [gc.is_tracked(o) for o in made] == [not compiled] * len(made)


def test_both_builds_play_the_same_games() -> None:
    """Every position of 40 seeded random games (every variant): each seat's legal actions
    (form, Honor, Energy, order), every event and every state, compared by digest; under CI,
    the first of the two is the compiled build."""
    compiled = _fingerprint(pure=False, games=40)
    interpreted = _fingerprint(pure=True, games=40)
    assert interpreted["compiled"] is False
    assert compiled["compiled"] is olympus.rules.COMPILED
    assert compiled["compiled"] or not IN_CI, native.interpreted_because()
    assert compiled["positions"] == interpreted["positions"] > 2_000
    assert compiled["actions"] == interpreted["actions"] > 40_000
    assert compiled["digest"] == interpreted["digest"]


def test_the_fingerprint_tells_games_apart() -> None:
    """The comparison above can fail: other games give another digest."""
    assert _fingerprint(pure=True, games=3)["digest"] != _fingerprint(pure=True, games=4)["digest"]


def test_the_interpreted_source_passes_the_rule_scenarios() -> None:
    """The scenarios and the move-generation checks, run on the interpreted source."""
    _pure_pytest("tests/test_scenarios.py", "tests/test_legal.py")


def test_the_interpreted_source_serves_games() -> None:
    """Games played through a server (real websockets, the session's Redis), the worked
    session of docs/protocol.md and refused input, on the interpreted store and service."""
    _pure_pytest(
        "tests/service/test_service_play.py",
        "tests/service/test_protocol_doc.py",
        "tests/service/test_service_bad_input.py",
    )


def _pure_pytest(*files: str) -> None:
    """The tests in ``files`` pass in a child process on the interpreted source."""
    child = _run(True, "-m", "pytest", "-p", "no:cacheprovider", *files)
    assert child.returncode == 0, child.stdout[-3000:] + child.stderr[-3000:]
    assert " passed" in child.stdout and " failed" not in child.stdout
