"""The coach in the browser (client.md): the hint button against the computer, and a finished
game's replay with the win-chance graph, the marked moves, and a point that shows its position
with the move the search preferred beside the one played."""

from __future__ import annotations

import random
import time

from test_web_combat import OLYMPIANS, move, place
from web_driver import UiPlayer

MAX_SECONDS = 180


def test_hint_then_the_analysis_of_a_game_lost_to_the_computer(new_page) -> None:
    page = new_page("person", "/")
    page.check("#side-set input[value=chthonians]")
    page.check("#opt-random-setup")
    page.check("#opt-open-combat")  # 10 Honor each: a few Liturgies end it
    page.select_option("#opt-opponent", "easy")
    page.click("#btn-create")
    page.wait_for_selector("#game[data-seat=chthonians][data-my-turn=true] #btn-liturgy")

    page.click("#btn-hint")
    page.wait_for_selector("#hint-text:has-text('Hint:')", timeout=60_000)
    room = page.evaluate("window.olympus.room")

    # Liturgies only: the Chthonians' Honor runs out
    player = UiPlayer(page, "chthonians", random.Random(3), liturgy_after=0)
    started = time.monotonic()
    while not player.over():
        assert time.monotonic() - started < MAX_SECONDS, player.log[-5:]
        if not player.step():
            time.sleep(0.05)
    page.wait_for_selector("#game-over")

    page.goto(f"/#/replay/{room}")
    page.wait_for_selector("#win-chart .win-point", timeout=120_000)
    assert page.locator("#win-chart .win-point").count() >= 3
    assert page.locator("#replay-log .mark").count() >= 1
    # Liturgies down to 0 Honor lose the game: one of them is marked (a combat the computer
    # started may be marked too)
    liturgy = "[aria-label*='the Chthonians: Perform the Liturgy']"
    marked = page.locator(
        f"#win-chart .win-point.mark-blunder{liturgy}, #win-chart .win-point.mark-mistake{liturgy}"
    )
    labels = page.locator("#win-chart .win-point").evaluate_all(
        "ps => ps.map((p) => p.getAttribute('aria-label'))"
    )
    assert marked.count() >= 1, labels

    before = page.get_attribute("#replay", "data-index")
    marked.first.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#coach-preferred")
    assert page.inner_text("#coach-played") == "Perform the Liturgy"
    assert page.inner_text("#coach-preferred") not in ("", "Perform the Liturgy")
    assert page.get_attribute("#replay", "data-mode") == "events"
    assert page.get_attribute("#replay", "data-index") != before
    assert new_page.errors == []  # type: ignore[attr-defined]


def test_the_hint_is_offered_in_the_combat_panel(new_page) -> None:
    """Against the computer, a commitment's Hint is in the combat panel (and only there, one
    button on the page), and answers with a commitment as the actions panel's Hint does."""
    page = new_page("person", "/")
    page.check("#side-set input[value=olympians]")
    page.select_option("#opt-opponent", "easy")
    page.click("#btn-create")
    page.wait_for_selector("#setup-panel")
    place(page, OLYMPIANS)
    started = time.monotonic()
    # the computer moves first; then Apollo flies onto one of its units (or it attacked first,
    # and the Olympians are to commit, not to take a turn)
    page.wait_for_selector("#game[data-my-turn=true], #combat #commit-form", timeout=120_000)
    if not page.locator("#commit-form").count():
        page.click("g.unit[data-unit='Apollo']")
        page.wait_for_selector("#game[data-selection='Apollo']")
        page.check("#fly-toggle")
        enemy = page.locator("g.dest.attack").first.get_attribute("data-region")
        page.click("#btn-clear")
        page.wait_for_selector("#game[data-selection='']")
        move(page, "Apollo", int(enemy), fly=True)
    page.wait_for_selector("#combat #commit-form", timeout=60_000)
    assert page.locator("#btn-hint").count() == 1
    # a hint is for one position: asked once the computer has sealed its commitment
    page.wait_for_selector(
        "#combat .side-chthonians .commit-state[data-committed=true]", timeout=60_000
    )
    page.click("#combat #btn-hint")
    page.wait_for_selector("#combat #hint-text:has-text('Hint: Commit')", timeout=60_000)
    assert time.monotonic() - started < MAX_SECONDS
    # minimised, the panel gives the Hint back to the actions panel
    page.click("#btn-combat-minimize")
    page.wait_for_selector("#combat.minimized")
    assert page.locator("#btn-hint").count() == 1
    assert page.locator("#combat #btn-hint").count() == 0
    assert new_page.errors == []  # type: ignore[attr-defined]
