"""Playing the computer in the browser (issue 12): the lobby creates the room, the computer's
seat shows as "Computer (easy)", its thinking is shown while it has the move, and a few turns
are played through the UI against it (the bots worker of the real ``olympus serve``)."""

from __future__ import annotations

import random
import time

from web_driver import UiPlayer

TURNS = 3
MAX_SECONDS = 120
THINKING = """() => [...document.querySelectorAll('.score.side-chthonians .side-state')]
  .some((e) => e.textContent.includes('the computer is thinking'))"""
THINKING_OR_OURS = f"""() => ({THINKING})()
  || document.querySelector('#game').dataset.myTurn === 'true'
  || document.querySelector('#game').dataset.phase !== 'turn'"""


def test_a_few_turns_against_the_computer(new_page):
    page = new_page("person", "/")
    page.check("#side-set input[value=olympians]")
    page.check("#opt-random-setup")
    page.select_option("#opt-opponent", "easy")
    page.click("#btn-create")
    page.wait_for_selector("#game[data-seat=olympians][data-phase=turn]", timeout=30_000)
    assert page.inner_text(".score.side-chthonians .computer") == "Computer (easy)"
    assert page.locator(".score.side-olympians .computer").count() == 0

    player = UiPlayer(page, "olympians", random.Random(5), liturgy_after=2)
    started = time.monotonic()
    thinking_seen = 0
    while player.actions < TURNS and not player.over():
        assert time.monotonic() - started < MAX_SECONDS, player.log[-5:]
        acted_before = player.actions
        if player.step() and player.actions > acted_before and not player.over():
            # the computer has the move now (unless a combat or a choice asks us first): it
            # answers no sooner than its reply delay, so its thinking is on screen before
            # the move comes back to us
            page.wait_for_function(THINKING_OR_OURS, timeout=30_000)
            thinking_seen += page.evaluate(THINKING)
        else:
            time.sleep(0.05)
    assert player.actions >= TURNS or player.over()
    assert thinking_seen >= 1, player.log

    room = page.evaluate("window.olympus.room")
    lobby = new_page("lobby", "/")
    row = lobby.locator(f"tr[data-room='{room}']")
    row.wait_for()
    assert "Computer (easy)" in row.inner_text()
    assert new_page.errors == []  # type: ignore[attr-defined]
