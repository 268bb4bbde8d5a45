"""The compiled rules core: mypyc compiles the rules' own source to native extension modules.

One implementation of the rules, two ways to run it. ``make`` (``python -m olympus.native
build``) copies the source of ``olympus.rules`` into ``service/build/native/`` (ignored by git),
compiles it there with mypyc and records a digest of the source it compiled. ``olympus.rules``
then runs the native modules when that digest matches the source beside them, so an edited
rule never runs stale native code, and runs the interpreted source otherwise: without a C
compiler, before the first build, or with ``OLYMPUS_PURE_PYTHON=1``. Both give the same
results (tests/test_native.py plays the same games both ways).

Why a separate directory rather than extension modules beside the source: the source stays
importable as it is (a tree without any build works), and which build runs is one decision,
made here (``activate``), at import.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from functools import cache
from pathlib import Path

RULES = Path(__file__).parent / "rules"
BUILD = Path(__file__).parent.parent / "build" / "native"
_SOURCE = BUILD / "src"  # the copy that is compiled; its packages get the extension modules
_LIBRARY = BUILD / "lib"  # mypyc's shared library of the group, a top-level module
_DIGEST = BUILD / "DIGEST"
# Not compiled: the package initialisers (they choose the build), and the modules whose classes
# mypyc cannot make native (pydantic commands; events made dataclasses by a decorator).
INTERPRETED = frozenset({"__init__.py", "commands.py", "events.py"})
PURE_PYTHON = "OLYMPUS_PURE_PYTHON"


def _sources() -> list[Path]:
    return sorted(RULES.rglob("*.py"))


@cache
def digest() -> str:
    """What a build is valid for: the rules' source and the interpreter it was built for."""
    h = hashlib.sha256(sys.implementation.cache_tag.encode())
    for path in _sources():
        h.update(str(path.relative_to(RULES)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def activate(package_path: list[str], package: str) -> bool:
    """Put the compiled copy of ``package`` (``rules``) ahead of its source on its
    ``__path__``, if the build matches the source and is not turned off; called by the
    package's ``__init__`` before it imports its modules. Returns whether it did. Its
    subpackages and interpreted modules then load from the copy too: the same source, as the
    digest says."""
    if os.environ.get(PURE_PYTHON) == "1" or not _DIGEST.is_file():
        return False
    if _DIGEST.read_text() != digest():
        return False
    if str(_LIBRARY) not in sys.path:
        sys.path.append(str(_LIBRARY))
    package_path.insert(0, str(_SOURCE / "olympus" / package))
    return True


def build() -> int:
    """Compile the rules unless the build is current. Exit status: 0 when built, current, or
    impossible here (no C compiler: the rules run interpreted, with a note); 1 when a compiler
    is there and the build fails (a rule mypyc rejects must not go unnoticed)."""
    if _DIGEST.is_file() and _DIGEST.read_text() == digest():
        print("olympus.native: the compiled rules are current")
        return 0
    if not (shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")):
        print("olympus.native: no C compiler here: the rules run interpreted (same results)")
        return 0
    shutil.rmtree(BUILD, ignore_errors=True)
    target = _SOURCE / "olympus" / "rules"
    shutil.copytree(RULES, target, ignore=shutil.ignore_patterns("__pycache__"))
    (_SOURCE / "olympus" / "__init__.py").write_text("")
    shutil.copy(__file__, _SOURCE / "olympus" / "native.py")  # imported by the packages' init
    expected = digest()  # of the source copied (it cannot change under us unseen: checked below)
    modules = [
        str(path.relative_to(_SOURCE))
        for path in sorted(target.rglob("*.py"))
        if path.name not in INTERPRETED
    ]
    status = _compile(modules)
    if status != 0:
        shutil.rmtree(BUILD, ignore_errors=True)
        print("olympus.native: mypyc failed: see above", file=sys.stderr)
        return 1
    _LIBRARY.mkdir()
    for library in _SOURCE.glob("*__mypyc.*"):
        library.rename(_LIBRARY / library.name)
    if digest.__wrapped__() != expected:  # the source was edited while it compiled
        shutil.rmtree(BUILD, ignore_errors=True)
        print("olympus.native: the source changed during the build: run it again", file=sys.stderr)
        return 1
    _DIGEST.write_text(expected)
    print(f"olympus.native: compiled {len(modules)} modules of the rules")
    return 0


def _compile(modules: list[str]) -> int:
    """mypyc on ``modules`` (paths under ``_SOURCE``), built in place there, two C files at a
    time. Run in ``_SOURCE`` so that the modules keep their names (``olympus.rules.…``)."""
    from mypyc.build import mypycify
    from setuptools import setup

    config = Path(__file__).parents[2] / "pyproject.toml"
    options = ["--config-file", str(config)] if config.is_file() else ["--strict"]
    here = Path.cwd()
    os.chdir(_SOURCE)
    try:
        setup(
            name="olympus-rules-native",
            ext_modules=mypycify([*options, *modules], opt_level="3"),
            script_args=["-q", "build_ext", "--inplace", "--parallel", "2"],
        )
    except (SystemExit, Exception) as error:  # setuptools reports a failed compile by exiting
        print(f"olympus.native: {error}", file=sys.stderr)
        return 1
    finally:
        os.chdir(here)
    return 0


if __name__ == "__main__":
    if sys.argv[1:] != ["build"]:
        sys.exit("usage: python -m olympus.native build")
    sys.exit(build())
