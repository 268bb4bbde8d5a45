"""A first game: the rules in short on a page of their own (linked from the lobby and the game),
each character's power in the setup list, and a guide that points at the next thing to do during
the setup and the first turns, hidden with its button and remembered."""

from __future__ import annotations

from test_web_accessibility import violations
from test_web_game import _join_game

SECTIONS = {
    "rules-goal": "How to win",
    "rules-setup": "Setup",
    "rules-turn": "A turn",
    "rules-honor": "Honor",
    "rules-energy": "Energy",
    "rules-styx": "The Styx",
    "rules-combat": "Combat",
    "rules-powers": "Powers",
}


def powers(page) -> dict[str, str]:
    return page.evaluate(
        """async () => { const d = await import("./js/data.js");
        return Object.fromEntries(d.CHARACTERS.map((c) => [c.name, c.power])); }"""
    )


def test_the_rules_page(new_page) -> None:
    lobby = new_page("lobby", "/", viewport={"width": 1280, "height": 800})
    lobby.wait_for_selector("#my-games h2")
    assert lobby.get_attribute("#link-rules", "href") == "#/rules"
    with lobby.context.expect_page() as opened:  # a tab of its own: the lobby stays open
        lobby.click("#link-rules")
    rules = opened.value
    rules.wait_for_selector("#rules-page")
    for section, title in SECTIONS.items():
        assert rules.inner_text(f"#{section} h3") == title
    every = powers(rules)
    rows = rules.locator("#rules-powers tr[data-name]")
    assert rows.count() == 24
    for name, power in every.items():
        assert power in rules.inner_text(f"#rules-powers tr[data-name='{name}']")
    assert "Liturgy" in rules.inner_text("#rules-honor")
    assert "All-out Defense" in rules.inner_text("#rules-combat")
    rules.click("a[href='#/rules/rules-styx']")
    found = violations(rules)
    assert found == [], "\n".join(found)


def test_the_setup_list_shows_each_power_and_the_guide_leads_the_way(new_page) -> None:
    _, olympians, chthonians = _join_game(new_page)
    # each character's power, in the list itself
    olympians.wait_for_selector("li.setup-unit .power-line")
    every = powers(olympians)
    for item in olympians.locator("li.setup-unit").all():
        name = item.get_attribute("data-unit")
        line = item.locator(".power-line")
        assert line.is_visible() and line.inner_text() == every[name]
    assert olympians.get_attribute("#game a#link-rules-game", "href") == "#/rules"

    # the guide: the list first, then the submit button, then the wait
    olympians.wait_for_selector("#guide[data-step=setup-place]")
    assert olympians.locator(".setup-list.guide-target").count() == 1
    olympians.click("#btn-random-setup")
    olympians.wait_for_selector("#guide[data-step=setup-submit]")
    assert olympians.locator("#btn-submit-setup.guide-target").count() == 1
    olympians.click("#btn-submit-setup")
    olympians.wait_for_selector("#guide[data-step=setup-wait]")
    chthonians.click("#btn-random-setup")
    chthonians.click("#btn-submit-setup")
    # the first turn: the Chthonians are told to pick a unit, the Olympians to wait
    chthonians.wait_for_selector("#guide[data-step=select]")
    assert chthonians.locator("svg.board g.unit.movable.guide-target").count() == 1
    olympians.wait_for_selector("#guide[data-step=wait]")
    chthonians.locator("svg.board g.unit.movable.guide-target").click()
    chthonians.wait_for_selector("#guide[data-step=destination]")
    assert chthonians.locator("svg.board g.dest.guide-target").count() == 1

    # hidden with its button, and remembered: a reload, then another game of this browser
    chthonians.click("#btn-guide-hide")
    chthonians.wait_for_selector("#guide", state="detached")
    assert chthonians.locator(".guide-target").count() == 0
    assert chthonians.get_attribute("#toggle-guide", "aria-pressed") == "false"
    chthonians.reload()
    chthonians.wait_for_selector("#game[data-phase=turn]")
    chthonians.wait_for_selector("#toggle-guide[aria-pressed=false]")
    assert chthonians.locator("#guide").count() == 0
    # shown again from the board's tools
    chthonians.click("#toggle-guide")
    chthonians.wait_for_selector("#guide[data-step=select]")
    # the opponent's guide is its own
    assert olympians.locator("#guide[data-step=wait]").count() == 1
