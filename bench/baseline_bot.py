"""The computer of an earlier commit, for the arena to play against: ``service/olympus/bot/``
as it was at ``REV`` (git), imported as a package of its own (``baseline_bot``) beside today's,
on today's rules (the rules are shared; only the bot differs).

    make_baseline(kind, seat, seed, rev)  # kind: a level, "greedy" or "random"
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_loaded: dict[str, Any] = {}


def baseline(rev: str) -> Any:
    """The ``olympus.bot`` package of ``rev``, extracted once per process."""
    if rev not in _loaded:
        target = Path(tempfile.mkdtemp(prefix="baseline-bot-")) / f"baseline_bot_{rev}"
        target.mkdir()
        names = subprocess.run(
            ["git", "-C", str(ROOT), "ls-tree", "--name-only", rev, "service/olympus/bot/"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        for name in names:
            source = subprocess.run(
                ["git", "-C", str(ROOT), "show", f"{rev}:{name}"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            (target / Path(name).name).write_text(source)
        sys.path.insert(0, str(target.parent))
        _loaded[rev] = importlib.import_module(target.name)
    return _loaded[rev]


def make_baseline(kind: str, seat: Any, seed: int, rev: str) -> Any:
    """A player of ``rev``'s bot, untimed (its iterations, like the arena's others)."""
    return baseline(rev).make_player(kind, seat, seed, timed=False)
