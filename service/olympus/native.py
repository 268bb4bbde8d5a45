"""Which code the packages run: their compiled build, or their source interpreted.

One implementation, two ways to run it. mypyc compiles the rules', the store's and the
service's own source to native extension modules (``olympus.build_native``: ``make native``)
into ``service/build/native/core/`` (ignored by git): a copy of the package's source, the
native modules beside it, and a digest of the source it was compiled from. This module
decides, at import and with nothing but the standard library, which of the two runs: the top
package ``olympus`` calls ``install_finder``, so that ``olympus.rules``, ``olympus.store`` and
``olympus.server`` get the compiled copy ahead of their source on their ``__path__`` before
their ``__init__`` runs, when the build's digest matches the source beside them; an edited
module never runs stale native code. They run the source interpreted otherwise: without a C
compiler, before the first build, or with ``OLYMPUS_PURE_PYTHON=1``. Both give the same
results (tests/test_native.py plays the same games both ways, and runs a server both ways).

What is compiled, as one build (``CORE``):

- every module of ``olympus.rules`` (the pure core: ``legal_actions``, ``decide``,
  ``evolve``), but for the few whose classes mypyc cannot make native;
- the modules of the store and the service that every command runs through
  (``SERVICE_MODULES``: deciding, appending, folding, the frames in and out). The service's
  other modules (HTTP, lobby, start-up) run interpreted from the same copy: they are not on
  the command path, and the lobby's pydantic models stay Python.

One build rather than one per package: code compiled apart from a class reads its fields and
calls its methods by name, as Python does, where code compiled with it reads them at an offset
and calls them in C; every command's path reads the rules' states, events and listed actions
thousands of times (docs/performance.md).

Why a separate directory rather than extension modules beside the source: the source stays
importable as it is (a tree without any build works), and which build runs is one decision,
made here, at import.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import sys
from collections.abc import MutableSequence, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path
from types import ModuleType

PACKAGE = Path(__file__).parent
BUILD = PACKAGE.parent / "build" / "native"
PURE_PYTHON = "OLYMPUS_PURE_PYTHON"
TOP = __name__.rpartition(".")[0]  # "olympus"


@dataclass(frozen=True)
class Tree:
    """Where a build lies, under ``root``: the copy of the source it compiles (``source``,
    whose packages get the native modules beside their ``.py``), mypyc's shared library of
    the build (``library``, a top-level module), and the digest of the source it was compiled
    from (``digest_file``), written last."""

    root: Path

    @property
    def source(self) -> Path:
        return self.root / "src"

    @property
    def library(self) -> Path:
        return self.root / "lib"

    @property
    def digest_file(self) -> Path:
        return self.root / "DIGEST"


@dataclass(frozen=True)
class Part:
    """One compiled build: the packages it serves (its digest covers their source) and the
    modules it compiles (paths under ``olympus/``). It lies in ``BUILD/<name>``."""

    name: str
    packages: tuple[str, ...]
    modules: tuple[str, ...]

    @property
    def tree(self) -> Tree:
        return Tree(BUILD / self.name)

    @property
    def root(self) -> Path:
        return self.tree.root

    @property
    def digest_file(self) -> Path:
        return self.tree.digest_file


# Not compiled in the rules: the package initialisers, and the module whose classes mypyc
# cannot make native (the commands, pydantic models).
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
    "store/records.py",
    "store/redis_calls.py",
    "store/redis_hints.py",
    "store/resp_connection.py",
    "server/clocks.py",
    "server/connection.py",
    "server/fanout.py",
    "server/feed.py",
    "server/frames.py",
    "server/metrics.py",
    "server/protocol.py",
    "server/ratelimit.py",
    "server/room.py",
    "server/room_feed.py",
    "server/room_log.py",
    "server/room_reads.py",
    "server/snapshots.py",
    "server/ws_protocol.py",
)
CORE = Part(
    "core",
    packages=("rules", "store", "server"),
    modules=RULES_MODULES + SERVICE_MODULES,
)
PARTS = (CORE,)


def _part_of(package: str) -> Part | None:
    return next((part for part in PARTS if package in part.packages), None)


def _sources(part: Part) -> list[Path]:
    return sorted(path for name in part.packages for path in (PACKAGE / name).rglob("*.py"))


@cache
def digest(part: Part) -> str:
    """What a build of ``part`` is valid for: the interpreter it was built for, the modules it
    compiles and the source of its packages. (How it was compiled changes its speed, never its
    results: that is the builder's to judge, ``olympus.build_native``.)"""
    h = hashlib.sha256(sys.implementation.cache_tag.encode() + b"\0")
    h.update("\0".join(part.modules).encode() + b"\0\0")
    for path in _sources(part):
        h.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def current(part: Part) -> bool:
    """Whether ``part`` has a build of the source as it is now."""
    return part.digest_file.is_file() and part.digest_file.read_text() == digest(part)


def build_lock() -> Path:
    """The file whose lock (``flock``) the one build under way in ``BUILD`` holds."""
    return BUILD / "build.lock"


def build_log() -> Path:
    """What the last build started in the background printed."""
    return BUILD / "build.log"


def building() -> bool:
    """Whether a build is under way (its lock is held)."""
    try:
        with build_lock().open("rb") as lock:
            fcntl.flock(lock, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:  # no lock file: no build was ever started here
        return False
    return False


def turned_off() -> bool:
    """Whether ``OLYMPUS_PURE_PYTHON=1`` asks for the source to run interpreted."""
    return os.environ.get(PURE_PYTHON) == "1"


def interpreted_because(part: Part = CORE) -> str | None:
    """Why the packages of ``part`` run their source interpreted rather than its build, in a
    sentence; None when they run compiled (the finder asks it). An edited module makes the
    build out of date, and the service then runs about twice the CPU per command without
    failing: its start-up log and ``olympus_compiled`` say so (docs/operations.md)."""
    if turned_off():
        return f"{PURE_PYTHON}=1 asks for it"
    if current(part):
        return None
    if not part.digest_file.is_file():
        reason = "there is no compiled build"
    else:
        reason = "the compiled build is out of date with the source"
    if building():
        return f"{reason}; one is being built ({build_log()}), for the next start"
    if not part.digest_file.is_file():
        return f"{reason} (`make native` makes one where a C compiler is)"
    return f"{reason}: `make native` makes it again"


def activate(package_path: MutableSequence[str], package: str) -> bool:
    """Put the compiled copy of ``package`` (``rules``, ``store``, ``server``) ahead of its
    source on ``package_path``, its ``__path__`` to be, if its part's build matches the source
    and is not turned off. Returns whether it did. Its subpackages and interpreted modules
    then load from the copy too: the same source, as the digest says."""
    part = _part_of(package)
    if part is None or interpreted_because(part) is not None:
        return False
    if str(part.tree.library) not in sys.path:
        sys.path.append(str(part.tree.library))
    package_path.insert(0, str(part.tree.source / TOP / package))
    return True


def runs_compiled(package_path: Sequence[str]) -> bool:
    """Whether the package whose ``__path__`` is ``package_path`` takes its modules from a
    compiled build (``activate`` put it first): what each package's ``COMPILED`` says."""
    return bool(package_path) and Path(package_path[0]).is_relative_to(BUILD)


class _CompiledFirst(MetaPathFinder):
    """Finds ``olympus.rules``, ``olympus.store`` and ``olympus.server`` as Python's own path
    finder does, then ``activate``s each before its ``__init__`` runs."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        parent, _, package = fullname.rpartition(".")
        if parent != TOP or _part_of(package) is None:
            return None
        spec = PathFinder.find_spec(fullname, path, target)
        if spec is not None and spec.submodule_search_locations is not None:
            activate(spec.submodule_search_locations, package)
        return spec


def install_finder() -> None:
    """Have the packages of every part found with their build first, where it is current: the
    top package calls it before any of them is imported. Once per process."""
    if not any(isinstance(finder, _CompiledFirst) for finder in sys.meta_path):
        sys.meta_path.insert(0, _CompiledFirst())
