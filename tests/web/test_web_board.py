"""The board is readable without colour: realms are labelled and filled with distinct patterns;
the client's copy of the board is the service's."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
REALMS = {"underworld": "Underworld", "exterior": "Exterior world", "olympus": "Olympus"}


def test_client_board_is_the_service_board():
    client = json.loads((ROOT / "web_client" / "data" / "board.json").read_text())
    service = json.loads((ROOT / "service" / "olympus" / "data" / "board.json").read_text())
    assert client == service


def test_realms_are_labelled_and_patterned(new_page):
    page = new_page("player", "/")
    page.click("#btn-create")
    # the game's own board: the lobby may show a featured game's board until the game is drawn
    page.wait_for_selector("#game svg.board .region")

    labels = {
        el.get_attribute("data-realm"): el.text_content()
        for el in page.locator("#game svg.board text.realm-label").all()
    }
    assert labels == REALMS

    fills: dict[str, set[str]] = {}
    for el in page.locator("#game svg.board .region").all():
        fills.setdefault(el.get_attribute("data-realm"), set()).add(el.get_attribute("fill"))
    assert fills == {realm: {f"url(#pat-{realm})"} for realm in REALMS}
    # each pattern draws a motif of its own over its background, not just a flat colour
    motifs = set()
    for realm in REALMS:
        pattern = page.locator(f"#game svg.board pattern#pat-{realm}")
        assert pattern.locator("rect").count() == 1
        shapes = pattern.locator("path, circle, line")
        assert shapes.count() >= 1
        motifs.add(shapes.first.evaluate("e => e.tagName + (e.getAttribute('d') || '')"))
    assert len(motifs) == 3
    # the legend bands use the same patterns, labelled
    bands = {
        el.get_attribute("data-realm"): el.get_attribute("fill")
        for el in page.locator("#game rect.realm-band").all()
    }
    assert bands == {realm: f"url(#pat-{realm})" for realm in REALMS}

    # the Styx, its dry way and both bases are drawn and named
    assert page.locator("#game svg.board line.styx-water").count() == 7
    assert page.locator("#game svg.board line.dry-way").count() == 2
    texts = " ".join(page.locator("#game svg.board text").all_text_contents())
    for words in ("Styx", "dry way", "Olympian Palace", "Tartarus"):
        assert words in texts

    # the region numbers (the log names regions by them) are shown by default; a toggle hides them
    assert page.locator("#game svg.board .region-number").count() == 36
    assert page.get_attribute("#toggle-numbers", "aria-pressed") == "true"
    page.click("#toggle-numbers")
    page.wait_for_selector("#toggle-numbers[aria-pressed=false]")
    assert page.locator("#game svg.board .region-number").count() == 0
