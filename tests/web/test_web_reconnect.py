"""A lost connection: the page says so, retries with backoff, and resumes the same seat and
position once the server is back (same data dir: the game survived the restart)."""

from __future__ import annotations

import pytest
from web_harness import Server

RETRY_NOW = """() => {
  const button = document.querySelector("#conn-banner:not([hidden]) button");
  if (button && button.textContent === "Retry now") button.click();
}"""
COUNTDOWN_FROM_THIRD = r"""() => {
  const text = document.querySelector("#conn-banner").textContent;
  const m = /Reconnecting in \d+ s \(attempt (\d+)\)/.exec(text);
  return m !== null && Number(m[1]) >= 3;
}"""


@pytest.fixture
def own_server(tmp_path):
    server = Server(tmp_path).start()
    yield server
    server.stop()


# While the server is down, each attempt to reconnect fails, and Chromium logs it; so does
# each read of the room's summary (its spectator count) meanwhile.
@pytest.mark.console_errors(
    r"^(olympians|chthonians): WebSocket connection to 'ws://127\.0\.0\.1:\d+/ws' failed: "
    r"Error in connection establishment: net::ERR_CONNECTION_REFUSED \(\S+/js/connection\.js\)$",
    r"^(olympians|chthonians): Failed to load resource: net::ERR_CONNECTION_REFUSED "
    r"\(http://127\.0\.0\.1:\d+/rooms/[A-Za-z0-9_-]+\)$",
)
def test_connection_lost_and_resumed(new_page, own_server):
    url = own_server.url
    olympians = new_page("olympians", f"{url}/")
    olympians.check("input[name=side][value=olympians]")
    olympians.check("#opt-random-setup")
    olympians.click("#btn-create")
    olympians.wait_for_selector("#setup-waiting")
    link = olympians.input_value("#invite-link")
    chthonians = new_page("chthonians", link)
    chthonians.click("#btn-join-chthonians")
    for page in (olympians, chthonians):  # Random Setup: the service draws both setups
        page.wait_for_selector("#game[data-phase=turn]")
    seq = int(olympians.get_attribute("#game", "data-seq"))

    own_server.stop()
    olympians.wait_for_selector("#conn-banner[data-state=reconnecting]:has-text('Connection lost')")
    assert "Reconnecting" in olympians.inner_text("#conn-status")
    # exponential backoff: the attempts go on, further and further apart. The banner counts
    # down to the next attempt and shows it under way for a moment; the stop may take long
    # enough on a loaded box that the third is past, so any countdown from the third on will do.
    olympians.wait_for_function(COUNTDOWN_FROM_THIRD, timeout=10_000)

    own_server.start()  # the same port and data dir
    for page in (olympians, chthonians):
        # "Retry now" if the page still offers it. Checked and clicked in one turn of the page's
        # own event loop: the page may reconnect by itself (and hide the banner) at any moment,
        # and the banner redraws its button every 500 ms.
        page.evaluate(RETRY_NOW)
        page.wait_for_selector("#game[data-connection=open]", timeout=20_000)
        assert page.locator("#conn-banner").is_hidden()
    assert olympians.get_attribute("#game", "data-seat") == "olympians"
    assert int(olympians.get_attribute("#game", "data-seq")) == seq

    # the game goes on: the Chthonians move, the Olympians see it
    turn = int(olympians.get_attribute("#game", "data-turn-number"))
    chthonians.wait_for_selector("#game[data-my-turn=true]")
    chthonians.click("#btn-liturgy")
    chthonians.click("dialog#confirm [data-action=ok]")
    # the turn's events and the Olympians' `legal` may come in two frames: wait for both
    olympians.wait_for_selector(
        f"#game[data-my-turn=true]:not([data-turn-number='{turn}'])", timeout=10_000
    )
