"""bench/bot_arena.py's ``--merge``: the reports of runs in pieces add up to the report of one
run of all their games."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def _arena() -> ModuleType:
    path = Path(__file__).resolve().parents[2] / "bench" / "bot_arena.py"
    spec = importlib.util.spec_from_file_location("bot_arena", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bot_arena"] = module
    spec.loader.exec_module(module)
    return module


def test_merged_reports_are_the_report_of_all_their_games() -> None:
    arena = _arena()
    names = ["random", "greedy", "easy"]
    pairs = [("random", "greedy"), ("greedy", "easy")]
    tasks = [
        (first, second, seed, 300)
        for seed, (a, b) in enumerate(pairs * 3)
        for first, second in ((a, b), (b, a))
    ]
    games = [arena.play_one(task) for task in tasks]
    whole = arena.summarize(names, pairs, games, 3.0)
    pieces = [
        arena.summarize(names, pairs, games[:5], 1.0),
        arena.summarize(names, pairs, games[5:], 2.0),
    ]
    merged = arena.merge(pieces)
    assert merged["pairs"] == whole["pairs"]
    assert merged["elo"] == whole["elo"]
    assert merged["games"] == whole["games"] == len(tasks)
    assert merged["wall_seconds"] == 3.0
    for name in names:
        assert merged["speed"][name]["decisions"] == whole["speed"][name]["decisions"] > 0
    assert sum(row["games"] for row in merged["pairs"]) == len(tasks)
