"""The compiled core's loader (olympus.native) and its build (olympus.build_native): which
build the packages run, and when the build is made again.

The loader decides at import with the standard library alone, from the build's digest (what
the build is valid for: the interpreter, the modules compiled, their source); the build
decides from the digest and its recipe (how it is compiled: flags, profile, training) whether
to compile again. ``tests/test_native.py`` checks that the build that runs plays as the source.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

import olympus.rules
import olympus.server
import olympus.store
from olympus import build_native, native

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def build_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty ``BUILD`` for the loader and the build, with the interpreted source allowed."""
    monkeypatch.setattr(native, "BUILD", tmp_path)
    monkeypatch.delenv(native.PURE_PYTHON, raising=False)
    return tmp_path


def _made_current(recipe: str) -> None:
    """A build of the source as it is, made by ``recipe`` (nothing compiled: its files alone)."""
    native.CORE.root.mkdir(parents=True, exist_ok=True)
    native.CORE.digest_file.write_text(native.digest(native.CORE))
    (native.CORE.root / "RECIPE").write_text(recipe)


def test_the_loader_imports_nothing_of_the_project() -> None:
    """``olympus.native`` is the ground floor: importing it (and the top package, which
    installs its finder) loads no other module of ``olympus``."""
    code = "import sys, olympus.native; print(sorted(m for m in sys.modules if 'olympus' in m))"
    child = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert child.stdout.split("\n")[0] == str(["olympus", "olympus.native"])


def test_each_package_says_where_its_modules_came_from() -> None:
    """``COMPILED`` of ``rules``, ``store`` and ``server`` is whether the finder put their
    build ahead of their source, and their modules then come from it."""
    for package in (olympus.rules, olympus.store, olympus.server):
        first = Path(package.__path__[0])
        assert package.COMPILED is first.is_relative_to(native.BUILD)
        assert Path(package.__path__[-1]) == native.PACKAGE / package.__name__.split(".")[1]
    assert Path(olympus.rules.legal.__file__).is_relative_to(Path(olympus.rules.__path__[0]))


def test_a_current_build_goes_first_on_the_packages_path(
    build_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``activate``: the build's copy of a package ahead of its source, its library on
    ``sys.path``, where the digest matches; nothing for a package no part compiles, nor for
    an out-of-date build."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    path = [str(native.PACKAGE / "rules")]
    assert not native.activate(path, "rules") and not native.runs_compiled(path)
    _made_current("any")
    assert not native.activate([str(native.PACKAGE / "bot")], "bot")
    assert native.activate(path, "rules") and native.runs_compiled(path)
    copy = native.CORE.tree.source / "olympus" / "rules"
    assert path == [str(copy), str(native.PACKAGE / "rules")]
    assert str(native.CORE.tree.library) in sys.path
    native.CORE.digest_file.write_text("0" * 64)
    assert not native.activate([str(native.PACKAGE / "store")], "store")


def test_a_build_under_way_is_named_and_waited_for(
    build_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """While a build holds its lock, the service says that one is being built for its next
    start, and a build in the background is not started twice."""
    assert not native.building()
    with native.build_lock().open("ab") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        assert native.building()
        reason = str(native.interpreted_because())
        assert "there is no compiled build; one is being built" in reason
        assert str(native.build_log()) in reason
        assert build_native.build_in_background() == 0
        if build_native._compiler_here():
            assert "a build is under way" in capsys.readouterr().out
    assert not native.building()


def test_a_quick_build_takes_any_build_of_the_source(
    build_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``build --quick`` (``make test``) compiles nothing where a build of this source is
    there, whatever its recipe; ``build`` (``make native``) wants its own recipe; the loader
    runs either."""
    guided = build_native._profile_guided()
    _made_current("made otherwise\n")
    assert native.interpreted_because() is None
    assert build_native._made(native.CORE, quick=True)
    assert not build_native._made(native.CORE, quick=False)
    compiler = build_native._compiler_here()  # (without one, nothing is ever compiled)
    assert build_native.build(quick=True) == 0
    assert ("the build is current" in capsys.readouterr().out) is compiler
    _made_current(build_native.recipe(guided))
    assert build_native._made(native.CORE, quick=False)
    assert build_native.build_in_background() == 0
    assert ("the build is current" in capsys.readouterr().out) is compiler


def test_a_build_is_made_again_when_its_compiler_flags_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """GCC and Clang get ``C_FLAGS`` (inlining within the library, the C API called without
    PLT stubs), another compiler none, and GCC's build is profile-guided: the recipe says so,
    so a build made otherwise is made again. What the build is valid for (the loader's
    digest) does not change: it runs until then."""
    recipes, digests = {}, set()
    for compiler in ("gcc", "x86_64-linux-gnu-gcc -pthread", "clang", "icx"):
        monkeypatch.setenv("CC", compiler)
        native.digest.cache_clear()
        digests.add(native.digest(native.CORE))
        recipes[compiler] = build_native.recipe(build_native._profile_guided())
        flags = [] if compiler == "icx" else list(build_native.C_FLAGS)
        assert build_native._c_flags() == flags
        assert build_native._profile_guided() is ("gcc" in compiler)
    native.digest.cache_clear()
    assert len(digests) == 1
    assert recipes["gcc"] == recipes["x86_64-linux-gnu-gcc -pthread"]
    assert len({recipes["gcc"], recipes["clang"], recipes["icx"]}) == 3


def test_a_profile_guided_build_is_made_again_when_its_training_changes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The training (``build_native.py``) is part of a profile-guided build's recipe: edited,
    the build is made again. A build without a profile does not depend on it."""
    edited = tmp_path / "build_native.py"
    edited.write_bytes(Path(build_native.__file__).read_bytes() + b"\n# trained otherwise\n")
    for guided in (True, False):
        before = build_native.recipe(guided)
        monkeypatch.setattr(build_native, "__file__", str(edited))
        assert (build_native.recipe(guided) != before) is guided
        monkeypatch.undo()


def test_the_training_games_run_on_the_compiled_core_only() -> None:
    """The profile-guided build's training plays its games through the listing, the
    observation and the packing, then through a room on an embedded Redis (here one game of
    each, on this process's build: the room's commands played, not skipped for want of a
    Redis); run interpreted it refuses, since it would leave no profile and the build would
    go unguided unseen."""
    if olympus.rules.COMPILED:
        assert build_native.train(games=1, rooms=1) > 0
    env = {**os.environ, native.PURE_PYTHON: "1"}
    child = subprocess.run(
        [sys.executable, "-m", "olympus.build_native", "train"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == 1
    assert "the compiled core did not load" in child.stderr


def test_the_build_commands_are_documented() -> None:
    """``python -m olympus.build_native`` knows the commands its docstring and the Makefile
    use."""
    child = subprocess.run(
        [sys.executable, "-m", "olympus.build_native", "build", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--quick" in child.stdout and "--background" in child.stdout
    makefile = (ROOT / "Makefile").read_text()
    for command in ("build --quick", "build --background", "olympus.build_native build\n"):
        assert command in makefile
