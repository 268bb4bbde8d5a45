"""Every benchmark under ``bench/`` still runs: each is run here on a tiny workload and must
finish, write its headline figures under the keys bench/README.md documents, each one a
measurement, and leave no temporary files behind (a server's log and Redis data, a script).
Only that they run and measure, never how fast (speed is the benchmarks' business, not the
tests'): a bench nobody runs breaks unseen, or goes on writing figures of nothing."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import olympus.rules

BENCH = Path(__file__).resolve().parent.parent / "bench"

# bench, tiny arguments, the figures its --json must hold (None: it writes no --json)
RUNS: list[tuple[str, list[str], set[str] | None]] = [
    (
        "rules_bench.py",
        ["--games", "3", "--repeat", "1", "--runs", "1"],
        {"legal_turn_mean_us", "legal_combat_mean_us", "execute_median_us", "replay_events_per_s"},
    ),
    ("playout_bench.py", ["--games", "3"], {"games_per_s", "positions_per_s"}),
    ("legal_instructions.py", ["--games", "2"], {"turn_positions", "actions"}),
    (
        "legal_instructions.py",
        ["--games", "2", "--phase", "combat"],
        {"combat_positions", "actions"},
    ),
    (
        "command_path_bench.py",
        ["--rooms", "2", "--commands", "50", "--runs", "1"],
        {"service_ms_per_command", "bot_ms_per_command", "legal_frames_us_per_command"},
    ),
    (
        "load_bench.py",
        [
            *("--mode", "closed", "--rooms", "2", "--seconds", "1", "--warmup", "0.5"),
            *("--workers", "1", "--spectators"),
        ],
        {
            "commands_per_s",
            "server_cpu_us_per_command",
            "p50_ms",
            "p99_ms",
            "next_legal_p50_ms",
            "next_legal_p99_ms",
        },
    ),
    (
        "lifecycle_bench.py",
        ["--games", "3", "--warmup", "1", "--concurrency", "2"],
        {"games_per_s", "server_cpu_ms_per_game", "redis_commands_per_game"},
    ),
    (
        "spectator_bench.py",
        [
            *("--spectators", "20", "--seconds", "2", "--warmup", "0.5"),
            *("--idle-players", "4"),
        ],
        {"command_to_last_spectator_p99_ms", "server_cpu_us_per_frame", "frames_delivered"},
    ),
    ("room_load_bench.py", ["--games", "2", "--every", "20"], None),
    ("bot_speed.py", ["--games", "1", "--levels", "easy"], None),
    (
        "archive_bench.py",
        [
            *("--games", "6", "--distinct", "2", "--grace", "0.2", "--sample-every", "2"),
            *("--drain", "4"),
        ],
        {
            "used_memory_growth_without",
            "used_memory_growth_with",
            "archive_bytes_per_game",
            "archiving_cpu_ms_per_game",
        },
    ),
    ("ws_floor_bench.py", ["--rooms", "2", "--seconds", "1", "--warmup", "0.5"], None),
    (
        "players_bench.py",
        [
            *("--seekers", "8", "--generators", "2", "--rooms", "4"),
            *("--logins", "4", "--seconds", "2"),
        ],
        {"seek_to_paired_p99_s", "pairs_per_second", "login_p99_ms", "command_p99_ms_burst"},
    ),
]


def _run(bench: str, *args: str, tmp: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``bench`` run with ``args``; with ``tmp``, its temporary files (``TMPDIR``) go there."""
    command = [sys.executable, str(BENCH / bench), *args]
    env = None if tmp is None else {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.run(
        command, capture_output=True, text=True, timeout=300, check=False, env=env
    )


@pytest.fixture
def bench_tmp() -> Iterator[Path]:
    """A bench's own temporary directory (its ``TMPDIR``), to see what it leaves there. Short:
    an embedded Redis' socket path under it must fit in 103 bytes (``tmp_path``'s would not)."""
    tmp = Path(tempfile.mkdtemp(prefix="bench-"))
    yield tmp
    shutil.rmtree(tmp)


def measured(figure: object) -> bool:
    """Whether ``figure`` is a measurement: a finite number above zero (not a flag)."""
    return (
        isinstance(figure, int | float)
        and not isinstance(figure, bool)
        and math.isfinite(figure)
        and figure > 0
    )


@pytest.mark.parametrize(("bench", "args", "figures"), RUNS, ids=[r[0] for r in RUNS])
def test_a_bench_runs_and_reports(
    tmp_path: Path, bench_tmp: Path, bench: str, args: list[str], figures: set[str] | None
) -> None:
    """The bench exits 0, leaves nothing in its temporary directory and writes every headline
    figure it documents, each a measurement (a tiny run that measured nothing fails)."""
    out = tmp_path / "out.json"
    run = _run(bench, *args, *(() if figures is None else ("--json", str(out))), tmp=bench_tmp)
    assert run.returncode == 0, run.stderr[-3000:]
    # what it made to run (a server's log and Redis data, a script) is gone once it ran
    assert not list(bench_tmp.iterdir()), list(bench_tmp.iterdir())
    if figures is not None:
        report = json.loads(out.read_text())
        assert figures <= set(report), figures - set(report)
        # each figure measured something: a positive, finite number (a bench writes None, or
        # NaN for a percentile of no samples, where it measured nothing)
        unmeasured = {f: report[f] for f in figures if not measured(report[f])}
        assert not unmeasured, unmeasured
        if bench in ("load_bench.py", "lifecycle_bench.py"):  # its server ran this build
            assert report["server_compiled"] is olympus.rules.COMPILED
        if bench == "load_bench.py":  # its last line judges the figure it wrote (closed loop)
            cpu = report["server_cpu_us_per_command"]
            last = run.stdout.strip().splitlines()[-1]
            met = "met" if cpu <= 300 else "MISSED"
            assert last.endswith(f"server CPU ≤ 300 µs per command: {met}"), last


@pytest.mark.parametrize(
    ("bench", "args", "figure", "at_least"),
    [
        # a game's lifecycle runs millions of instructions, a command hundreds of thousands
        # (over a million with its share of the lifecycles)
        (
            "lifecycle_bench.py",
            ["--games", "2", "--warmup", "1", "--concurrency", "1"],
            "server_instructions_per_game",
            1_000_000,
        ),
        (
            "load_bench.py",
            ["--rooms", "2", "--seconds", "3", "--warmup", "1", "--spectators"],
            "server_instructions_per_command",
            100_000,
        ),
    ],
    ids=["lifecycle_bench.py", "load_bench.py"],
)
def test_a_bench_counts_the_servers_instructions_under_callgrind(
    tmp_path: Path, bench: str, args: list[str], figure: str, at_least: int
) -> None:
    """``--callgrind``: the server under valgrind, counting only what the window measures; a
    count switched on too late, or never, reads as nothing or next to it."""
    out = tmp_path / "out.json"
    run = _run(bench, "--callgrind", *args, "--json", str(out))
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(out.read_text())[figure] > at_least


def test_the_legal_equivalence_check_passes_the_same_code_and_fails_another(
    tmp_path: Path,
) -> None:
    """Its digests written by this code compare equal to this code's, and one changed
    position is found."""
    written = tmp_path / "old.json"
    assert _run("legal_equivalence.py", "--games", "2", "--write", str(written)).returncode == 0
    assert _run("legal_equivalence.py", "--games", "2", "--compare", str(written)).returncode == 0
    digests = json.loads(written.read_text())
    game, command, _ = digests[5].split(":")
    digests[5] = f"{game}:{command}:{'0' * 64}"
    written.write_text(json.dumps(digests))
    compared = _run("legal_equivalence.py", "--games", "2", "--compare", str(written))
    assert compared.returncode != 0 and f"DIFFERENT at game:command {game}:{command}" in (
        compared.stderr
    )


def test_the_lockstep_bench_times_each_build_against_the_first(tmp_path: Path) -> None:
    """Two builds (here the same one twice) list the same positions in turns; each build's
    figures are reported, the first's ratio to itself being 1."""
    out = tmp_path / "out.json"
    service = str(BENCH.parent / "service")
    run = _run("lockstep.py", service, service, "--games", "2", "--rounds", "2", "--json", str(out))
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["turn_positions"] > 0 and report["actions"] > report["turn_positions"]
    first, second = report["builds"]
    assert first["compiled"] is second["compiled"] is olympus.rules.COMPILED  # this build's
    assert first["ratio_median"] == 1.0 and second["ratio_median"] > 0
    assert first["legal_turn_median_us"] > 0 and second["legal_turn_median_us"] > 0


def test_the_paired_bench_times_two_configurations_at_once(tmp_path: Path, bench_tmp: Path) -> None:
    """Each round runs the command path bench once per configuration, side by side, each with
    its own environment (here B interpreted: it says so in every round, A runs this build);
    the report holds each round's figures of both and B's median ratio to A."""
    out = tmp_path / "out.json"
    tiny = ("--rooms", "2", "--commands", "30", "--runs", "1", "--rounds", "2")
    run = _run(
        "paired.py", "--b", "OLYMPUS_PURE_PYTHON=1", *tiny, "--json", str(out), tmp=bench_tmp
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert not list(bench_tmp.iterdir()), list(bench_tmp.iterdir())
    report = json.loads(out.read_text())
    assert len(report["rounds"]) == 2 and report["b"] == "OLYMPUS_PURE_PYTHON=1"
    for one in report["rounds"]:
        assert one["a"]["compiled"] is olympus.rules.COMPILED and one["b"]["compiled"] is False
    for figure in ("service_ms_per_command", "legal_frames_us_per_command"):
        assert all(r["a"][figure] > 0 and r["b"][figure] > 0 for r in report["rounds"])
        assert report[f"{figure}_ratio"] > 0
    refused = _run("paired.py", "--b", "NOT_AN_ASSIGNMENT")
    assert refused.returncode != 0 and "is not KEY=VALUE" in refused.stderr
