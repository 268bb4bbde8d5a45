"""Games over days: the lobby's "Your games" lists each game with the
opponent's side and name, whose move it is ("your move" first), the turn and the time since the
last move, and updates live; clocks of days are offered when creating a game."""

from __future__ import annotations

from web_harness import liturgy


def _new_game(page, side: str, clock: str | None = None) -> str:
    page.goto("/#/")
    page.wait_for_selector("#create-form")
    page.check(f"input[name=side][value={side}]")
    if clock:
        page.select_option("#opt-clock", clock)
    page.click("#btn-create")
    page.wait_for_selector("#setup-panel")
    return page.input_value("#invite-link")


def _join_and_set_up(ann, bob, link: str, side: str) -> str:
    room = link.rsplit("/", 1)[1]
    bob.goto(link)
    bob.click(f"#btn-join-{side}")
    bob.wait_for_selector("#setup-panel")  # the seat is saved: going to the room finds it
    for page in (ann, bob):
        page.goto(f"/#/play/{room}")
        page.wait_for_selector("#btn-random-setup")
        page.click("#btn-random-setup")
        page.click("#btn-submit-setup")
    for page in (ann, bob):
        page.wait_for_selector("#game[data-phase=turn]")
    return room


def row(page, room: str):
    return page.locator(f"#my-games tr[data-room='{room}']")


def test_your_games_say_whose_move_and_update_live(new_page) -> None:
    ann = new_page("ann", "/")
    ann.fill("#player-name", "Ann")
    bob = new_page("bob", "/")
    bob.fill("#player-name", "Bob")
    bob.dispatch_event("#player-name", "change")

    # a game over days: 1 day per move
    link = _new_game(ann, "olympians", clock="day")
    ann.wait_for_selector("#status-panel .variants:has-text('1 day per move')")
    slow = _join_and_set_up(ann, bob, link, "chthonians")  # the Chthonians (Bob) begin
    fast = _join_and_set_up(ann, bob, _new_game(ann, "chthonians"), "olympians")  # Ann begins

    ann.goto("/#/")
    ann.wait_for_selector(f"#my-games tr[data-room='{slow}'] td.whose:has-text('their move')")
    rows = ann.locator("#my-games tbody tr")
    assert rows.nth(0).get_attribute("data-room") == fast  # your move first
    assert rows.nth(0).get_attribute("data-your-move") == "true"
    assert "your move" in row(ann, fast).inner_text()
    assert "Olympians (Bob)" in row(ann, fast).inner_text()
    assert "Chthonians (Bob)" in row(ann, slow).inner_text()
    assert row(ann, slow).locator("td.turn").inner_text() == "1"
    assert row(ann, slow).locator("td.moved").inner_text() == "just now"

    # Bob moves in the slow game: Ann's open lobby says it is her move there, without a reload
    bob.goto(f"/#/play/{slow}")
    liturgy(bob)
    ann.wait_for_selector(f"#my-games tr[data-room='{slow}'][data-your-move=true]", timeout=20_000)
    assert row(ann, slow).locator("td.turn").inner_text() == "2"
    assert ann.locator("#my-games tbody tr[data-your-move=true]").count() == 2


def test_clock_presets_fill_the_clocks(new_page) -> None:
    page = new_page("p", "/")
    page.select_option("#opt-clock", "days3")
    assert page.input_value("#opt-move-seconds") == str(3 * 86400)
    assert page.input_value("#opt-forfeit-seconds") == str(7 * 86400)
    assert "3 days" in page.inner_text("#create-form")
    page.select_option("#opt-clock", "none")
    assert page.input_value("#opt-move-seconds") == ""
