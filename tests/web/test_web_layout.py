"""A board that uses the screen: at 1280×720 and 1920×1080 the board is as tall as
the window allows, the Palace is whole, the chips are legible, the region numbers are shown
and no chip covers them, and the side panel takes the rest of the width; on a narrow screen the
panel goes below the board. The zoom buttons, Ctrl + wheel and a two-finger pinch enlarge it.
Everything is measured from the DOM's boxes in a real Chromium."""

from __future__ import annotations

import pytest
from test_web_game import _join_game

WIDE = [{"width": 1280, "height": 720}, {"width": 1920, "height": 1080}]

MEASURE = """() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom,
            width: r.width, height: r.height}; };
  const svg = document.querySelector('svg.board');
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return {
    topbar: box(document.getElementById('topbar')),
    board: box(svg),
    holder: box(document.getElementById('board-holder')),
    side: box(document.querySelector('aside.side')),
    palace: box(document.querySelector('svg.board .region[data-region="35"]')),
    chips: [...document.querySelectorAll('svg.board g.unit rect.chip')].map(box),
    fonts: [...document.querySelectorAll('svg.board g.unit text.chip-label')]
      .map((t) => Number(t.getAttribute('font-size')) * scale),
    numbers: [...document.querySelectorAll('svg.board text.region-number')].map(box),
    scrollWidth: document.documentElement.scrollWidth,
  };
}"""


def _overlap(a: dict, b: dict) -> bool:
    return a["left"] < b["right"] and b["left"] < a["right"] and a["top"] < b["bottom"] and (
        b["top"] < a["bottom"]
    )


def _started_game(new_page, viewport: dict):
    sized = lambda name, path: new_page(name, path, viewport=viewport)  # noqa: E731
    _, olympians, chthonians = _join_game(sized)
    for page in (olympians, chthonians):
        page.click("#btn-random-setup")
        page.click("#btn-submit-setup")
    olympians.wait_for_selector("#game[data-phase=turn]")
    olympians.wait_for_selector("svg.board g.unit[data-side=chthonians]")
    return olympians, chthonians


@pytest.mark.parametrize("viewport", WIDE, ids=lambda v: f"{v['width']}x{v['height']}")
def test_the_board_fills_the_height_and_the_panel_the_width(new_page, viewport) -> None:
    page, _ = _started_game(new_page, viewport)
    m = page.evaluate(MEASURE)
    width, height = viewport["width"], viewport["height"]
    available = height - m["topbar"]["bottom"]
    # as tall as the window allows, all of it visible
    assert m["board"]["top"] >= m["topbar"]["bottom"]
    assert m["board"]["bottom"] <= height
    assert m["board"]["height"] >= 0.92 * available, m
    # the Palace, roof included, is inside the board and the window
    assert m["palace"]["top"] >= m["board"]["top"] and m["palace"]["top"] >= m["topbar"]["bottom"]
    # legible chips: ≥ 17 px tall with ≥ 9.5 px text at 1280×720 (the issue saw 13 px and 7 px)
    assert len(m["chips"]) == 18
    assert min(c["height"] for c in m["chips"]) >= 17 * height / 720 * 0.95, m["chips"]
    assert min(m["fonts"]) >= 9.5, m["fonts"]
    # the side panel beside the board, using the rest of the width, no horizontal scrolling
    assert m["side"]["left"] >= m["board"]["right"]
    assert m["side"]["top"] < m["board"]["top"] + 20
    assert m["side"]["right"] >= width - 30
    assert m["scrollWidth"] <= width
    # region numbers are shown by default, and no chip covers one
    assert len(m["numbers"]) == 36
    for number in m["numbers"]:
        assert not any(_overlap(number, chip) for chip in m["chips"]), number
    # on a 1920 px screen the log has a column of its own beside the player's panels
    if width >= 1920:
        log = page.locator(".side-log").bounding_box()
        main = page.locator(".side-main").bounding_box()
        assert log["x"] >= main["x"] + main["width"]


def test_on_a_narrow_screen_the_panel_goes_below(new_page) -> None:
    page, _ = _started_game(new_page, {"width": 760, "height": 1000})
    m = page.evaluate(MEASURE)
    assert m["side"]["top"] >= m["board"]["bottom"] - 1
    assert m["board"]["width"] >= 700  # the board takes the width
    assert m["scrollWidth"] <= 760


def _board_width(page) -> float:
    return page.evaluate("document.querySelector('svg.board').getBoundingClientRect().width")


def test_zoom_buttons_ctrl_wheel_and_pinch(new_page) -> None:
    page, _ = _started_game(new_page, {"width": 1280, "height": 720, "has_touch": True})
    fit = _board_width(page)
    assert page.is_disabled("#btn-zoom-out") and page.is_disabled("#btn-zoom-fit")

    page.click("#btn-zoom-in")
    page.wait_for_selector("#board-holder[data-zoom='1.25']")
    assert _board_width(page) == pytest.approx(fit * 1.25, rel=0.02)
    # the holder scrolls: the board is bigger than its box, which stays where it was
    holder = page.locator("#board-holder")
    assert holder.evaluate("h => h.scrollWidth > h.clientWidth && h.scrollHeight > h.clientHeight")
    assert page.inner_text("#btn-zoom-fit") == "125%"
    page.click("#btn-zoom-fit")
    page.wait_for_selector("#board-holder[data-zoom='1']")
    assert _board_width(page) == pytest.approx(fit, rel=0.01)

    # Ctrl + wheel (what a trackpad pinch sends) zooms at the pointer; a plain wheel does not
    box = holder.bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, -200)
    assert page.get_attribute("#board-holder", "data-zoom") == "1"
    page.keyboard.down("Control")
    page.mouse.wheel(0, -200)
    page.keyboard.up("Control")
    page.wait_for_function("document.getElementById('board-holder').dataset.zoom > 1.5")
    assert _board_width(page) > fit * 1.5

    # two fingers moving apart on a touch screen
    page.click("#btn-zoom-fit")
    page.wait_for_selector("#board-holder[data-zoom='1']")
    cdp = page.context.new_cdp_session(page)
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2

    def touch(kind: str, spread: float) -> None:
        points = [] if kind == "touchEnd" else [
            {"x": cx - spread, "y": cy, "id": 1},
            {"x": cx + spread, "y": cy, "id": 2},
        ]
        cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": points})

    touch("touchStart", 40)
    for spread in (50, 60, 70, 80):
        touch("touchMove", spread)
    touch("touchEnd", 0)
    page.wait_for_function("document.getElementById('board-holder').dataset.zoom >= 1.9")
    assert _board_width(page) == pytest.approx(fit * 2, rel=0.05)
