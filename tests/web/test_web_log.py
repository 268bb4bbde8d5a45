"""The log of a long game: it shows the newest line when the page opens again (a reload, the
tab closed and reopened, the Log tab chosen again), it is reachable by keyboard (the scrolling
panel takes the focus, and the arrow keys scroll it), and axe finds nothing on the page of a
long game, its log scrolling. The game is a real one: Liturgies, turn after turn."""

from __future__ import annotations

from test_web_accessibility import violations
from web_harness import liturgy

SIZE = {"width": 1280, "height": 800}
AT_BOTTOM = """() => { const p = document.getElementById("tab-panel");
  return p.scrollHeight > p.clientHeight && p.scrollTop + p.clientHeight >= p.scrollHeight - 2; }"""
SCROLLS = """() => { const p = document.getElementById("tab-panel");
  return p.scrollHeight > p.clientHeight; }"""


def long_game(new_page, turns: int = 12):
    """Two players set up at random and perform Liturgies for ``turns`` turns."""
    ann = new_page("ann", "/", viewport=SIZE)
    ann.check("input[name=side][value=olympians]")
    ann.click("#btn-create")
    ann.wait_for_selector("#setup-panel")
    link = ann.input_value("#invite-link")
    bob = new_page("bob", link, viewport=SIZE)
    bob.click("#btn-join-chthonians")
    for page in (ann, bob):
        page.wait_for_selector("#setup-panel")
        page.click("#btn-random-setup")
        page.click("#btn-submit-setup")
    for turn in range(turns):
        liturgy(bob if turn % 2 == 0 else ann)
    return ann, bob


LINES = "() => document.querySelectorAll('#event-log li').length"


def test_a_long_games_log_opens_at_its_newest_line_and_is_keyboard_reachable(new_page) -> None:
    ann, bob = long_game(new_page)
    page = bob
    page.wait_for_selector("#game[data-my-turn=true]")
    page.wait_for_function(AT_BOTTOM)  # it scrolls, and shows its newest line
    liturgy(bob)

    # by keyboard: the log panel takes the focus after its tabs, and its keys scroll it
    assert page.get_attribute("#tab-panel", "tabindex") == "0"
    page.focus("#tab-log")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "tab-panel"
    page.keyboard.press("Home")
    page.wait_for_function("document.getElementById('tab-panel').scrollTop === 0")
    # a reader scrolled back stays where they are while the game goes on
    lines = page.evaluate(LINES)
    liturgy(ann)
    page.wait_for_function(f"() => ({LINES})() > {lines}")
    page.wait_for_selector("#game[data-my-turn=true]")
    assert page.evaluate("document.getElementById('tab-panel').scrollTop") == 0
    page.keyboard.press("End")
    page.wait_for_function(AT_BOTTOM)

    # reopened: a reload, the tab closed and opened again, the Log tab chosen again
    page.evaluate("document.getElementById('tab-panel').scrollTop = 0")
    page.reload()
    page.wait_for_selector("#game[data-my-turn=true]")
    page.wait_for_function(AT_BOTTOM)
    url = page.url
    context = page.context
    page.close()
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector("#game[data-my-turn=true]")
    page.wait_for_function(AT_BOTTOM)
    page.evaluate("document.getElementById('tab-panel').scrollTop = 0")
    page.click("#tab-characters")
    page.wait_for_selector(".characters")
    page.click("#tab-log")
    page.wait_for_selector("#event-log")
    page.wait_for_function(AT_BOTTOM)

    # the arrow keys choose a tab, Tab goes on to its panel
    page.focus("#tab-log")
    page.keyboard.press("ArrowRight")
    page.wait_for_selector("#tab-characters[aria-selected=true]")
    assert page.evaluate("document.activeElement.id") == "tab-characters"
    page.keyboard.press("ArrowLeft")
    page.wait_for_selector("#tab-log[aria-selected=true]")
    page.wait_for_function(AT_BOTTOM)

    # axe on the page of a long game, its log scrolling, then on the replay once it is over
    ann.wait_for_function(SCROLLS)
    found = {"a long game": violations(ann)}
    pages = {"olympians": ann, "chthonians": page}
    for _ in range(60):
        if ann.locator("#game-over").count():
            break
        liturgy(pages[ann.get_attribute("#game", "data-turn") or ""])
    ann.wait_for_selector("#game-over")
    room = ann.evaluate("window.olympus.room")
    ann.goto(f"/#/replay/{room}")
    ann.wait_for_selector("#replay-log li")
    found["the replay"] = violations(ann)
    assert found == {name: [] for name in found}, "\n".join(
        f"{name}: {v}" for name, vs in found.items() for v in vs
    )
