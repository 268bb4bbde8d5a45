"""The compiled core: mypyc compiles the rules', the store's and the service's own source to
native extension modules.

One implementation, two ways to run it. ``make`` (``python -m olympus.native build``) copies
the package's source into ``service/build/native/core/`` (ignored by git), compiles it there
with mypyc (with GCC profile-guided: ``train``) and records a digest of the source it
compiled and of how. The packages (``rules``, ``store``, ``server``) then run the native
modules when that digest matches the source beside them, so an edited module never runs stale
native code, and run the interpreted source otherwise: without a C compiler, before the first
build, or with ``OLYMPUS_PURE_PYTHON=1``. Both give the same
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
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

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
# With GCC the build is profile-guided: compiled once with counters, run on the training games
# (``train``: seeded random games, each position listed and each event observed and packed as
# the service does it), then compiled again, the profile telling GCC which branches are taken
# and which calls are hot. Code the games do not reach is optimised as without a profile.
# ``legal_actions`` ran ~10 % faster than with the flags alone (docs/performance.md). Then
# ``TRAINING_ROOMS`` games through the service's own command path (``_train_command_path``):
# deciding, appending to Redis, folding, the frames of every audience; without it GCC laid
# out the room's, the store's and the frames' code untrained.
TRAINING_GAMES = 30
TRAINING_ROOMS = 20
TRAINING_SEED = 30  # of both: the same games, hence the same profile, from build to build


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
    """What a build is valid for: the source it covers, the interpreter it was built for and
    how it was compiled (``C_FLAGS``, profile-guided or not, and on what: this module's
    ``train``)."""
    h = hashlib.sha256(sys.implementation.cache_tag.encode())
    h.update(" ".join(_c_flags()).encode())  # a build made otherwise is made again
    if _profile_guided():
        h.update(b" profile-guided\0" + Path(__file__).read_bytes())
    for path in _sources(part):
        h.update(str(path.relative_to(PACKAGE)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _current(part: Part) -> bool:
    return part.digest_file.is_file() and part.digest_file.read_text() == digest(part)


def turned_off() -> bool:
    """Whether ``OLYMPUS_PURE_PYTHON=1`` asks for the source to run interpreted."""
    return os.environ.get(PURE_PYTHON) == "1"


def interpreted_because(part: Part = CORE) -> str | None:
    """Why the packages of ``part`` run their source interpreted rather than its build, in a
    sentence; None when they run compiled (``activate`` asks it). An edited module makes the
    build out of date, and the service then runs about twice the CPU per command without
    failing: its start-up log and ``olympus_compiled`` say so (docs/operations.md)."""
    if turned_off():
        return f"{PURE_PYTHON}=1 asks for it"
    if not part.digest_file.is_file():
        return "there is no compiled build (`make native` makes one where a C compiler is)"
    if not _current(part):
        return "the compiled build is out of date with the source: `make native` makes it again"
    return None


def activate(package_path: list[str], package: str) -> bool:
    """Put the compiled copy of ``package`` (``rules``, ``store``, ``server``) ahead of its
    source on its ``__path__``, if its part's build matches the source and is not turned off;
    called by the package's ``__init__`` before it imports its modules. Returns whether it
    did. Its subpackages and interpreted modules then load from the copy too: the same
    source, as the digest says."""
    part = _part_of(package)
    if interpreted_because(part) is not None:
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
    here = Path.cwd()
    os.chdir(part.source)  # so that the modules keep their names (``olympus.rules.…``)
    try:
        built = _compile(part, expected)
    finally:
        os.chdir(here)
    if not built:
        shutil.rmtree(part.root, ignore_errors=True)
        print(f"olympus.native: building the {part.name} failed: see above", file=sys.stderr)
        return 1
    # What compiling left beside the modules (mypy's cache, the C files and objects, the
    # profile): not used at run time, and ~35 MB a part.
    for by_product in (".mypy_cache", "build", "profile"):
        shutil.rmtree(part.source / by_product, ignore_errors=True)
    if digest.__wrapped__(part) != expected:  # the source was edited while it compiled
        shutil.rmtree(part.root, ignore_errors=True)
        print("olympus.native: the source changed during the build: run it again", file=sys.stderr)
        return 1
    print(f"olympus.native: compiled {len(part.modules)} modules of the {part.name}")
    return 0


def _compiler() -> str:
    """The C compiler's name, as setuptools will call it."""
    command = os.environ.get("CC") or sysconfig.get_config_var("CC") or ""
    return os.path.basename(str(command).split(" ")[0])


def _c_flags() -> list[str]:
    """``C_FLAGS`` for GCC and Clang (both take them), nothing for another compiler."""
    compiler = _compiler()
    return list(C_FLAGS) if "gcc" in compiler or "clang" in compiler else []


def _profile_guided() -> bool:
    return "gcc" in _compiler()


def _compile(part: Part, expected: str) -> bool:
    """mypyc's C of the part's modules, compiled and installed with the digest ``expected``;
    with GCC, compiled twice (``train``). Run in ``part.source``."""
    from mypyc.build import mypycify

    config = Path(__file__).parents[2] / "pyproject.toml"
    options = ["--config-file", str(config)] if config.is_file() else ["--strict"]
    modules = [f"olympus/{module}" for module in part.modules]
    try:
        compiled = mypycify([*options, *modules], opt_level="3")
        extensions = [(extension, list(extension.extra_compile_args)) for extension in compiled]
    except (SystemExit, Exception) as error:
        print(f"olympus.native: mypyc: {error}", file=sys.stderr)
        return False
    flags = _c_flags()
    if _profile_guided():
        profile = f"-fprofile-generate={part.source / 'profile'}"
        if not _build_ext(part, extensions, [*flags, profile], [profile]):
            return False
        part.digest_file.write_text(expected)  # so that the training games run this build
        trained = subprocess.run(
            [sys.executable, "-m", "olympus.native", "train"],
            cwd=PACKAGE.parent,
            env={name: value for name, value in os.environ.items() if name != PURE_PYTHON},
        )
        part.digest_file.unlink()
        if trained.returncode != 0:
            print("olympus.native: the training games failed", file=sys.stderr)
            return False
        used = f"-fprofile-use={part.source / 'profile'}"
        flags += [used, "-fprofile-partial-training", "-Wno-missing-profile"]
    if not _build_ext(part, extensions, flags, []):
        return False
    part.digest_file.write_text(expected)
    return True


# Two C files at a time, the objects where the second pass finds the first's profile (the
# profile is named after them), every one compiled again (``--force``) in the second pass.
_BUILD_EXT = ["-q", "build_ext", "--inplace", "--force", "--parallel", "2"]
_BUILD_EXT += ["--build-temp", "build/temp"]


def _build_ext(
    part: Part, extensions: list[tuple[Any, list[str]]], flags: list[str], link: list[str]
) -> bool:
    """setuptools' ``build_ext`` of mypyc's extensions (each with mypyc's own flags), with
    ``flags`` beyond them; the library then moved to ``part.library``."""
    from setuptools import setup

    for extension, mypyc_flags in extensions:
        extension.extra_compile_args = [*mypyc_flags, *flags]
        extension.extra_link_args = list(link)
    try:
        setup(
            name="olympus-native",
            ext_modules=[extension for extension, _ in extensions],
            script_args=_BUILD_EXT,
        )
    except (SystemExit, Exception) as error:  # setuptools reports a failed compile by exiting
        print(f"olympus.native: {error}", file=sys.stderr)
        return False
    shutil.rmtree(part.library, ignore_errors=True)
    part.library.mkdir()
    for library in Path.cwd().glob("*__mypyc.*"):
        library.rename(part.library / library.name)
    return True


def train(games: int = TRAINING_GAMES, rooms: int = TRAINING_ROOMS) -> int:
    """The profile-guided build's training: seeded random games of every variant, each
    position listed for both seats as their ``legal`` frames list it, each event observed
    for the three audiences and packed, as ``RoomRuntime`` does per command; then ``rooms``
    games through ``RoomRuntime`` itself (``_train_command_path``), whose commands it
    returns (0: no Redis to play them on).

    The first part does by hand some of what the rooms do, and is kept for what they do
    not: a room is created with the lobby's default options, so only these games reach the
    variants' own events, their observation and their listings."""
    import random

    from .bots import play_random_game
    from .rules import (
        COMPILED,
        Faction,
        GameState,
        LegalAction,
        Options,
        execute_steps,
        list_legal,
        removal_outcomes,
        strength_terms,
    )
    from .rules.events import Event, to_dict
    from .rules.observation import observe_event
    from .server.protocol import MSGPACK, EncodedListing, pack
    from .server.room import AUDIENCES

    if not COMPILED:
        sys.exit("olympus.native: the instrumented build did not load: nothing to train")

    def observe(
        state: GameState, action: LegalAction, events: list[Event], after: GameState
    ) -> None:
        before = state
        for event, now in zip(events, execute_steps(state, action.command)[1], strict=True):
            data = to_dict(event)
            for audience in AUDIENCES:
                if (message := observe_event(event, audience, before, now, data)) is not None:
                    pack(message)
            before = now
        strength_terms(after)
        for seat in Faction:
            listing = EncodedListing(MSGPACK)
            list_legal(listing, after, seat)
            MSGPACK.array(listing.entries)
            removal_outcomes(after, seat)

    rng = random.Random(TRAINING_SEED)
    for _ in range(games):
        variant = Options(rng.random() < 0.5, rng.random() < 0.5, rng.randint(-5, 5))
        play_random_game(rng, variant, observe=observe)
    return _train_command_path(rooms)


def _train_command_path(rooms: int) -> int:
    """Whole games through ``RoomRuntime.submit`` on an embedded Redis (``appendfsync
    always``, as ``olympus serve`` runs it), ``rooms`` at a time (``in_process.open_room``: a
    subscriber per seat and a spectator): what a command costs the service beyond the rules
    (the append, the fold, the feeds, the ``legal`` frames).

    The commands played; 0 and a note where the embedded Redis cannot start: the build is
    then guided on the rules alone, which changes its speed and never its results."""
    import asyncio
    import random
    import tempfile

    from .bots import choose
    from .server.in_process import open_room
    from .server.room import RoomRuntime
    from .server.services import Services
    from .server.settings import Settings
    from .store import EmbeddedRedis

    async def play(redis_url: str) -> int:
        services = Services(Settings(redis_url=redis_url, prefix="training"))
        await services.start()
        try:
            rng = random.Random(TRAINING_SEED)
            held: list[RoomRuntime] = [(await open_room(services, rng))[0] for _ in range(rooms)]
            played = 0
            while held and played < rooms * 2000:  # (random games end far sooner)
                room = held[played % len(held)]
                action = None if room.over else choose(rng, room.state)
                if action is None:
                    held.remove(room)
                    continue
                await room.submit(action.command, f"c{played}")
                played += 1
                await asyncio.sleep(0)  # the fan-out of the append's hint, the snapshotter
            return played
        finally:
            await services.stop()

    with tempfile.TemporaryDirectory() as work:
        try:
            redis = EmbeddedRedis(work, appendfsync="always").start()
        except (OSError, RuntimeError, ValueError) as error:
            print(f"olympus.native: no Redis to train the command path on: {error}")
            return 0
        try:
            return asyncio.run(play(redis.url))
        finally:
            redis.stop()


if __name__ == "__main__":
    if sys.argv[1:] == ["build"]:
        sys.exit(build())
    if sys.argv[1:] == ["train"]:  # (the build runs it)
        train()
        sys.exit(0)
    sys.exit("usage: python -m olympus.native build")
