"""The compiled core: mypyc compiles the rules', the store's and the service's own source to
native extension modules.

One implementation, two ways to run it. ``make`` (``python -m olympus.native build``) copies
the package's source into ``service/build/native/core/`` (ignored by git), compiles it there
with mypyc and records a digest of the source it compiled. The packages (``rules``, ``store``,
``server``) then run the native modules when that digest matches the source beside them, so an
edited module never runs stale native code, and run the interpreted source otherwise: without
a C compiler, before the first build, or with ``OLYMPUS_PURE_PYTHON=1``. Both give the same
results (tests/test_native.py plays the same games both ways, and runs a server both ways).

What is compiled, as one build (``CORE``):

- every module of ``olympus.rules`` (the pure core: ``legal_actions``, ``decide``,
  ``evolve``), but for the few whose classes mypyc cannot make native;
- the modules of the store and the service that every command runs through
  (``SERVICE_MODULES``: deciding, appending, folding, the frames in and out). The service's
  other modules (HTTP, lobby, start-up) run interpreted from the same copy: they are not on
  the command path, and the lobby's pydantic models stay Python.

One build rather than two (until 2026-11-27 the service's modules were built apart, so that an
edit of the service did not compile the rules again): code compiled apart from a class reads
its fields and calls its methods by name, as Python does, where code compiled with it reads
them at an offset and calls them in C. Every command's path reads the rules' states, events
and listed actions thousands of times (docs/performance.md, eleventh session).

Why a separate directory rather than extension modules beside the source: the source stays
importable as it is (a tree without any build works), and which build runs is one decision,
made here (``activate``), at import.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import sysconfig
from dataclasses import dataclass
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).parent
BUILD = PACKAGE.parent / "build" / "native"
PURE_PYTHON = "OLYMPUS_PURE_PYTHON"

# What the C compiler is told beyond Python's own flags and mypyc's -O3, where it is GCC or
# Clang. Python's flags compile the library as position-independent code in which every global
# function may be replaced at load time by another library's of the same name (ELF's
# interposition): so the compiler may inline none of mypyc's ~1,900 functions into another,
# and each call into Python's own C API goes through a PLT stub. No library replaces ours;
# with these two the compiler inlines within the library and calls the API through its
# address at once. `submit` over the command path bench ran 3.9 % fewer instructions, listing
# 6.5 % fewer (docs/performance.md, nineteenth session).
C_FLAGS = ("-fno-semantic-interposition", "-fno-plt")


@dataclass(frozen=True)
class Part:
    """One compiled build: the packages it serves (its digest covers their source) and the
    modules it compiles (paths under ``olympus/``)."""

    name: str
    packages: tuple[str, ...]
    modules: tuple[str, ...]

    @property
    def root(self) -> Path:
        return BUILD / self.name

    @property
    def source(self) -> Path:  # the copy that is compiled; its packages get the modules
        return self.root / "src"

    @property
    def library(self) -> Path:  # mypyc's shared library of the part, a top-level module
        return self.root / "lib"

    @property
    def digest_file(self) -> Path:
        return self.root / "DIGEST"


# Not compiled in the rules: the package initialisers (they choose the build), and the module
# whose classes mypyc cannot make native (the commands, pydantic models).
INTERPRETED = frozenset({"__init__.py", "commands.py"})
RULES_MODULES = tuple(
    str(path.relative_to(PACKAGE))
    for path in sorted((PACKAGE / "rules").rglob("*.py"))
    if path.name not in INTERPRETED
)
# What a command runs through, from its frame in to the frames out (docs/performance.md).
SERVICE_MODULES = (
    "store/batching.py",
    "store/event_store.py",
    "store/resp_connection.py",
    "server/clocks.py",
    "server/connection.py",
    "server/fanout.py",
    "server/feed.py",
    "server/metrics.py",
    "server/protocol.py",
    "server/ratelimit.py",
    "server/room.py",
    "server/snapshots.py",
    "server/ws_protocol.py",
)
CORE = Part(
    "core",
    packages=("rules", "store", "server"),
    modules=RULES_MODULES + SERVICE_MODULES,
)
PARTS = (CORE,)


def _part_of(package: str) -> Part:
    return next(part for part in PARTS if package in part.packages)


def _sources(part: Part) -> list[Path]:
    return sorted(path for name in part.packages for path in (PACKAGE / name).rglob("*.py"))


@cache
def digest(part: Part) -> str:
    """What a build is valid for: the source it covers and the interpreter it was built for."""
    h = hashlib.sha256(sys.implementation.cache_tag.encode())
    h.update(" ".join(_c_flags()).encode())  # a build made otherwise is made again
    for path in _sources(part):
        h.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _current(part: Part) -> bool:
    return part.digest_file.is_file() and part.digest_file.read_text() == digest(part)


def activate(package_path: list[str], package: str) -> bool:
    """Put the compiled copy of ``package`` (``rules``, ``store``, ``server``) ahead of its
    source on its ``__path__``, if its part's build matches the source and is not turned off;
    called by the package's ``__init__`` before it imports its modules. Returns whether it
    did. Its subpackages and interpreted modules then load from the copy too: the same
    source, as the digest says."""
    part = _part_of(package)
    if os.environ.get(PURE_PYTHON) == "1" or not _current(part):
        return False
    if str(part.library) not in sys.path:
        sys.path.append(str(part.library))
    package_path.insert(0, str(part.source / "olympus" / package))
    return True


def build() -> int:
    """Compile each part unless its build is current. Exit status: 0 when built, current, or
    impossible here (no C compiler: everything runs interpreted, with a note); 1 when a
    compiler is there and a build fails (a module mypyc rejects must not go unnoticed)."""
    if not (shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")):
        print("olympus.native: no C compiler here: the source runs interpreted (same results)")
        return 0
    for stale in BUILD.glob("*"):  # a build of an earlier layout (until 2026-11-27: two parts)
        if stale.is_dir() and stale.name not in {part.name for part in PARTS}:
            shutil.rmtree(stale)
    for part in PARTS:
        if _current(part):
            print(f"olympus.native: the {part.name} build is current")
        elif _build(part) != 0:
            return 1
    return 0


def _build(part: Part) -> int:
    shutil.rmtree(part.root, ignore_errors=True)
    # The whole package, so that mypy sees every module the compiled ones import.
    shutil.copytree(
        PACKAGE, part.source / "olympus", ignore=shutil.ignore_patterns("__pycache__")
    )
    expected = digest(part)  # of the source copied (it cannot change under us unseen: below)
    status = _compile(part.source, [f"olympus/{module}" for module in part.modules])
    if status != 0:
        shutil.rmtree(part.root, ignore_errors=True)
        print(f"olympus.native: mypyc failed on the {part.name}: see above", file=sys.stderr)
        return 1
    part.library.mkdir()
    for library in part.source.glob("*__mypyc.*"):
        library.rename(part.library / library.name)
    # What compiling left beside the modules (mypy's cache, the C files and objects): not used
    # at run time, and ~35 MB a part.
    for by_product in (".mypy_cache", "build"):
        shutil.rmtree(part.source / by_product, ignore_errors=True)
    if digest.__wrapped__(part) != expected:  # the source was edited while it compiled
        shutil.rmtree(part.root, ignore_errors=True)
        print("olympus.native: the source changed during the build: run it again", file=sys.stderr)
        return 1
    part.digest_file.write_text(expected)
    print(f"olympus.native: compiled {len(part.modules)} modules of the {part.name}")
    return 0


def _c_flags() -> list[str]:
    """``C_FLAGS`` for GCC and Clang (both take them), nothing for another compiler."""
    command = os.environ.get("CC") or sysconfig.get_config_var("CC") or ""  # as setuptools
    compiler = os.path.basename(str(command).split(" ")[0])
    return list(C_FLAGS) if "gcc" in compiler or "clang" in compiler else []


def _compile(source: Path, modules: list[str]) -> int:
    """mypyc on ``modules`` (paths under ``source``), built in place there, two C files at a
    time. Run in ``source`` so that the modules keep their names (``olympus.rules.…``)."""
    from mypyc.build import mypycify
    from setuptools import setup

    config = Path(__file__).parents[2] / "pyproject.toml"
    options = ["--config-file", str(config)] if config.is_file() else ["--strict"]
    here = Path.cwd()
    os.chdir(source)
    try:
        extensions = mypycify([*options, *modules], opt_level="3")
        for extension in extensions:
            extension.extra_compile_args += _c_flags()
        setup(
            name="olympus-native",
            ext_modules=extensions,
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
