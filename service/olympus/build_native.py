"""The compiled core's build (``make native``) and its training.

    python -m olympus.build_native build               # unless current (waits for one under way)
    python -m olympus.build_native build --quick       # any build of this source; else one unguided
    python -m olympus.build_native build --background  # ``build``, detached: returns at once
    python -m olympus.build_native train               # the training games (``build`` runs them)

``build`` copies the package's source into a staging tree beside the build, compiles there
with mypyc the modules of each part of ``olympus.native`` (``CORE``: the rules and the command
path, as one build), with GCC profile-guided (``train``), records the digest of the source it
compiled (``olympus.native.digest``: what the build is valid for) and how (``recipe``), then
puts the staged tree in the build's place. ``olympus.native`` runs the build wherever its
digest matches the source; a build made otherwise (other flags, another training, unguided)
runs too, and ``build`` makes it again the way ``recipe`` says.

``--quick`` is for the test suite: a build of the source as it is, whatever its recipe, will
do; else it compiles one without a profile (once rather than twice, and no training), which
``build`` later makes again with one. ``--background`` is for
``make serve``: the service starts at once on what there is (the interpreted source, or a
build made otherwise) while the build runs at a lower priority, its output in
``olympus.native.build_log()``; the next start runs it.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path
from typing import Any

from . import native
from .native import PARTS, PURE_PYTHON, Part, Tree, current

# The module as ``python -m`` names it (the build runs its training, and itself, that way).
MODULE = f"{native.TOP}.build_native"

# What mypyc is told to ask of the C compiler (-O3), and what the C compiler is told beyond
# it and Python's own flags, where it is GCC or Clang. Python's flags compile the library as
# position-independent code in which every global function may be replaced at load time by
# another library's of the same name (ELF's interposition): so the compiler may inline none of
# mypyc's ~1,900 functions into another, and each call into Python's own C API goes through a
# PLT stub. No library replaces ours; with these two the compiler inlines within the library
# and calls the API through its address at once. `submit` over the command path bench ran
# 3.9 % fewer instructions, listing 6.5 % fewer (docs/performance.md).
OPT_LEVEL = "3"
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


def _compiler_here() -> bool:
    return bool(shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc"))


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


def recipe(guided: bool) -> str:
    """How a build is compiled, beyond what it compiles (``olympus.native.digest``): mypyc's
    version and optimisation level, the C compiler's extra flags (``C_FLAGS`` for GCC and
    Clang), and whether it is profile-guided, and then on what training (this module's
    source). It changes the build's speed, never its results."""
    from mypy.version import __version__ as mypy_version

    lines = [f"mypyc {mypy_version} -O{OPT_LEVEL}", f"C flags: {' '.join(_c_flags())}"]
    if guided:
        training = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
        lines.append(f"profile-guided, training {training}")
    else:
        lines.append("no profile")
    return "\n".join(lines) + "\n"


def _recipe_file(tree: Tree) -> Path:
    return tree.root / "RECIPE"


def _made(part: Part, quick: bool) -> bool:
    """Whether ``part``'s build is what ``build`` (``quick`` or not) would make now."""
    if not current(part):
        return False
    made = _recipe_file(part.tree)
    return quick or (made.is_file() and made.read_text() == recipe(_profile_guided()))


def build(quick: bool = False) -> int:
    """Compile each part unless its build is current (``quick``: of this source, whatever its
    recipe; else also made by this ``recipe``). A build under way is waited for. Exit status:
    0 when built, current, or impossible here (no C compiler: everything runs interpreted,
    with a note); 1 when a compiler is there and a build fails (a module mypyc rejects must
    not go unnoticed)."""
    if not _compiler_here():
        print(f"{MODULE}: no C compiler here: the source runs interpreted (same results)")
        return 0
    if all(_made(part, quick) for part in PARTS):
        print(f"{MODULE}: the build is current")
        return 0
    native.BUILD.mkdir(parents=True, exist_ok=True)
    with _locked():
        for stale in native.BUILD.iterdir():  # a staging tree cut short, an earlier layout
            if stale.is_dir() and stale.name not in {part.name for part in PARTS}:
                shutil.rmtree(stale)
        for part in PARTS:
            if _made(part, quick):  # (by the build that was under way)
                print(f"{MODULE}: the {part.name} build is current")
            elif _build(part, guided=_profile_guided() and not quick) != 0:
                return 1
    return 0


@contextlib.contextmanager
def _locked() -> Iterator[None]:
    """The build's lock (``olympus.native.build_lock``), waited for if another build holds it."""
    with native.build_lock().open("ab") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"{MODULE}: waiting for the build under way ({native.build_log()})", flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def build_in_background() -> int:
    """``build``, in a process of its own that outlives this one (detached from the terminal,
    so that stopping ``make serve`` does not stop it; at a lower priority; its output in
    ``olympus.native.build_log()``), unless the build is current or one is under way; returns
    at once (exit status 0)."""
    if not _compiler_here():
        print(f"{MODULE}: no C compiler here: the source runs interpreted (same results)")
        return 0
    if all(_made(part, quick=False) for part in PARTS):
        print(f"{MODULE}: the build is current")
        return 0
    if native.building():
        print(f"{MODULE}: a build is under way ({native.build_log()})")
        return 0
    native.BUILD.mkdir(parents=True, exist_ok=True)
    with native.build_log().open("wb") as log:
        subprocess.Popen(
            [sys.executable, "-m", MODULE, "build"],
            cwd=native.PACKAGE.parent,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=lambda: os.nice(10),
        )
    runs = "a build made otherwise" if all(current(part) for part in PARTS) else "the source"
    print(f"{MODULE}: building in the background ({native.build_log()}): {runs} runs until then")
    return 0


def _build(part: Part, guided: bool) -> int:
    """Compile ``part`` in its staging tree, then put the tree in the build's place."""
    staging = Tree(part.root.with_name(f"{part.name}.new"))
    shutil.rmtree(staging.root, ignore_errors=True)
    # The whole package, so that mypy sees every module the compiled ones import.
    shutil.copytree(
        native.PACKAGE, staging.source / native.TOP, ignore=shutil.ignore_patterns("__pycache__")
    )
    expected = native.digest(part)  # of the source copied (it cannot change under us unseen)
    here = Path.cwd()
    os.chdir(staging.source)  # so that the modules keep their names (``olympus.rules.…``)
    try:
        built = _compile(part, staging, guided)
    finally:
        os.chdir(here)
    if not built:
        shutil.rmtree(staging.root, ignore_errors=True)
        print(f"{MODULE}: building the {part.name} failed: see above", file=sys.stderr)
        return 1
    # What compiling left beside the modules (mypy's cache, the C files and objects, the
    # profile): not used at run time, and ~35 MB a part.
    for by_product in (".mypy_cache", "build", "profile"):
        shutil.rmtree(staging.source / by_product, ignore_errors=True)
    if native.digest.__wrapped__(part) != expected:  # the source was edited while it compiled
        shutil.rmtree(staging.root, ignore_errors=True)
        print(f"{MODULE}: the source changed during the build: run it again", file=sys.stderr)
        return 1
    _recipe_file(staging).write_text(recipe(guided))
    staging.digest_file.write_text(expected)
    replaced = part.root.with_name(f"{part.name}.old")
    shutil.rmtree(replaced, ignore_errors=True)
    if part.root.exists():
        part.root.rename(replaced)
    staging.root.rename(part.root)
    shutil.rmtree(replaced, ignore_errors=True)
    how = "profile-guided" if guided else "without a profile"
    print(f"{MODULE}: compiled {len(part.modules)} modules of the {part.name}, {how}")
    return 0


def _compile(part: Part, staging: Tree, guided: bool) -> bool:
    """mypyc's C of the part's modules, compiled in ``staging`` (the working directory); if
    ``guided``, compiled twice, with the training games between (``train``)."""
    from mypyc.build import mypycify

    config = Path(__file__).parents[2] / "pyproject.toml"
    options = ["--config-file", str(config)] if config.is_file() else ["--strict"]
    modules = [f"{native.TOP}/{module}" for module in part.modules]
    try:
        compiled = mypycify([*options, *modules], opt_level=OPT_LEVEL)
        extensions = [(extension, list(extension.extra_compile_args)) for extension in compiled]
    except (SystemExit, Exception) as error:
        print(f"{MODULE}: mypyc: {error}", file=sys.stderr)
        return False
    flags = _c_flags()
    if guided:
        profile = f"-fprofile-generate={staging.source / 'profile'}"
        if not _build_ext(staging, extensions, [*flags, profile], [profile]):
            return False
        # The staged copy runs as a tree of its own: its packages hold the instrumented
        # modules beside their source, and its library is on the path.
        paths = [str(staging.library), *filter(None, [os.environ.get("PYTHONPATH")])]
        environment = {name: value for name, value in os.environ.items() if name != PURE_PYTHON}
        trained = subprocess.run(
            [sys.executable, "-m", MODULE, "train"],
            cwd=staging.source,
            env={**environment, "PYTHONPATH": os.pathsep.join(paths)},
        )
        if trained.returncode != 0:
            print(f"{MODULE}: the training games failed", file=sys.stderr)
            return False
        used = f"-fprofile-use={staging.source / 'profile'}"
        flags += [used, "-fprofile-partial-training", "-Wno-missing-profile"]
    return _build_ext(staging, extensions, flags, [])


# Two C files at a time, the objects where the second pass finds the first's profile (the
# profile is named after them), every one compiled again (``--force``) in the second pass.
_BUILD_EXT = ["-q", "build_ext", "--inplace", "--force", "--parallel", "2"]
_BUILD_EXT += ["--build-temp", "build/temp"]


def _build_ext(
    staging: Tree, extensions: list[tuple[Any, list[str]]], flags: list[str], link: list[str]
) -> bool:
    """setuptools' ``build_ext`` of mypyc's extensions (each with mypyc's own flags), with
    ``flags`` beyond them; the library then moved to ``staging.library``."""
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
        print(f"{MODULE}: {error}", file=sys.stderr)
        return False
    shutil.rmtree(staging.library, ignore_errors=True)
    staging.library.mkdir()
    for library in Path.cwd().glob("*__mypyc.*"):
        library.rename(staging.library / library.name)
    return True


def train(games: int = TRAINING_GAMES, rooms: int = TRAINING_ROOMS) -> int:
    """The profile-guided build's training: seeded random games of every variant, each
    position listed for both seats as their ``legal`` frames list it, each event observed
    for the three audiences and packed, as ``RoomRuntime`` does per command; then ``rooms``
    games through ``RoomRuntime`` itself (``_train_command_path``), whose commands it
    returns (0: no Redis to play them on). Exits (status 1) where the rules run interpreted:
    that would leave no profile, and the build would go unguided unseen.

    The first part does by hand some of what the rooms do, and is kept for what they do
    not: a room is created with the lobby's default options, so only these games reach the
    variants' own events, their observation and their listings."""
    import random

    from .bots import play_random_game
    from .rules import (
        Faction,
        GameState,
        LegalAction,
        Options,
        execute_steps,
        legal,
        list_legal,
        removal_outcomes,
        strength_terms,
    )
    from .rules.events import Event, to_dict
    from .rules.observation import observe_event
    from .server.protocol import MSGPACK, EncodedListing, pack
    from .server.room_feed import AUDIENCES

    if not str(legal.__file__).endswith(tuple(EXTENSION_SUFFIXES)):
        sys.exit(f"{MODULE}: the compiled core did not load: nothing to train")

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
            print(f"{MODULE}: no Redis to train the command path on: {error}")
            return 0
        try:
            return asyncio.run(play(redis.url))
        finally:
            redis.stop()


def main(argv: list[str] | None = None) -> int:
    top = argparse.ArgumentParser(prog=f"python -m {MODULE}", description="the compiled core")
    commands = top.add_subparsers(dest="command", required=True)
    build_command = commands.add_parser("build", help="compile the core unless it is current")
    how = build_command.add_mutually_exclusive_group()
    how.add_argument(
        "--quick",
        action="store_true",
        help="any build of this source will do; else compile one without a profile",
    )
    how.add_argument(
        "--background", action="store_true", help="build in a detached process; return at once"
    )
    commands.add_parser("train", help="play the training games (the build runs them)")
    args = top.parse_args(argv)
    if args.command == "train":
        train()
        return 0
    if args.background:
        return build_in_background()
    return build(quick=args.quick)


if __name__ == "__main__":
    sys.exit(main())
