"""Display names: typed in the lobby or on the invite page, kept in the
browser, sent when joining, refused with the server's sentence when they break the rules (no
"Computer"), and shown to the opponent and to spectators."""

from __future__ import annotations

import pytest


# The name refused on purpose: Chromium logs the join's 422.
@pytest.mark.console_errors(
    r"^bob: Failed to load resource: the server responded with a status of 422 "
    r"\(Unprocessable Entity\) \(\S+/rooms/[\w-]+/join\)$"
)
def test_names_are_kept_checked_and_shown(new_page) -> None:
    ann = new_page("ann", "/")
    ann.fill("#player-name", "Ann")
    ann.check("input[name=side][value=olympians]")
    ann.click("#btn-create")
    ann.wait_for_selector("#setup-panel")
    link = ann.input_value("#invite-link")
    room = link.rsplit("/", 1)[1]

    bob = new_page("bob", link)
    assert "Ann (Olympians)" in bob.inner_text("#join-page")
    bob.fill("#player-name", "C0mputer")
    bob.click("#btn-join-chthonians")
    bob.wait_for_selector(".toast-error:has-text(\"computer opponent's\")")
    assert bob.locator("#join-page").count() == 1  # not seated
    bob.fill("#player-name", "Bob")
    bob.click("#btn-join-chthonians")
    bob.wait_for_selector("#setup-panel")

    for page in (ann, bob):
        page.wait_for_selector(".player-name[data-side=chthonians]:has-text('Bob')")
        assert "Ann" in page.inner_text(".player-name[data-side=olympians]")
    watcher = new_page("watcher", f"/#/watch/{room}")
    watcher.wait_for_selector(".player-name[data-side=olympians]:has-text('Ann')")
    assert "Bob" in watcher.inner_text(".player-name[data-side=chthonians]")

    # the lobby lists the players; the name is remembered by the browser
    ann.goto("/#/")
    ann.wait_for_selector(f"tr[data-room='{room}'] td.players:has-text('Ann (Olympians)')")
    assert "Bob (Chthonians)" in ann.inner_text(f"tr[data-room='{room}'] td.players")
    ann.reload()
    assert ann.input_value("#player-name") == "Ann"
