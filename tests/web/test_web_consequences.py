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


@dataclass
class Meeting:
    name: str
    side: str
    given: dict[str, Any]
    unit: str
    to: int
    said: str  # what the confirmation says ("" when the rules list nothing)


MEETINGS = [
    Meeting(
        "Cronus meets Zeus",
        "chthonians",
        {"units": {"Cronus": 17, "Zeus": 18, "Hera": 35, "Hades": 1}, "revealed": ["Zeus"]},
        "Cronus",
        18,
        "Meeting there eliminates Zeus at once",
    ),
    Meeting(
        "Zeus meets Cronus",
        "olympians",
        {
            "units": {"Zeus": 18, "Cronus": 17, "Hera": 35, "Hades": 1},
            "revealed": ["Cronus"],
            "turn": "olympians",
        },
        "Zeus",
        17,
        "Meeting there eliminates Zeus at once",
    ),
    Meeting(
        "Demeter meets the last Chthonian leader",
        "olympians",
        {
            "units": {"Demeter": 17, "Persephone": 18, "Zeus": 35},
            "eliminated": ["Hades"],
            "revealed": ["Persephone"],
            "turn": "olympians",
        },
        "Demeter",
        18,
        "Meeting there eliminates Persephone, Demeter at once. The Olympians win the game",
    ),
    Meeting(
        "a hidden Zeus is not told of",
        "chthonians",
        {"units": {"Cronus": 17, "Zeus": 18, "Hera": 35, "Hades": 1}},
        "Cronus",
        18,
        "",
    ),
]


@pytest.mark.parametrize("case", MEETINGS, ids=[m.name for m in MEETINGS])
def test_a_meeting_says_what_it_does_from_the_rules(seats, case: Meeting) -> None:  # noqa: F811
    from test_web_costs import POSITION

    state, _ = build(case.given, case.name)
    side = Faction(case.side)
    [action] = [
        a
        for a in legal_actions(state, side)
        if a.wire["type"] == "move"
        and a.wire["units"] == [case.unit]
        and a.wire["to"] == case.to
        and not a.wire["use_power"]
        and not a.wire["reveal"]
    ]
    events, after = execute(state, action.command)
    eliminated = [e.unit for e in events if isinstance(e, ev.UnitEliminated)]
    if case.said:  # the rules list what executing it does
        assert action.outcome == (tuple(eliminated), after.result)
    else:  # it depends on who the hidden token is: nothing listed, though it happens
        assert action.outcome is None and eliminated == ["Zeus"]

    legal = [
        {"command": a.wire, "honor": a.honor, "energy": a.energy}
        | (
            {"outcome": {"eliminated": list(a.outcome[0]), "result": a.outcome[1]}}
            if a.outcome
            else {}
        )
        for a in legal_actions(state, side)
    ]
    page = seats[case.side]
    page.evaluate(POSITION, page_position(state, side, legal))
    page.wait_for_selector("#your-turn")
    page.click(f"g.unit[data-unit='{case.unit}']")
    page.click(f"g.dest[data-region='{case.to}']")
    if case.said:
        confirm = page.locator("dialog#confirm[open]")
        assert case.said in confirm.inner_text(), confirm.inner_text()
        if after.result and after.result != side.value:
            assert confirm.locator("#confirm-title").inner_text() == "You will lose the game"
        confirm.locator("[data-action=cancel]").click()
        assert page.evaluate("window.sent") is None
    else:
        page.wait_for_function("window.sent !== null || document.querySelector('dialog[open]')")
        assert "eliminates" not in page.inner_text("body")
        page.keyboard.press("Escape")
