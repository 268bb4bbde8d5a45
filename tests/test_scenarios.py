"""Every YAML rule scenario under tests/scenarios, one test each, through the CLI's runner."""

from __future__ import annotations

from pathlib import Path

import pytest

from olympus.scenario import Mismatch, Scenario, ScenarioError, expand, load, run

ROOT = Path(__file__).parent / "scenarios"


def _collect() -> list[object]:
    """One case per scenario; a file that does not load is one failing case, not a crash."""
    params: list[object] = []
    for path in expand([str(ROOT)]):
        name = path.relative_to(ROOT)
        try:
            params += [pytest.param(s, id=f"{name}::{s.name}") for s in load(path)]
        except ScenarioError as error:
            params.append(pytest.param(error, id=f"{name}::(file)"))
    return params


@pytest.mark.parametrize("scenario", _collect())
def test_scenario(scenario: Scenario | ScenarioError) -> None:
    if isinstance(scenario, ScenarioError):
        pytest.fail(str(scenario), pytrace=False)
    failure = None
    try:
        run(scenario)
    except (Mismatch, ScenarioError) as mismatch:
        failure = str(mismatch)
    if failure:
        pytest.fail(failure, pytrace=False)


def test_scenarios_exist() -> None:
    assert list(ROOT.rglob("*.yaml")), f"no scenarios found under {ROOT}"
