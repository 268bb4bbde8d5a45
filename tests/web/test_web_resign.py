"""Ending a game early in the browser: Resign and Abort below the seat's actions, each asked
first in the confirmation dialog (Cancel has the focus; Escape keeps playing); Abort only while
the server says it may be (before both sides' first move); the end shown to the seat and to a
spectator: "The Chthonians resigned", "Game aborted — no result"."""

from __future__ import annotations

from web_harness import liturgy, random_setup_game

COMPUTER_SECONDS = 60_000


def test_resigning_against_the_computer_asks_first(new_page):
    page = new_page("person", "/")
    page.check("#side-set input[value=chthonians]")
    page.check("#opt-random-setup")
    page.select_option("#opt-opponent", "easy")
    page.click("#btn-create")
    page.wait_for_selector("#game[data-seat=chthonians][data-phase=turn][data-my-turn=true]")
    # before anyone moved: both ways out
    page.wait_for_selector("#end-game-holder #btn-abort")
    assert page.locator("#end-game-holder #btn-resign").count() == 1
    liturgy(page)
    # the computer's first move (which may start a combat): from now on the game can no
    # longer be aborted
    page.wait_for_selector("#btn-abort", state="detached", timeout=COMPUTER_SECONDS)
    page.wait_for_selector("#end-game-holder #btn-resign")

    page.click("#btn-resign")
    dialog = page.locator("dialog#confirm[open]")
    dialog.wait_for()
    assert dialog.locator("h2").inner_text() == "Resign the game?"
    assert "The computer will win at once" in dialog.inner_text()
    assert page.evaluate("document.activeElement.dataset.action") == "cancel"
    page.keyboard.press("Escape")  # not this time
    dialog.wait_for(state="detached")
    assert page.get_attribute("#game", "data-phase") != "over"

    page.click("#btn-resign")
    page.click("dialog#confirm[open] [data-action=ok]")
    page.wait_for_selector("#game[data-phase=over] #game-over")
    assert page.inner_text("#gameover-title") == "Game over: The Chthonians resigned"
    assert "You lost." in page.inner_text("#game-over")
    assert page.locator("#btn-resign, #btn-abort").count() == 0
    assert "You resigned: the Olympians win." in page.inner_text("#tab-panel")


def test_aborting_before_both_moved_ends_the_game_without_a_result(new_page, web_server):
    page = random_setup_game(new_page, web_server, "chthonians")
    room = page.evaluate("window.olympus.room")
    watcher = new_page("spectator", f"/#/watch/{room}")
    watcher.wait_for_selector("#game[data-seat=spectator][data-phase=turn]")
    assert watcher.locator("#btn-resign, #btn-abort").count() == 0  # a spectator cannot

    page.click("#btn-abort")
    dialog = page.locator("dialog#confirm[open]")
    dialog.wait_for()
    assert dialog.locator("h2").inner_text() == "Abort the game?"
    assert "nobody wins or loses" in dialog.inner_text()
    dialog.locator("[data-action=cancel]").click()
    dialog.wait_for(state="detached")
    assert page.get_attribute("#game", "data-phase") == "turn"

    page.click("#btn-abort")
    page.click("dialog#confirm[open] [data-action=ok]")
    for screen in (page, watcher):
        screen.wait_for_selector("#game[data-phase=over] #game-over")
        assert screen.inner_text("#gameover-title") == "Game aborted — no result"
        assert "Nobody wins or loses." in screen.inner_text("#game-over")
        assert "Game aborted — no result" in screen.inner_text("#tab-panel")
    assert page.locator("#btn-resign, #btn-abort").count() == 0
