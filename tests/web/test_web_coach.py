"""The coach in the browser (client.md): the hint button against the computer, and a finished
game's replay with the win-chance graph, the marked moves, and a point that shows its position
with the move the search preferred beside the one played."""

from __future__ import annotations

import random
import time

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
    marked = page.locator("#win-chart .win-point.mark-blunder, #win-chart .win-point.mark-mistake")
    assert marked.count() >= 1  # Liturgies down to 0 Honor lose the game
    assert page.locator("#replay-log .mark").count() >= 1
    label = marked.first.get_attribute("aria-label") or ""
    assert "the Chthonians: Perform the Liturgy" in label, label

    before = page.get_attribute("#replay", "data-index")
    marked.first.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector("#coach-preferred")
    assert page.inner_text("#coach-played") == "Perform the Liturgy"
    assert page.inner_text("#coach-preferred") not in ("", "Perform the Liturgy")
    assert page.get_attribute("#replay", "data-mode") == "events"
    assert page.get_attribute("#replay", "data-index") != before
    assert new_page.errors == []  # type: ignore[attr-defined]
