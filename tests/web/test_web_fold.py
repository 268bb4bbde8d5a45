"""Whose turn it is and each side's Honor and Energy stay in view at 1280×800, 1366×768 and
1920×1080, in every phase: the setup, a turn, a combat's commitments and the choice after a
round. The combat panel does not push them down, and they stay when the side panel is scrolled
to its end (to reach a button further down). Measured from the DOM's boxes in a real
Chromium."""

from __future__ import annotations

import pytest
from test_web_combat import CHTHONIANS, OLYMPIANS, commit, move, place
from test_web_game import _join_game

SIZES = [
    {"width": 1280, "height": 800},
    {"width": 1366, "height": 768},
    {"width": 1920, "height": 1080},
]
IN_VIEW = """() => {
  const top = document.getElementById("topbar").getBoundingClientRect().bottom;
  const boxes = ["#turn-indicator", ".score.side-olympians", ".score.side-chthonians"]
    .map((q) => [q, document.querySelector(q)]);
  const out = boxes.filter(([, el]) => { if (!el) return true;
    const r = el.getBoundingClientRect();
    return r.height === 0 || r.top < top - 1 || r.bottom > innerHeight + 1
      || r.left < 0 || r.right > innerWidth; }).map(([q]) => q);
  return out;
}"""
SCROLL_SIDE = """(to) => { const side = document.querySelector("aside.side");
  side.scrollTop = to === "end" ? side.scrollHeight : 0;
  return side.scrollTop; }"""


def in_view(page, phase: str) -> None:
    """In view as the page opens (the side panel at its top), and with it scrolled to its end."""
    page.evaluate(SCROLL_SIDE, "top")
    assert page.evaluate(IN_VIEW) == [], phase
    page.evaluate(SCROLL_SIDE, "end")
    assert page.evaluate(IN_VIEW) == [], f"{phase}, the side panel scrolled to its end"
    page.evaluate(SCROLL_SIDE, "top")


@pytest.mark.parametrize("viewport", SIZES, ids=lambda v: f"{v['width']}x{v['height']}")
def test_turn_and_stocks_stay_in_view_in_every_phase(new_page, viewport) -> None:
    sized = lambda name, path: new_page(name, path, viewport=viewport)  # noqa: E731
    _, olympians, chthonians = _join_game(sized)
    olympians.wait_for_selector("g.dest")
    in_view(olympians, "setup")
    place(olympians, OLYMPIANS)
    olympians.wait_for_selector("#setup-waiting")
    in_view(olympians, "setup sealed")
    place(chthonians, CHTHONIANS)
    chthonians.wait_for_selector("#game[data-my-turn=true]")
    in_view(chthonians, "turn")
    move(chthonians, "Cronus", 8)
    move(olympians, "Apollo", 8, fly=True)
    for page in (olympians, chthonians):
        page.wait_for_selector("#commit-form")
        in_view(page, "combat")
    commit(olympians, "standard", 3, 3, "= 3")
    in_view(olympians, "combat, committed")
    commit(chthonians, "standard", 0, 2, "Hypnos 2")
    chthonians.wait_for_selector("#choice[data-kind=remove] button.choice-remove_unit")
    in_view(chthonians, "choice")
    olympians.wait_for_selector("#choice-waiting")
    in_view(olympians, "the opponent's choice")
