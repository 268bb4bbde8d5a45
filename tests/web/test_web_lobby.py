"""The lobby's variants: a Challenge where the joiner picks the side (the creator waits with a
host token, then gets the other seat), with Open Combat and Random Setup; and the page for a
game this browser holds no seat in."""

from __future__ import annotations

import pytest


# The host polls for its seat, and the service answers 409 (no_opponent_yet) until the guest
# has picked a side: Chromium logs each such answer.
@pytest.mark.console_errors(
    r"^host: Failed to load resource: the server responded with a status of 409 "
    r"\(Conflict\) \(\S+/rooms/[\w-]+/join\)$"
)
def test_challenge_open_combat_random_setup(new_page):
    host = new_page("host", "/")
    host.check("#opt-open-combat")
    host.check("#opt-random-setup")
    host.check("#opt-challenge")
    assert host.is_disabled("#side-set input[value=olympians]")
    host.select_option("#opt-challenge-value", "2")
    host.fill("#opt-move-seconds", "600")
    host.click("#btn-create")
    host.wait_for_selector("#host-wait")
    link = host.input_value("#invite-link")
    room = link.rsplit("/", 1)[1]

    guest = new_page("guest", "/")
    guest.wait_for_selector(f"#open-games tr[data-room='{room}']")
    assert "Challenge" in guest.inner_text(f"#open-games tr[data-room='{room}']")
    guest.click(f"#open-games tr[data-room='{room}'] a:has-text('Join')")
    guest.wait_for_selector("#join-page")
    assert "you pick your side" in guest.inner_text("#join-page")
    guest.click("#btn-join-olympians")

    # the host is seated on the other side as soon as the guest has picked
    for page, seat in ((guest, "olympians"), (host, "chthonians")):
        page.wait_for_selector(f"#game[data-seat={seat}][data-phase=turn]", timeout=15_000)
        # Open Combat: 10 Honor each; the Challenge gives the Chthonians +2
        assert page.inner_text(".score.side-olympians .honor-value") == "10"
        assert page.inner_text(".score.side-chthonians .honor-value") == "12"
        assert "Open Combat" in page.inner_text("#status-panel")
    # once a move is made, the clock of the side to move is shown (a Liturgy costs Honor: confirm)
    host.wait_for_selector("#game[data-my-turn=true]")
    host.click("#btn-liturgy")
    host.click("dialog#confirm [data-action=ok]")
    for page in (host, guest):
        page.wait_for_selector(".score.side-olympians .clock:has-text('to move')")
    assert guest.inner_text(".score.side-chthonians .honor-value") == "10"


def test_no_seat_page_offers_join_and_watch(new_page):
    creator = new_page("creator", "/")
    creator.click("#btn-create")
    creator.wait_for_selector("#setup-panel")
    room = creator.input_value("#invite-link").rsplit("/", 1)[1]
    other = new_page("other", f"/#/play/{room}")
    other.wait_for_selector("#no-seat")
    assert other.locator(f"#no-seat a[href='#/join/{room}']").count() == 1
    assert other.locator(f"#no-seat a[href='#/watch/{room}']").count() == 1
