"""Playing the computer in the browser: the lobby creates the room, the computer's
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
# The computer's thinking is on screen from the moment our move's events arrive until its reply,
# no sooner than its reply delay after. Polling for it from the test can miss that window on a
# loaded box (a poll right after our click still sees our own turn), so the page itself records
# whether any render showed it.
WATCH_THINKING = f"""() => {{
  window.thinkingSeen = ({THINKING})();
  new MutationObserver(() => {{ window.thinkingSeen ||= ({THINKING})(); }})
    .observe(document.body, {{ subtree: true, childList: true, characterData: true }});
}}"""


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
    page.evaluate(WATCH_THINKING)
    started = time.monotonic()
    while player.actions < TURNS and not player.over():
        assert time.monotonic() - started < MAX_SECONDS, player.log[-5:]
        if not player.step():
            time.sleep(0.05)  # the computer has the move, or our last one is under way
    assert player.actions >= TURNS or player.over()
    page.wait_for_function("window.thinkingSeen", timeout=30_000)

    room = page.evaluate("window.olympus.room")
    lobby = new_page("lobby", "/")
    row = lobby.locator(f"tr[data-room='{room}']")
    row.wait_for()
    assert "Computer (easy)" in row.inner_text()
    assert new_page.errors == []  # type: ignore[attr-defined]


def test_a_setup_against_the_computer_offers_no_invite(new_page):
    """The setup of a game against the computer has no invite link, no "seat is taken" and no
    spectators' link: it names the computer and its level, as the side's box does where the
    opponent's name goes."""
    page = new_page("person", "/")
    page.check("#side-set input[value=chthonians]")
    page.select_option("#opt-opponent", "normal")
    page.click("#btn-create")
    page.wait_for_selector("#setup-panel")
    page.wait_for_selector("#opponent-computer")  # the room's summary has come
    setup = page.inner_text("#action-panel")
    assert "the computer (normal)" in page.inner_text("#opponent-computer")
    assert "against the computer (normal)" in page.inner_text("#where")
    assert page.locator("#invite-link").count() == 0
    assert "seat is taken" not in setup and "watch link" not in setup, setup
    assert page.locator("#action-panel a[href^='#/watch/']").count() == 0
    name = page.locator(".score.side-olympians .score-name")
    assert name.inner_text() == "Olympians · Computer (normal)"
    assert page.locator(".score.side-chthonians .computer").count() == 0

    page.click("#btn-random-setup")
    page.click("#btn-submit-setup")
    page.wait_for_selector("#game[data-phase=turn]", timeout=30_000)
    assert page.inner_text(".score.side-olympians .computer") == "Computer (normal)"


def test_a_setup_against_a_person_offers_the_invite(new_page):
    page = new_page("person", "/")
    page.check("#side-set input[value=olympians]")
    page.click("#btn-create")
    page.wait_for_selector("#setup-panel")
    page.wait_for_selector("#opponent-status[data-joined=false]")
    assert "#/join/" in page.input_value("#invite-link")
    assert "Nobody has taken the Chthonians seat yet." in page.inner_text("#opponent-status")
    assert page.locator("#action-panel a[href^='#/watch/']").count() == 1
    assert page.locator("#opponent-computer").count() == 0
