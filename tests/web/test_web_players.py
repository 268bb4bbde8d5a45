"""Players in the browser (Debian's Chromium): sign up, sign out, sign in on another browser
and find the same games; two signed-in players press "Play now" and meet in one room; a rated
game's end shows both rating changes, the profiles show the new rating and the game, the
leaderboard lists them; the lobby leads with the three ways to play."""

from __future__ import annotations

import re
import uuid

import pytest

PASSWORD = "a long enough password"


def unique(name: str) -> str:
    return f"{name} {uuid.uuid4().hex[:6]}"


def enter(page, form: str, name: str) -> None:
    """Sign up or in (``form``: "signup" or "signin") on the account page, back to the lobby."""
    page.goto("/#/account")
    page.fill(f"#{form}-form-name", name)
    page.fill(f"#{form}-form-password", PASSWORD)
    page.click(f"#{form}-form button[type=submit]")
    page.wait_for_selector("#quick-play")


def sign_up(page, name: str) -> None:
    enter(page, "signup", name)
    assert page.inner_text("#account-name") == name


# Signed out, the laptop's guest tries the account's name on purpose: Chromium logs the 409.
@pytest.mark.console_errors(
    r"^laptop: Failed to load resource: the server responded with a status of 409 "
    r"\(Conflict\) \(\S+/rooms\)$"
)
def test_an_account_keeps_its_games_on_another_browser(new_page):
    name = unique("Ann")
    laptop = new_page("laptop", "/")
    # a guest's game first: kept once the guest signs up
    laptop.click("#btn-invite")
    laptop.wait_for_url(re.compile(r"#/play/"))
    guest_room = laptop.evaluate("window.olympus.room")
    sign_up(laptop, name)
    laptop.click("#btn-invite")
    laptop.wait_for_url(re.compile(r"#/play/"))
    room = laptop.evaluate("window.olympus.room")
    laptop.goto("/#/account")
    laptop.click("#btn-sign-out")
    laptop.wait_for_selector("#signin-form")
    assert laptop.inner_text("#account-bar").startswith("Sign in")
    # a guest does not play under an account's name
    laptop.goto("/#/")
    laptop.fill("#player-name", name.upper())
    laptop.click("#btn-invite")
    laptop.wait_for_selector(".toast-error:has-text('sign in to play under it')")
    assert "#/play/" not in laptop.url

    phone = new_page("phone", "/")
    enter(phone, "signin", name)
    for held in (room, guest_room):
        phone.wait_for_selector(f"#my-games tr[data-room='{held}']")
    phone.click(f"#my-games tr[data-room='{room}'] a.button")
    phone.wait_for_selector("#game[data-phase=setup]")
    assert phone.evaluate("window.olympus.seat") in ("olympians", "chthonians")


def test_play_now_pairs_two_players_whose_rated_game_changes_their_ratings(new_page):
    names = unique("Cleo"), unique("Dido")
    first, second = new_page("first", "/"), new_page("second", "/")
    for page, name in zip((first, second), names, strict=True):
        sign_up(page, name)
        page.select_option("#quick-clock", "none")
        page.check("#quick-open-combat")
        assert page.is_checked("#quick-rated")
    first.click("#btn-play-now")
    first.wait_for_selector("#seek-status")
    second.click("#btn-play-now")
    for page in (first, second):
        page.wait_for_selector("#game[data-phase=setup]")
    room = first.evaluate("window.olympus.room")
    assert second.evaluate("window.olympus.room") == room
    seats = {first.evaluate("window.olympus.seat"), second.evaluate("window.olympus.seat")}
    assert seats == {"olympians", "chthonians"}
    assert first.locator(f".player-name a:has-text('{names[1]}')").count() == 1  # linked
    assert "Open Combat" in first.inner_text(".variants")  # the pool's variant

    first.click("#btn-resign")
    first.click("dialog#confirm[open] [data-action=ok]")
    for page in (first, second):
        page.wait_for_selector("#game-over #rating-changes", timeout=30_000)
    assert re.search(r"Your rating: 1500 → \d+ \(−\d+\)", first.inner_text("#rating-changes"))
    assert re.search(r"Your rating: 1500 → \d+ \(\+\d+\)", second.inner_text("#rating-changes"))

    for page, name, won in ((first, names[0], False), (second, names[1], True)):
        page.goto(f"/#/players/{name}")
        page.wait_for_selector("#profile #rating-graph circle")
        rating = int(page.inner_text("#profile-rating").rstrip("?"))
        assert (rating > 1500) == won
        assert page.locator(f"#recent-games a[href='#/replay/{room}']").count() == 1
    second.click("#link-leaderboard")
    second.wait_for_selector("#leaderboard")
    board = second.inner_text("#leaderboard")
    assert names[0] in board and names[1] in board
    assert board.index(names[1]) < board.index(names[0])  # the winner above


def test_the_lobby_leads_with_three_ways_to_play_and_keeps_the_custom_form_behind(new_page):
    page = new_page("guest", "/", custom_open=False)
    page.wait_for_selector("#quick-play")
    for card in ("#card-play-now", "#card-computer", "#card-invite"):
        assert page.is_visible(card)
    assert page.is_visible("#btn-sign-in-to-play")  # a guest is asked to sign in first
    assert not page.is_visible("#btn-create")  # the full form is behind "Custom game"
    page.click("#custom-game > summary")
    page.wait_for_selector("#btn-create", state="visible")
    page.wait_for_selector("#lobby-counts:has-text('live game')")
    page.wait_for_selector("#quick-level option[value=hard]:has-text('≈')", state="attached")
    page.click("#btn-play-computer")
    page.wait_for_selector("#game[data-seat]")


def test_the_players_pages_pass_axe(new_page):
    from test_web_accessibility import violations

    name = unique("Eva")
    page = new_page("player", "/#/account")
    page.wait_for_selector("#signin-form")
    found = {"sign in": violations(page)}
    sign_up(page, name)
    page.wait_for_selector("#lobby-counts:has-text('online')")
    found["lobby, signed in"] = violations(page)
    page.goto("/#/account")
    page.wait_for_selector("#password-form")
    found["account"] = violations(page)
    page.goto(f"/#/players/{name}")
    page.wait_for_selector("#profile #rating-graph")
    found["profile"] = violations(page)
    page.goto("/#/leaderboard")
    page.wait_for_selector("#leaderboard")
    found["leaderboard"] = violations(page)
    assert found == {p: [] for p in found}, found
