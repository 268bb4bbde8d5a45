"""Every cost shown is the rules' own: for each power that costs or gains Honor or Energy as it
is used (the sneak attack, Demeter's drain, Poseidon's crossing, Charon's ferry, the flights of
Apollo and the Harpies, Dionysus' smaller penalty, the thunderbolt, the recall) and for the
Liturgy, a position where it applies is made with the rules' own scenario builder, and

- the rules: what ``legal_actions`` lists each action at is what executing it charges (the
  side's Honor and Energy changes in its events, whatever their reason);
- the client: the page is given that position and the rules' ``legal`` list (as the service
  sends it), the player goes through the UI to the action, and the numbers it shows (the cost
  column or button, and the confirmation's before → after) are those of executing it. Nothing
  is sent: the page's ``send`` is replaced by a recorder, which also checks that the command
  chosen is the one measured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import pytest
from web_harness import random_setup_game

from olympus.rules import Faction, execute, legal_actions
from olympus.rules import events as ev
from olympus.scenario import build


@dataclass
class Case:
    name: str
    side: str
    given: dict[str, Any]
    command: dict[str, Any]  # the wire form of the action measured (its other fields: defaults)
    label: str = ""  # the words of its line in the chooser, when the destination has several
    extra: dict[str, Any] = field(default_factory=dict)


CASES = [
    Case(
        "sneak attack",
        "chthonians",
        {"units": {"Erinyes": 17, "Hermes": 18, "Hades": 1, "Zeus": 35}},
        {"type": "move", "units": ["Erinyes"], "to": 18, "use_power": True},
        "Sneak attack",
    ),
    Case(
        "Demeter's drain across the Styx",
        "olympians",
        {"units": {"Demeter": 9, "Zeus": 35, "Hades": 1}, "turn": "olympians"},
        {"type": "move", "units": ["Demeter"], "to": 8, "use_power": True},
        "Use Demeter's drain",
    ),
    Case(
        "Poseidon along the Styx",
        "olympians",
        {"units": {"Poseidon": 17, "Zeus": 35, "Hades": 1}, "turn": "olympians"},
        {"type": "move", "units": ["Poseidon"], "to": 24},
    ),
    Case(
        "Poseidon across the Styx",
        "olympians",
        {"units": {"Poseidon": 17, "Zeus": 35, "Hades": 1}, "turn": "olympians"},
        {"type": "move", "units": ["Poseidon"], "to": 16},
    ),
    Case(
        "Charon's ferry",
        "chthonians",
        {"units": {"Charon": 16, "Hades": 1, "Zeus": 35}},
        {"type": "move", "units": ["Charon"], "to": 17, "reveal": ["Charon"]},
        "Reveal Charon",
    ),
    Case(
        "a paid crossing beside Charon's ferry",
        "chthonians",
        {"units": {"Charon": 16, "Hades": 1, "Zeus": 35}},
        {"type": "move", "units": ["Charon"], "to": 17},
        "Move to region 17",
    ),
    Case(
        "Apollo's revealing flight",
        "olympians",
        {"units": {"Apollo": 13, "Zeus": 35, "Hades": 1}, "turn": "olympians"},
        {"type": "move", "units": ["Apollo"], "to": 2, "fly": True, "reveal": ["Apollo"]},
    ),
    Case(
        "the Harpies' flight onto an enemy",
        "chthonians",
        {"units": {"Harpies": 1, "Hades": 0, "Zeus": 35, "Ares": 26}, "revealed": ["Harpies"]},
        {"type": "move", "units": ["Harpies"], "to": 26, "fly": True},
    ),
    Case(
        "Dionysus revealed for a backward move",
        "olympians",
        {"units": {"Dionysus": 11, "Zeus": 35, "Hades": 1}, "turn": "olympians"},
        {"type": "move", "units": ["Dionysus"], "to": 19, "reveal": ["Dionysus"]},
        "Reveal Dionysus",
    ),
    Case(
        "the thunderbolt",
        "olympians",
        {"units": {"Zeus": 12, "Cronus": 11, "Hades": 1}, "turn": "olympians"},
        {"type": "thunderbolt", "region": 11},
    ),
    Case(
        "the recall",
        "chthonians",
        {"units": {"Hades": 1, "Zeus": 35}, "eliminated": ["Cronus"]},
        {"type": "recall", "unit": "Cronus"},
        "Cronus",
    ),
    Case(
        "the Liturgy",
        "olympians",
        {"units": {"Zeus": 35, "Hades": 1}, "turn": "olympians", "honor": {"olympians": 9}},
        {"type": "liturgy"},
    ),
]
IDS = [c.name for c in CASES]


def position(case: Case):
    state, _ = build(case.given, case.name)
    side = Faction(case.side)
    return state, side


def listed(state, side, wire: dict[str, Any]):
    """The listed action whose command is ``wire`` (its unset fields at their defaults)."""
    found = [
        a
        for a in legal_actions(state, side)
        if all(a.wire.get(k, v) == v for k, v in wire.items())
        and all(v in (False, [], None) for k, v in a.wire.items() if k not in wire)
    ]
    assert len(found) == 1, (wire, [a.wire for a in legal_actions(state, side)])
    return found[0]


def charged(state, side, action) -> tuple[int, int]:
    """The side's Honor change and Energy change (negative: spent) of executing ``action``."""
    events, _ = execute(state, action.command)
    honor = sum(e.delta for e in events if isinstance(e, ev.HonorChanged) and e.faction is side)
    energy = sum(e.delta for e in events if isinstance(e, ev.EnergyChanged) and e.faction is side)
    return honor, energy


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_each_power_is_listed_at_what_it_charges(case: Case) -> None:
    state, side = position(case)
    for action in legal_actions(state, side):  # every action of the position, not only one
        assert (action.honor, -action.energy) == charged(state, side, action), action.wire
    listed(state, side, case.command)  # the action the case is about is among them


POSITION = """
(spec) => {
  const g = window.olympus;
  const m = g.model;
  m.units = spec.units;
  m.eliminated = spec.eliminated;
  m.honor = spec.honor;
  m.energy = spec.energy;
  m.turn = spec.seat;
  m.combat = null;
  m.pending = null;
  g.legal = spec.legal;
  g.options = { ...g.options, seq: m.seq, actions: spec.legal };
  window.sent = null;
  g.send = (command) => { window.sent = command; g.render(); return true; };
  g.ui.selected.clear();
  g.ui.targeting = null;
  g.render();
}
"""
COST = re.compile(r"(?:Honor ([+−-]\d+)|no Honor cost)(?:, Energy ([+−-]\d+))?")
BEFORE_AFTER = re.compile(r"(Honor|Energy) (-?\d+) → (-?\d+)")


def number(text: str | None) -> int:
    return int(text.replace("−", "-")) if text else 0


def shown_cost(text: str) -> tuple[int, int]:
    """(Honor, Energy) changes of a cost line: "Honor −1, Energy −2", "no Honor cost, Energy +3"."""
    found = COST.search(text)
    assert found, text
    return number(found.group(1)), number(found.group(2))


def page_position(state, side: Faction, legal: list[dict[str, Any]]) -> dict[str, Any]:
    """What the seat ``side`` knows of ``state`` (R7), in the client model's shape."""
    units = []
    for unit, region in sorted(state.positions.items()):
        own = state.tokens and unit in state.positions and _faction(unit) is side
        entry = {"side": _faction(unit).value, "token": state.tokens[unit], "region": region}
        if own:
            entry |= {"name": unit, "revealed": unit in state.revealed}
        else:
            entry["name"] = unit if unit in state.revealed else None
        units.append(entry)
    return {
        "seat": side.value,
        "units": units,
        "eliminated": list(state.eliminated),
        "honor": {f.value: state.honor[f] for f in Faction},
        "energy": {f.value: state.energy[f] for f in Faction},
        "legal": legal,
    }


def _faction(unit: str) -> Faction:
    from olympus.rules import BY_NAME

    return BY_NAME[unit].faction


@pytest.fixture(scope="module")
def seats(browser, web_server):
    """One page per side, in a game of its own (Random Setup, the other seat over HTTP)."""
    pages: dict[str, Any] = {}
    contexts = []

    def new_page(name: str, path: str = "/", **options: Any):
        context = browser.new_context(
            base_url=web_server.url, viewport={"width": 1280, "height": 800}
        )
        contexts.append(context)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto(path)
        return page

    for side in ("olympians", "chthonians"):
        pages[side] = random_setup_game(new_page, web_server, side)
    yield pages
    for context in contexts:
        context.close()


def through_the_ui(page, case: Case, action) -> tuple[tuple[int, int], str]:
    """Go to ``action`` as a player would; the cost shown before choosing it (a destination's
    badge, a chooser's line or a button) and the confirmation's text ("" if none asked)."""
    c = action.wire
    shown: tuple[int, int] | None = None
    before_after = ""
    if c["type"] == "move":
        for unit in c["units"]:
            page.click(f"g.unit[data-unit='{unit}']")
        page.wait_for_selector(f"#game[data-selection='{','.join(c['units'])}']")
        if page.locator("#fly-toggle").count():
            page.set_checked("#fly-toggle", bool(c["fly"]))
        dest = page.locator(f"g.dest[data-region='{c['to']}']")
        dest.wait_for()
        page.click(f"g.dest[data-region='{c['to']}']")
        chooser = page.locator("dialog#chooser[open]")
        if case.label:
            line = chooser.locator("button.variant", has_text=case.label)
            shown = shown_cost(line.locator(".variant-cost").inner_text())
            line.click()
        else:
            assert chooser.count() == 0
            shown = (
                number(dest.get_attribute("data-honor")),
                -number(dest.get_attribute("data-energy")),
            )
    elif c["type"] == "thunderbolt":
        text = page.inner_text("#btn-thunderbolt")  # "Thunderbolt (Energy −6, Honor −1)"
        energy, honor = re.search(r"Energy ([+−-]\d+), Honor ([+−-]\d+)", text).groups()
        shown = (number(honor), number(energy))
        page.click("#btn-thunderbolt")
        page.click(f"g.dest[data-region='{c['region']}']")
    elif c["type"] == "recall":  # its list says before → after for all of them
        page.click("#btn-recall")
        chooser = page.locator("dialog#chooser[open]")
        before_after = chooser.locator("p").first.inner_text()
        line = chooser.locator("button.variant", has_text=case.label)
        shown = shown_cost(line.locator(".variant-cost").inner_text())
        line.click()
    elif c["type"] == "liturgy":
        text = page.inner_text("#btn-liturgy")  # "Liturgy (Energy +6, Honor −2)"
        energy, honor = re.search(r"Energy ([+−-]\d+), Honor ([+−-]\d+)", text).groups()
        shown = (number(honor), number(energy))
        page.click("#btn-liturgy")
    confirm = page.locator("dialog#confirm[open]")
    text = before_after
    page.wait_for_function("window.sent !== null || document.querySelector('dialog#confirm[open]')")
    if confirm.count():
        text = confirm.inner_text()
        confirm.locator("[data-action=ok]").click()
    page.wait_for_function("window.sent !== null")
    assert shown is not None
    return shown, text


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_client_shows_what_each_power_charges(seats, case: Case) -> None:
    state, side = position(case)
    action = listed(state, side, case.command)
    honor, energy = charged(state, side, action)
    page = seats[case.side]
    legal = [
        {"command": a.wire, "honor": a.honor, "energy": a.energy}
        for a in legal_actions(state, side)
    ]
    page.evaluate(POSITION, page_position(state, side, legal))
    page.wait_for_selector("#your-turn")

    shown, confirmation = through_the_ui(page, case, action)
    assert shown == (honor, energy), (case.name, shown)
    assert page.evaluate("window.sent") == action.wire
    # the confirmation says each quantity before → after, as executing it leaves them
    after = {
        "Honor": (state.honor[side], state.honor[side] + honor),
        "Energy": (state.energy[side], state.energy[side] + energy),
    }
    said = {kind: (int(a), int(b)) for kind, a, b in BEFORE_AFTER.findall(confirmation)}
    if honor < 0 or energy < 0:  # a cost: asked first, with every quantity that changes
        assert said == {k: v for k, v in after.items() if v[0] != v[1]}, confirmation
    else:  # a gain only: played at once, or asked for another reason with the same figures
        assert all(said[k] == after[k] for k in said), confirmation
