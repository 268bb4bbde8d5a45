"""The game's history in the game itself: the log grouped by turn, a past turn's position shown
on the board (read-only) from the log until the player returns to the live one, and the last
move marked on the board, its origin and its destination. A real game, by clicks."""

from __future__ import annotations

from test_web_accessibility import violations
from test_web_combat import CHTHONIANS, OLYMPIANS, move, place
from test_web_game import _join_game


def region_of(page, unit: str) -> str | None:
    return page.get_attribute(f"svg.board g.unit[data-unit='{unit}']", "data-region")


def test_the_log_by_turn_a_past_position_and_the_last_move(new_page) -> None:
    _, olympians, chthonians = _join_game(new_page)
    place(olympians, OLYMPIANS)
    place(chthonians, CHTHONIANS)
    move(chthonians, "Cronus", 8)  # turn 1
    olympians.wait_for_selector("#game[data-my-turn=true]")
    # the last move, marked: where it came from and where it went
    olympians.wait_for_selector("svg.board .last-from[data-region='1']")
    assert olympians.locator("svg.board .last-to[data-region='8']").count() == 1
    move(olympians, "Zeus", 28)  # turn 2
    move(chthonians, "Cerberus", 7)  # turn 3
    move(olympians, "Zeus", 27)  # turn 4
    olympians.wait_for_selector("#game[data-turn-number='5']")
    olympians.wait_for_selector("svg.board .last-to[data-region='27']")

    # the log, by turn: each past turn a heading of its own, the live one said to be now
    log = olympians.locator("#event-log")
    log.locator("li.log-group[data-turn='1']").wait_for()
    assert "moved" in log.locator("li.log-group[data-turn='1']").inner_text()
    assert "(now)" in log.locator("li.log-group[data-turn='5']").inner_text()
    assert log.locator("li.log-group[data-turn='5'] button.log-turn").count() == 0

    # a past turn's position, read-only: Zeus where he stood after turn 2
    log.locator("button.log-turn[data-turn='2']").click()
    olympians.wait_for_selector("#game[data-viewing='2']")
    olympians.wait_for_selector("#viewing")
    assert region_of(olympians, "Zeus") == "28"
    assert olympians.locator("svg.board g.unit.movable, svg.board g.dest").count() == 0
    found = violations(olympians)
    assert found == [], "\n".join(found)
    # the game goes on meanwhile; the board stays on turn 2 until the player returns
    move(chthonians, "Cronus", 9)  # turn 5
    olympians.wait_for_selector("#game[data-turn-number='6']")
    assert olympians.get_attribute("#game", "data-viewing") == "2"
    assert region_of(olympians, "Zeus") == "28"
    olympians.click("#btn-live")
    olympians.wait_for_selector("#game[data-viewing='']")
    assert region_of(olympians, "Zeus") == "27"
    olympians.wait_for_selector("svg.board g.unit.movable")
    assert olympians.locator("svg.board .last-from[data-region='8']").count() == 1
    assert olympians.locator("svg.board .last-to[data-region='9']").count() == 1

    # a spectator arriving now: the earlier turns come from the public log, and each can be
    # looked at as a spectator saw it (a token in region 28 after turn 2, none now)
    room = olympians.evaluate("window.olympus.room")
    late = new_page("late", f"/#/watch/{room}")
    late.wait_for_selector("#event-log li:has-text('Earlier in this game')")
    late.locator("#event-log button.log-turn[data-turn='2']").click()
    late.wait_for_selector("#game[data-viewing='2']")
    assert "as a spectator saw it" in late.inner_text("#viewing")
    assert late.locator("svg.board g.unit[data-region='28']").count() == 1
    late.click("#btn-live")
    late.wait_for_selector("#game[data-viewing='']")
    assert late.locator("svg.board g.unit[data-region='28']").count() == 0
