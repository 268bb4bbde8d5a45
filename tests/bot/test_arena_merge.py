"""bench/bot_arena.py's ``--merge``: the reports of runs in pieces add up to the report of one
run of all their games."""

from __future__ import annotations

import importlib.util
import json
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


def test_until_plays_runs_of_the_widest_pair_until_each_is_within(tmp_path: Path) -> None:
    """``--until W --pieces DIR``: runs saved one by one; it stops when every pair's interval
    is within ±W, and started again on the same pieces it plays nothing more."""
    arena = _arena()
    pieces, out = tmp_path / "pieces", tmp_path / "arena.json"
    argv = ["--players", "random,greedy,easy", "--pairs", "random-greedy,greedy-easy"]
    argv += ["--until", "0.3", "--pieces", str(pieces), "--games", "2", "--processes", "1"]
    assert arena.main([*argv, "--json", str(out)]) == 0
    files = sorted(pieces.glob("*.json"))
    reports = [json.loads(f.read_text()) for f in files]
    assert len(files) >= 2 and all(len(r["pairs"]) == 1 for r in reports)
    merged = json.loads(out.read_text())
    assert merged == json.loads(json.dumps(arena.merge(reports)))
    assert {frozenset((r["player"], r["opponent"])) for r in merged["pairs"]} == {
        frozenset(("random", "greedy")),
        frozenset(("greedy", "easy")),
    }
    for row in merged["pairs"]:
        low, high = row["win_interval"]
        assert high - low <= 0.6
    assert arena.main(argv) == 0
    assert sorted(pieces.glob("*.json")) == files


def _row(player: str, opponent: str, sides: dict[str, tuple[int, int]]) -> dict:
    """A report's row of ``sides[side] = (wins, losses)``, counted as ``report_of`` counts."""
    arena = _arena()
    counts = {
        (player, opponent, side): {"win": won, "draw": 0, "loss": lost, "cut": 0}
        for side, (won, lost) in sides.items()
    }
    report = arena.report_of([player, opponent], [(player, opponent)], counts, {}, 0, 0.0)
    return dict(report["pairs"][0])


def test_widest_counts_each_side_where_asked_and_a_player_against_itself_by_its_sides() -> None:
    """Over both sides a 50-50 split of one-sided results is narrow; ``each_side`` sees the
    side played least often; a player against itself is judged by its sides either way."""
    arena = _arena()
    lopsided = _row("hard", "safe", {"olympians": (8, 0), "chthonians": (1000, 1000)})
    even = _row("normal", "safe", {"olympians": (150, 150), "chthonians": (150, 150)})
    itself = _row("safe", "safe", {"olympians": (20, 20), "chthonians": (20, 20)})
    report = {"pairs": [lopsided, even, itself]}
    pairs = [("hard", "safe"), ("normal", "safe")]
    both, _ = arena.widest(report, pairs)
    half_even = (even["win_interval"][1] - even["win_interval"][0]) / 2
    assert arena.widest(report, pairs) == (half_even, ("normal", "safe"))
    side = lopsided["sides"]["olympians"]["win_interval"]
    assert arena.widest(report, pairs, each_side=True) == ((side[1] - side[0]) / 2, pairs[0])
    assert both < (side[1] - side[0]) / 2
    own = itself["sides"]["olympians"]["win_interval"]
    assert arena.widest(report, [("safe", "safe")]) == ((own[1] - own[0]) / 2, ("safe", "safe"))
    assert arena.widest(report, [("easy", "random")]) == (0.5, ("easy", "random"))
