"""Review and rematch, through the UI: a short Open Combat game (Liturgies
drain the Chthonians' Honor), a spectator arriving late and after the end sees the history in
the log, both players take the rematch (same options, sides swapped, the names follow their
players), and the replay's move list jumps on a click and steps with the arrow keys."""

from __future__ import annotations

from web_harness import liturgy


def test_late_spectators_rematch_and_replay(new_page) -> None:
    ann = new_page("ann", "/")
    ann.fill("#player-name", "Ann")
    ann.check("input[name=side][value=olympians]")
    ann.check("#opt-open-combat")  # 10 Honor each: five Liturgies end it
    ann.click("#btn-create")
    ann.wait_for_selector("#setup-panel")
    link = ann.input_value("#invite-link")
    room = link.rsplit("/", 1)[1]
    bob = new_page("bob", link)
    bob.fill("#player-name", "Bob")
    bob.click("#btn-join-chthonians")
    for page in (ann, bob):
        page.wait_for_selector("#setup-panel")
        page.click("#btn-random-setup")
        page.click("#btn-submit-setup")

    bob.wait_for_selector("#game[data-my-turn=true] #btn-liturgy")
    assert bob.locator("#btn-hint").count() == 0  # hints: against the computer only
    for _ in range(2):
        liturgy(bob)
        liturgy(ann)
    # a spectator arriving now sees the game so far, not just "Position loaded"
    late = new_page("late", f"/#/watch/{room}")
    late.wait_for_selector("#event-log li:has-text('Earlier in this game')")
    log = late.inner_text("#event-log")
    assert log.count("performed a Liturgy") == 4 and "Turn 1" in log

    for _ in range(2):
        liturgy(bob)
        liturgy(ann)
    liturgy(bob)  # the Chthonians' Honor reaches 0
    for page in (ann, bob, late):
        page.wait_for_selector("#game-over")

    # after the end, a newcomer sees the whole game in the log
    after = new_page("after", f"/#/watch/{room}")
    after.wait_for_selector("#event-log li:has-text('everything revealed')")
    assert after.inner_text("#event-log").count("performed a Liturgy") == 9
    assert after.locator("#btn-rematch").count() == 0  # spectators have no seat to swap

    # the rematch: Ann asks, Bob is offered it; same options, sides swapped
    ann.click("#btn-rematch")
    ann.wait_for_selector("#game[data-seat=chthonians][data-phase=setup]")
    rematch = ann.url.rsplit("/", 1)[1]
    assert rematch != room
    bob.wait_for_selector("#btn-rematch[data-offered=true]")
    bob.click("#btn-rematch")
    bob.wait_for_selector("#game[data-seat=olympians][data-phase=setup]")
    assert bob.url.endswith(f"/#/play/{rematch}")
    for page in (ann, bob):
        page.wait_for_selector(".player-name[data-side=chthonians]:has-text('Ann')")
        assert "Bob" in page.inner_text(".player-name[data-side=olympians]")
        assert "Open Combat" in page.inner_text("#status-panel")
        assert page.inner_text(".score.side-olympians .honor-value") == "10"

    # the replay, by move: the setup, then a step per turn (its action, combat and choices)
    ann.goto(f"/#/replay/{room}")
    ann.wait_for_selector("#replay[data-mode=moves] #replay-log li")
    board = ann.locator("svg.board").bounding_box()
    moves = ann.locator("#replay-log").bounding_box()
    assert moves["x"] >= board["x"] + board["width"]  # beside the board
    assert ann.locator("#replay-log li").count() == 10  # the setup and 9 Liturgies
    ann.locator("#replay-log li[data-move='3'] button").click()
    ann.wait_for_selector("#replay[data-move='3']")
    item = ann.locator("#replay-log li[data-move='3']")
    assert "current" in item.get_attribute("class")
    assert "Turn 3" in item.inner_text() and "Liturgy" in item.inner_text()
    assert "Move 4 / 10" in ann.inner_text("#replay-counter")
    # the full reveal at every step, not only at the end: both sides' units named mid-game
    for side in ("olympians", "chthonians"):
        assert ann.locator(f"svg.board g.unit.side-{side}").count() > 0
    assert ann.locator("svg.board g.unit.hidden").count() == 0
    ann.keyboard.press("ArrowRight")
    ann.wait_for_selector("#replay[data-move='4']")
    ann.keyboard.press("ArrowLeft")
    ann.keyboard.press("ArrowLeft")
    ann.wait_for_selector("#replay[data-move='2']")
    # event by event, still: every event a step
    ann.click("#replay-by-event")
    ann.wait_for_selector("#replay[data-mode=events]")
    assert ann.locator("#replay-log li").count() > 30
    ann.locator("#replay-log li[data-index='6'] button").click()
    ann.wait_for_selector("#replay[data-index='6']")
    assert "current" in ann.get_attribute("#replay-log li[data-index='6']", "class")
    ann.keyboard.press("ArrowRight")
    ann.wait_for_selector("#replay[data-index='7']")
    ann.keyboard.press("End")
    ann.wait_for_selector("#replay-text:has-text('win')")
    # the full reveal: every unit on the final board is named
    assert ann.locator("svg.board g.unit.hidden").count() == 0
