"""A choice says what it leads to beyond its label, from the rules' own outcome of it: removing
Thanatos also eliminates everyone in his region, removing the last Chthonian leader ends the
game, a fallen leader's successor takes over, a thunderbolt's victim may be the last leader.

Each position is made with the rules' scenario builder, a choice pending. The rules'
``removal_outcomes`` (sent as ``legal.after_removal``) is compared with executing each choice;
then the page is given the position, the rules' ``legal`` and its ``after_removal``, and what
it says under each choice is compared with executing it. Nothing is sent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from test_web_costs import page_position, seats  # noqa: F401 (a fixture)

from olympus.rules import Faction, execute, legal_actions, removal_outcomes
from olympus.rules import events as ev
from olympus.scenario import build


@dataclass
class Case:
    name: str
    side: str
    given: dict[str, Any]
    said: dict[str, str]  # for some choices, words the page must say under them


COMBAT = {"region": 18, "attacker": "olympians", "origin": 17}
CASES = [
    Case(
        "Thanatos takes his region with him",
        "chthonians",
        {
            "units": {"Thanatos": 18, "Cerberus": 18, "Poseidon": 18, "Hades": 1, "Zeus": 35},
            "combat": COMBAT,
            "pending": ["remove:chthonians"],
        },
        {
            "Thanatos": "Removing Thanatos also eliminates Poseidon, Cerberus.",
            "Cerberus": "Then: your strength",
        },
    ),
    Case(
        "the last Chthonian leader",
        "chthonians",
        {
            "units": {"Persephone": 18, "Cerberus": 18, "Poseidon": 18, "Zeus": 35},
            "eliminated": ["Hades"],
            "combat": COMBAT,
            "pending": ["remove:chthonians"],
        },
        {"Persephone": "You lose the game.", "Cerberus": "Then: your strength"},
    ),
    Case(
        "Hades falls, Persephone leads",
        "chthonians",
        {
            "units": {"Hades": 18, "Cerberus": 18, "Poseidon": 18, "Persephone": 1, "Zeus": 35},
            "combat": COMBAT,
            "pending": ["remove:chthonians"],
        },
        {"Hades": "Persephone leads your side now."},
    ),
    Case(
        "Zeus falls, Hera leads",
        "olympians",
        {
            "units": {"Zeus": 18, "Hera": 18, "Nyx": 18, "Hades": 1},
            "combat": {"region": 18, "attacker": "chthonians", "origin": 25},
            "pending": ["remove:olympians"],
        },
        {"Zeus": "Hera leads your side now.", "Hera": "Then: your strength"},
    ),
    Case(
        "a thunderbolt's victim, the last leader",
        "chthonians",
        {
            "units": {"Persephone": 19, "Charon": 19, "Zeus": 20},
            "eliminated": ["Hades"],
            "turn": "olympians",
            "pending": ["struck:chthonians:19"],
        },
        {"Persephone": "You lose the game."},
    ),
]
IDS = [c.name for c in CASES]


def position(case: Case):
    state, _ = build(case.given, case.name)
    return state, Faction(case.side)


def outcome_of(state, action) -> dict[str, Any]:
    """What executing a removal does: the units it eliminates, and the game's result."""
    events, after = execute(state, action.command)
    return {
        "eliminated": [e.unit for e in events if isinstance(e, ev.UnitEliminated)],
        "result": next((e.result for e in events if isinstance(e, ev.GameEnded)), None),
        "combat": after.combat is not None and after.result is None,
    }


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_rules_say_what_each_removal_leads_to(case: Case) -> None:
    state, side = position(case)
    outcomes = removal_outcomes(state, side)
    removals = [a for a in legal_actions(state, side) if a.wire["type"] == "remove_unit"]
    assert removals and set(outcomes) == {a.wire["unit"] for a in removals}
    for action in removals:
        said, done = outcomes[action.wire["unit"]], outcome_of(state, action)
        assert said["eliminated"] == done["eliminated"], action.wire
        assert said["result"] == done["result"], action.wire
        assert (said["strength"] is not None) == done["combat"], action.wire


CHOICE = """
(spec) => {
  const g = window.olympus;
  const m = g.model;
  m.units = spec.units;
  m.eliminated = spec.eliminated;
  m.honor = spec.honor;
  m.energy = spec.energy;
  m.combat = spec.combat;
  m.lastCombat = spec.combat ? { ...spec.combat, rounds: [], ended: false, losses: [] } : null;
  m.pending = spec.pending;
  g.legal = spec.legal;
  g.options = { seq: m.seq, actions: spec.legal, after_removal: spec.after_removal };
  window.sent = null;
  g.send = (command) => { window.sent = command; return true; };
  g.ui.combatMinimized = false;
  g.render();
}
"""


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_page_says_what_each_removal_leads_to(seats, case: Case) -> None:  # noqa: F811
    state, side = position(case)
    legal = [
        {"command": a.wire, "honor": a.honor, "energy": a.energy}
        for a in legal_actions(state, side)
    ]
    spec = page_position(state, side, legal)
    step = state.pending[0]
    spec["pending"] = {"kind": step.kind.value, "side": step.faction.value, "region": step.region}
    c = state.combat
    spec["combat"] = c and {
        "region": c.region,
        "attacker": c.attacker.value,
        "origin": c.origin,
        "round": c.round,
        "committed": {f.value: False for f in Faction},
        "commitments": {f.value: None for f in Faction},
    }
    spec["after_removal"] = removal_outcomes(state, side)
    page = seats[case.side]
    page.evaluate(CHOICE, spec)
    page.wait_for_selector("#choice button.choice-remove_unit")

    for action in legal_actions(state, side):
        unit = action.wire["unit"]
        done = outcome_of(state, action)
        follows = page.locator(f"#follows-remove_unit-{unit}")
        text = follows.inner_text()
        assert follows.get_attribute("data-eliminated") == ",".join(done["eliminated"]), text
        assert follows.get_attribute("data-result") == (done["result"] or ""), text
        for other in done["eliminated"][1:]:
            assert other in text, text
        if done["result"]:
            assert ("You win" if done["result"] == side.value else "You lose") in text, text
        elif not done["combat"] and state.combat is not None:
            assert "Then the combat ends." in text, text
        if unit in case.said:
            assert case.said[unit] in text, text
    assert page.evaluate("window.sent") is None
