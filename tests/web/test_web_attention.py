"""Whose move it is, always: each side's box says what that side is doing, and the tab's title
and icon say "your move" to the player who is to act, and to nobody else."""

from __future__ import annotations

from test_web_game import _join_game

TITLE = "Storm over Olympus"
YOUR_MOVE = f"● Your move — {TITLE}"


BOX = "#status-panel .score"  # each side's box


def side_state(page, side: str) -> str:
    return page.get_attribute(f"{BOX}[data-side={side}]", "data-state")


def wait_side_state(page, side: str, state: str) -> None:
    page.wait_for_selector(f"{BOX}[data-side={side}][data-state={state}]")


def icon(page) -> str:
    return page.get_attribute("link[rel=icon]", "href")


def wait_title(page, title: str) -> None:
    page.wait_for_function("t => document.title === t", arg=title)


def test_the_tab_and_the_side_boxes_say_whose_move_it_is(new_page, web_server) -> None:
    _, olympians, chthonians = _join_game(new_page)
    # The setup: both have a setup to place, both are "to act".
    for page in (olympians, chthonians):
        wait_title(page, YOUR_MOVE)
        for side in ("olympians", "chthonians"):
            assert side_state(page, side) == "choosing"
    assert icon(olympians) == icon(chthonians)

    olympians.click("#btn-random-setup")
    olympians.click("#btn-submit-setup")
    olympians.wait_for_selector("#setup-waiting")
    wait_title(olympians, TITLE)  # sealed: nothing to do until the opponent is in
    assert side_state(olympians, "olympians") == "ready"
    wait_side_state(chthonians, "olympians", "ready")
    assert chthonians.title() == YOUR_MOVE
    assert icon(olympians) != icon(chthonians)

    chthonians.click("#btn-random-setup")
    chthonians.click("#btn-submit-setup")
    for page in (olympians, chthonians):
        page.wait_for_selector("#game[data-phase=turn]")
    wait_title(chthonians, YOUR_MOVE)  # the Chthonians begin
    wait_title(olympians, TITLE)
    for page in (olympians, chthonians):
        wait_side_state(page, "chthonians", "to-play")
        assert side_state(page, "olympians") == "waiting"
        assert "to play" in page.inner_text(
            "#status-panel .score[data-side=chthonians] .side-state"
        )
