"""Coverage gate for the character powers: every module of ``olympus.rules.powers`` must be
exercised to at least 95% (branch coverage: statements and branches together, the "Cover" column
of ``coverage report --branch``) by the power scenarios and by random legal games.

The measurement runs in a fresh interpreter (this file run as a script) so that coverage starts
before the powers are imported: their module-level lines count too, and a ``--cov`` run of pytest
does not interfere. It plays every scenario under tests/scenarios/powers plus the variants, then
``GAMES`` random games cycling through every combination of the variants; the random setups pick
every character in turn. The per-module report is printed (``pytest -s``) and is the failure
message. ``OLYMPUS_COVERAGE_GAMES=N`` changes the number of games.

The child runs the interpreted source (``OLYMPUS_PURE_PYTHON=1``): compiled modules (olympus.native)
report no lines to coverage.

Budget: about 25 s on the development machine (scenarios ~10 s and 40 games ~12 s under tracing).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).parent
SCENARIOS = [TESTS / "scenarios" / "powers", TESTS / "scenarios" / "variants.yaml"]
PACKAGE = "olympus.rules.powers"
THRESHOLD = 95.0
GAMES = int(os.environ.get("OLYMPUS_COVERAGE_GAMES", "40"))
MAX_COMMANDS = 600


def measure(out: Path) -> None:
    """In the child process: run everything under coverage, write the JSON report to ``out``."""
    import coverage

    cov = coverage.Coverage(branch=True, source=[PACKAGE], data_file=None, config_file=False)
    cov.start()
    try:
        played = _play()
    finally:
        cov.stop()
    cov.json_report(outfile=str(out), pretty_print=True)
    report = json.loads(out.read_text())
    report["played"] = played
    out.write_text(json.dumps(report))


def _play() -> dict[str, object]:
    import itertools
    import random

    from olympus.bots import play_random_game
    from olympus.rules import Options
    from olympus.scenario import Mismatch, ScenarioError, expand, load, run

    failed: list[str] = []
    scenarios = 0
    for path in expand([str(p) for p in SCENARIOS]):
        for scenario in load(path):
            scenarios += 1
            try:
                run(scenario)
            except (Mismatch, ScenarioError):
                failed.append(scenario.id)  # counted by the scenario tests, not here
    picked: set[str] = set()
    variants = itertools.cycle(itertools.product([False, True], [False, True], range(-5, 6, 3)))
    for seed, (open_combat, random_setup, honor) in zip(range(GAMES), variants, strict=False):
        options = Options(open_combat=open_combat, random_setup=random_setup, chthonian_honor=honor)
        _, final, _ = play_random_game(random.Random(seed), options, MAX_COMMANDS)
        picked |= final.picked
    return {"scenarios": scenarios, "failed": failed, "games": GAMES, "picked": sorted(picked)}


def _percent(summary: dict[str, int]) -> float:
    """Statements and branches together, as coverage.py's Cover column with branch=True."""
    total = summary["num_statements"] + summary["num_branches"]
    done = summary["covered_lines"] + summary["covered_branches"]
    return 100.0 * done / total if total else 100.0


def table(report: dict) -> tuple[str, list[str]]:
    """The per-module report, and the modules below the threshold."""
    rows = [
        f"{'module':<16}{'stmts':>6}{'miss':>6}{'branch':>8}{'brmiss':>8}{'cover':>8}  missing",
    ]
    low = []
    for path, data in sorted(report["files"].items()):
        s = data["summary"]
        name = Path(path).name
        cover = _percent(s)
        missing = [str(n) for n in data["missing_lines"]]
        missing += [f"{a}->{'exit' if b < 0 else b}" for a, b in data["missing_branches"]]
        flag = "  <-- below" if cover < THRESHOLD else ""
        rows.append(
            f"{name:<16}{s['num_statements']:>6}{s['missing_lines']:>6}{s['num_branches']:>8}"
            f"{s['missing_branches']:>8}{cover:>7.1f}%  {', '.join(missing)}{flag}"
        )
        if cover < THRESHOLD:
            low.append(name)
    totals = report["totals"]
    rows.append(f"{'TOTAL':<16}{'':>36}{_percent(totals):>7.1f}%")
    return "\n".join(rows), low


def test_every_power_module_is_covered() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("COV_CORE_")}  # pytest-cov
    env["OLYMPUS_PURE_PYTHON"] = "1"  # coverage measures the source: the compiled core has no lines
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "powers.json"
        child = subprocess.run(
            [sys.executable, __file__, str(out)],
            env=env,
            cwd=TESTS.parent,
            capture_output=True,
            text=True,
            timeout=240,
        )
        assert child.returncode == 0, child.stdout + child.stderr
        report = json.loads(out.read_text())
    played = report["played"]
    text, low = table(report)
    summary = (
        f"powers coverage (branch): {played['scenarios']} scenarios, {played['games']} random games"
        f"\n{text}"
    )
    print(summary)
    from olympus.rules.characters import CHARACTERS

    unpicked = {c.name for c in CHARACTERS} - set(played["picked"])
    assert not (played["games"] and unpicked), f"the random games never picked {sorted(unpicked)}"
    measured = {Path(p).stem for p in report["files"]}
    assert measured >= {c.name.lower() for c in CHARACTERS}, "a character module was not measured"
    assert not low, f"power modules below {THRESHOLD}% branch coverage: {low}\n{summary}"


if __name__ == "__main__":
    measure(Path(sys.argv[1]))
