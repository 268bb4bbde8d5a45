"""Icons are inline SVG, never emoji or pictographs: a browser without an emoji font (Debian's
Chromium here) draws those as empty boxes. The client's sources hold none, the pages show none
(lobby, setup, board, combat), and the icons are there, drawn."""

from __future__ import annotations

import re
from pathlib import Path

from test_web_combat import CHTHONIANS, OLYMPIANS, move, place
from test_web_game import _join_game

CLIENT = Path(__file__).resolve().parents[2] / "web_client"
# Miscellaneous Technical (⏱ ⏳), Miscellaneous Symbols and Dingbats (⚡ ⚔ ❦), the emoji planes
# (🔔) and the emoji presentation selector.
PICTOGRAPHS = re.compile("[\u2300-\u23ff\u2600-\u27bf\U0001f000-\U0001faff\ufe0f]")
PAGE_TEXT = """() => {
  const walker = document.createTreeWalker(document.documentElement, NodeFilter.SHOW_TEXT);
  const texts = [document.title];
  while (walker.nextNode()) texts.push(walker.currentNode.textContent);
  for (const el of document.querySelectorAll("*")) {
    for (const pseudo of ["::before", "::after"]) {
      const content = getComputedStyle(el, pseudo).content;
      if (content && content !== "none" && content !== "normal") texts.push(content);
    }
  }
  return texts.join("\\n");
}"""


def pictographs(page) -> list[str]:
    return sorted(set(PICTOGRAPHS.findall(page.evaluate(PAGE_TEXT))))


def test_the_sources_hold_no_pictograph() -> None:
    found = {
        str(path.relative_to(CLIENT)): sorted(set(PICTOGRAPHS.findall(path.read_text())))
        for path in sorted(CLIENT.rglob("*"))
        if path.suffix in (".js", ".css", ".html")
    }
    assert {name: chars for name, chars in found.items() if chars} == {}


def test_the_pages_show_svg_icons_only(new_page) -> None:
    lobby = new_page("lobby", "/")
    lobby.wait_for_selector("#my-games h2")
    assert pictographs(lobby) == []
    assert lobby.locator("#topbar svg.icon-energy").count() == 1

    _, olympians, chthonians = _join_game(new_page)
    olympians.wait_for_selector("g.dest")
    assert pictographs(olympians) == []
    place(olympians, OLYMPIANS)
    place(chthonians, CHTHONIANS)
    move(chthonians, "Cronus", 8)
    olympians.wait_for_selector("#game[data-my-turn=true]")
    assert olympians.locator(".score-honor svg.icon-honor").count() == 2
    assert olympians.locator(".score-energy svg.icon-energy").count() == 2
    assert olympians.locator("#btn-notify svg.icon-bell").count() == 1
    # an attack's destination is marked with the crossed swords, drawn
    olympians.click("g.unit[data-unit='Apollo']")
    olympians.wait_for_selector("#game[data-selection='Apollo']")
    olympians.check("#fly-toggle")
    olympians.wait_for_selector("g.dest.attack[data-region='8'] svg.dest-mark path")
    assert pictographs(olympians) == []
    olympians.click("#btn-clear")
    olympians.wait_for_selector("#game[data-selection='']")

    move(olympians, "Apollo", 8, fly=True)
    for page in (olympians, chthonians):
        page.wait_for_selector("#combat-title svg.icon-combat")
        page.wait_for_selector("svg.board svg.combat-mark path")
        page.wait_for_selector("#commit-form")
        assert pictographs(page) == []
    box = olympians.locator("svg.board svg.combat-mark").bounding_box()
    assert box is not None and box["width"] > 8 and box["height"] > 8  # drawn, not collapsed
