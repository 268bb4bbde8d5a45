"""No stale panel: the end of a game closes the combat panel (and every dialog), and the line
"Your opponent commits first" appears only when the rules say so (Open Combat), naming why.

The combats are real (Apollo flies into Hypnos and Cronus, as in test_web_combat.py). The game's
end in the middle of a combat is the server's ``game_ended`` event as a seat receives it (a
leader eliminated in a round ends the game there), handed to the page's message handler:
random games seldom end inside a combat.
"""

from __future__ import annotations

from test_web_combat import CHTHONIANS, OLYMPIANS, commit, move, place
from test_web_game import _join_game

GAME_ENDS = """
() => {
  const g = window.olympus;
  g.onMessage({ type: "event", seq: g.model.seq + 1,
    event: { t: "game_ended", v: 1, result: "olympians", reason: "chthonian_leaders_gone" } });
}
"""


def open_combat_game(new_page):
    """Like ``_join_game``, with Open Combat."""
    olympians = new_page("olympians", "/")
    olympians.check("input[name=side][value=olympians]")
    olympians.check("#opt-open-combat")
    olympians.click("#btn-create")
    olympians.wait_for_selector("#setup-panel")
    link = olympians.input_value("#invite-link")
    chthonians = new_page("chthonians", link)
    chthonians.click("#btn-join-chthonians")
    chthonians.wait_for_selector("#setup-panel")
    return olympians, chthonians


def test_the_end_of_the_game_closes_the_combat_panel(new_page) -> None:
    _, olympians, chthonians = _join_game(new_page)
    place(olympians, OLYMPIANS)
    place(chthonians, CHTHONIANS)
    move(chthonians, "Cronus", 8)
    move(olympians, "Apollo", 8, fly=True)
    commit(olympians, "standard", 3, 3, "= 3")
    chthonians.wait_for_selector("#commit-form")
    # without Open Combat nobody commits first: the line is never shown
    assert olympians.locator("#combat-opponent-first").count() == 0
    assert chthonians.locator("#combat-opponent-first").count() == 0
    # a dialog open when the game ends closes with it
    chthonians.check("#maneuver-all_out_defense")
    chthonians.click("#btn-commit")
    chthonians.wait_for_selector("dialog#confirm[open]")

    for page in (olympians, chthonians):
        page.evaluate(GAME_ENDS)
        page.wait_for_selector("#game[data-phase=over]")
        page.wait_for_selector("#game-over")
        assert page.locator("#combat").count() == 0
        assert page.locator("dialog[open]").count() == 0
        status = page.inner_text("#status-panel")
        assert "choosing" not in status and "committed" not in status, status
        assert "Game over" in page.inner_text("#turn-indicator")
    assert chthonians.get_attribute("#game", "data-inflight") == "false"  # nothing was sent


def test_the_side_that_waits_in_open_combat_is_told_why(new_page) -> None:
    olympians, chthonians = open_combat_game(new_page)
    place(olympians, OLYMPIANS)
    place(chthonians, CHTHONIANS)
    move(chthonians, "Cronus", 8)
    move(olympians, "Apollo", 8, fly=True)
    # round 1: the attacker commits first; the defender waits, told why
    waiting = chthonians.locator("#combat-opponent-first")
    assert "Your opponent commits first this round (Open Combat)" in waiting.inner_text()
    olympians.wait_for_selector("#commit-form")
    assert olympians.locator("#combat-opponent-first").count() == 0
    commit(olympians, "standard", 3, 3, "= 3")
    # now the defender commits, having seen the attacker's choice; the attacker is not told
    # that its opponent commits first
    chthonians.wait_for_selector("#commit-form")
    olympians.wait_for_selector("#combat-waiting")
    assert olympians.locator("#combat-opponent-first").count() == 0
