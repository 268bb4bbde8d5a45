"""Whose move it is, always: each side's box says what that side is doing, and the tab's title
and icon say "your move" to the player who is to act, and to nobody else."""

from __future__ import annotations

from test_web_game import _join_game
from web_harness import liturgy

TITLE = "Storm over Olympus"
YOUR_MOVE = f"● Your move — {TITLE}"


BOX = "#status-panel .score"  # each side's box


def side_state(page, side: str) -> str:
    return page.get_attribute(f"{BOX}[data-side={side}]", "data-state")


def box_text(page, side: str) -> str:
    """What a side's box (in the status panel) says it is doing."""
    return page.inner_text(f"{BOX}[data-side={side}] .side-state")


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
    # each page's events and its `legal` may come in two frames: every state is waited for
    wait_side_state(olympians, "olympians", "ready")
    wait_side_state(chthonians, "olympians", "ready")
    wait_title(chthonians, YOUR_MOVE)
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
        assert "to play" in box_text(page, "chthonians")


# The Notification API, spied on: the page's ``Notification`` records what it is asked to show,
# and its permission starts as "default" (never asked) and becomes what the browser answers when
# asked (the context grants it). The tab's visibility is the test's to set.
SPY = """
(() => {
  const Real = window.Notification;
  let permission = "default";
  window.__notifications = [];
  window.__asked = 0;
  class Spy {
    constructor(title, options = {}) {
      window.__notifications.push({ title, body: options.body || "", hidden: document.hidden });
    }
    static get permission() { return permission; }
    static async requestPermission() {
      window.__asked += 1;
      permission = await Real.requestPermission();
      return permission;
    }
  }
  window.Notification = Spy;
  window.__hidden = false;
  Object.defineProperty(document, "hidden", { configurable: true, get: () => window.__hidden });
  Object.defineProperty(document, "visibilityState", {
    configurable: true, get: () => (window.__hidden ? "hidden" : "visible") });
})();
"""
HIDE = "h => { window.__hidden = h; document.dispatchEvent(new Event('visibilitychange')); }"


def test_a_notification_when_your_move_arrives_in_a_hidden_tab(new_page) -> None:
    def open_page(name: str, path: str = "/", **options: object):
        if name != "olympians":
            return new_page(name, path, **options)
        page = new_page(name, path, permissions=["notifications"], **options)
        page.add_init_script(SPY)
        page.reload()
        return page

    _, olympians, chthonians = _join_game(open_page)
    notes = lambda: olympians.evaluate("window.__notifications")  # noqa: E731

    # asked once, from the button, never on its own
    assert olympians.evaluate("window.__asked") == 0
    olympians.click("#btn-notify")
    olympians.wait_for_selector("#btn-notify", state="detached")  # nothing left to ask
    assert olympians.evaluate("[window.__asked, Notification.permission]") == [1, "granted"]

    for page in (olympians, chthonians):
        page.click("#btn-random-setup")
        page.click("#btn-submit-setup")
    # the tab is visible: its title says "your move", no notification
    liturgy(chthonians)
    wait_title(olympians, YOUR_MOVE)
    liturgy(olympians)
    assert notes() == []

    # hidden: the move that arrives is notified, once
    olympians.evaluate(HIDE, True)
    liturgy(chthonians)
    olympians.wait_for_function("window.__notifications.length > 0")
    wait_title(olympians, YOUR_MOVE)
    olympians.evaluate("window.olympus.render()")  # drawn again: still the same move
    [note] = notes()
    assert note["title"] == "Storm over Olympus: your move"
    assert note["body"] == "Turn 4 · Your turn" == olympians.inner_text("#turn-indicator")
    assert note["hidden"] is True
