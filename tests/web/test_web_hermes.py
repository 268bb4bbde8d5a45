"""Hermes' walk through the UI, every step's cost the rules' own: in a real game (set up by
clicks, the service judging everything), the Olympians walk Hermes several steps (forward,
across the Styx, back across it, backward, into an attack). Each step's figures are read off
the board as it is offered (the first further step from ``legal``, each later one from the
server's answer to the page's ``steps`` request); their sum, the path's running total and the
confirmation's before → after must be what the service then charges: the Honor and Energy
changes its events bring to the page's model.
"""

from __future__ import annotations

import pytest
from test_web_combat import CHTHONIANS, OLYMPIANS, move, place
from test_web_costs import number, shown_cost
from test_web_game import _join_game

# Hermes starts in region 19 (OLYMPIANS); after the Chthonians' first move Hypnos and Cronus
# stand in 8. Each walk: its first step, then its further steps.
WALKS = {
    "two steps across the Styx": (18, [17, 16]),
    "three steps into an attack": (18, [17, 16, 8]),
    "four steps there and back": (18, [17, 16, 17, 18]),
}


def figures(locator) -> tuple[int, int]:
    """(Honor change, Energy change) a destination on the board shows."""
    return number(locator.get_attribute("data-honor")), -number(
        locator.get_attribute("data-energy")
    )


def drawn(page, path: list[int], words: str) -> None:
    """Wait until the panel shows Hermes' path ``path`` and then ``words`` (the screen is
    drawn anew after each step and again when its next steps are priced)."""
    page.wait_for_function(
        "([path, words]) => { const p = document.querySelector('#hermes-path');"
        " return p && p.textContent.includes(`path: ${path} (`)"
        " && p.textContent.includes(words); }",
        arg=[" → ".join(map(str, path)), words],
    )


def side_now(page) -> tuple[int, int]:
    return tuple(
        page.evaluate(
            "() => [window.olympus.model.honor.olympians, window.olympus.model.energy.olympians]"
        )
    )


@pytest.mark.parametrize("walk", list(WALKS), ids=list(WALKS))
def test_each_step_shown_is_what_the_walk_is_charged(new_page, walk: str) -> None:
    first, steps = WALKS[walk]
    _, olympians, chthonians = _join_game(new_page)
    place(olympians, OLYMPIANS)
    place(chthonians, CHTHONIANS)
    move(chthonians, "Cronus", 8)  # Cronus joins Hypnos
    page = olympians
    page.wait_for_selector("#game[data-my-turn=true]")
    page.wait_for_function(
        "() => { const g = window.olympus; return g.options && g.options.seq === g.model.seq; }"
    )
    page.click("g.unit[data-unit='Hermes']")
    page.wait_for_selector("#game[data-selection='Hermes']")
    dest = page.locator(f"g.dest[data-region='{first}']")
    shown = [figures(dest)]
    dest.click()
    page.locator("dialog#chooser[open] button.variant:has-text('Keep going')").click()
    for n, step in enumerate(steps):
        # offered once the rules have priced it (the page asks the server after each step)
        drawn(page, [first, *steps[:n]], "Choose the next step")
        offered = page.locator(f"g.dest.dest-step[data-region='{step}']")
        shown.append(figures(offered))
        offered.click()
    drawn(page, [first, *steps], "")
    honor = sum(h for h, _ in shown)
    energy = sum(e for _, e in shown)
    assert shown_cost(page.inner_text("#hermes-path")) == (honor, energy)
    assert "≈" not in page.text_content("#board-holder")

    before = side_now(page)
    page.click("#btn-hermes-finish")
    confirm = page.locator("dialog#confirm[open]")
    text = confirm.inner_text()
    assert f"Hermes → {first} → {' → '.join(map(str, steps))}" in text
    if honor < 0:
        assert f"Honor {before[0]} → {before[0] + honor}" in text, text
    if energy:
        assert f"Energy {before[1]} → {before[1] + energy}" in text, text
    confirm.locator("[data-action=ok]").click()

    # the service played it: the page's model holds its events, Hermes where the walk ended
    page.wait_for_function(
        "r => { const g = window.olympus; return !g.inflight"
        " && g.model.units.some((u) => u.name === 'Hermes' && u.region === r); }",
        arg=steps[-1],
    )
    after = side_now(page)
    assert (after[0] - before[0], after[1] - before[1]) == (honor, energy), shown
    assert energy < 0  # every walk here crosses the Styx: not a walk of free steps only
