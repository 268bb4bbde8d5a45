"""A decision that lets the enemy win says so and asks, computed from the
seat's own view only (web_client/js/danger.js, docs/client.md "Honor").

Random games seldom reach these positions, so, as in test_web_powers.py, the page's model (its
units, Honor, Energy, the eliminated) and its ``legal`` list are set by hand: the client draws
the board and the warnings from nothing else. Nothing is sent: every dialog is cancelled, and
the test checks what it said. Each position has a move where the warning fires and one where it
does not (a move with a cost, so that a dialog opens either way and says which it is)."""

from __future__ import annotations

from web_harness import random_setup_game

POSITION = """
(spec) => {
  const g = window.olympus;
  const m = g.model;
  m.units = spec.units.map(([side, name, token, region]) =>
    ({ side, token, region, name, ...(side === g.seat ? { revealed: false } : {}) }));
  m.eliminated = spec.eliminated;
  m.honor = { ...m.honor, ...spec.honor };
  m.energy = { ...m.energy, ...spec.energy };
  const move = ([unit, to, honor, energy]) => ({ command: { type: "move", units: [unit], to,
    fly: false, reveal: [], use_power: false, steps: [] }, honor, energy });
  g.legal = [...spec.moves.map(move), ...(spec.extra || [])];
  g.render();
}
"""


def set_position(page, **spec) -> None:
    page.evaluate(POSITION, spec)
    page.wait_for_selector("#your-turn")


def click_move(page, unit: str, region: int):
    """Select ``unit`` (alone), click ``region``: the confirmation dialog must open."""
    if page.locator("#btn-clear").count():  # a cancelled move keeps its selection
        page.click("#btn-clear")
        page.wait_for_selector("#game[data-selection='']")
    page.click(f"g.unit[data-unit='{unit}']")
    page.wait_for_selector(f"#game[data-selection='{unit}']")
    page.click(f"g.dest[data-region='{region}']")
    return page.locator("dialog#confirm[open]")


def cancel(page) -> None:
    page.click("dialog#confirm[open] [data-action=cancel]")
    page.wait_for_selector("dialog#confirm[open]", state="detached")
    assert page.get_attribute("#game", "data-inflight") == "false"  # nothing was sent


def test_a_chthonian_leader_next_to_the_palace_is_warned_of(new_page, web_server) -> None:
    page = random_setup_game(new_page, web_server, "olympians")
    units = [
        ["olympians", "Zeus", 1, 35],
        ["olympians", "Apollo", 2, 12],
        ["olympians", "Ares", 3, 5],
        ["chthonians", None, 7, 21],  # hidden, next to the Palace: Hades or Persephone?
        ["chthonians", "Cerberus", 8, 28],  # revealed, next to the Palace: not a leader
        ["chthonians", None, 9, 3],
    ]
    moves = [["Apollo", 13, 0, 0], ["Zeus", 21, -1, 0], ["Ares", 4, -2, 0]]
    set_position(page, units=units, eliminated=[], honor={"olympians": 16}, energy={}, moves=moves)

    # a free move that leaves the hidden token next to the Palace: warned, and it must be confirmed
    confirm = click_move(page, "Apollo", 13)
    assert confirm.locator("#confirm-title").inner_text() == "The enemy may win"
    dangers = confirm.locator("li.danger").all_inner_texts()
    assert dangers == [
        "The enemy may win on its next move: token #7 in region 21 (it may be Hades or "
        "Persephone) can enter the Palace, and a Chthonian leader in the Palace wins."
    ]
    assert confirm.locator("[data-action=ok]").inner_text() == "Do it anyway"
    cancel(page)

    # an attack on that token is not warned of (the combat decides): only its Honor is asked
    confirm = click_move(page, "Zeus", 21)
    assert confirm.locator("#confirm-title").inner_text() == "This costs Honor"
    assert "Honor 16 → 15" in confirm.inner_text()
    assert confirm.locator("li.danger").count() == 0
    cancel(page)

    # both leaders known elsewhere (Hades revealed far away, Persephone eliminated): no warning
    units[5] = ["chthonians", "Hades", 9, 3]
    set_position(page, units=units, eliminated=["Persephone"], honor={}, energy={}, moves=moves)
    confirm = click_move(page, "Ares", 4)
    assert confirm.locator("#confirm-title").inner_text() == "This costs Honor"
    assert confirm.locator("li.danger").count() == 0
    cancel(page)

    # only Hades known: the hidden token may still be Persephone
    set_position(page, units=units, eliminated=[], honor={}, energy={}, moves=moves)
    confirm = click_move(page, "Ares", 4)
    assert confirm.locator("#confirm-title").inner_text() == "The enemy may win"
    assert "token #7 in region 21 (it may be Persephone) can enter the Palace" in (
        confirm.locator("li.danger").inner_text()
    )
    assert "Honor 16 → 14" in confirm.inner_text()  # the cost is still said
    cancel(page)


def test_enough_enemy_units_to_take_your_honor_in_your_base_are_warned_of(
    new_page, web_server
) -> None:
    page = random_setup_game(new_page, web_server, "olympians")
    units = [
        ["olympians", "Zeus", 1, 35],
        ["olympians", "Ares", 3, 3],
        ["chthonians", "Cronus", 7, 13],  # three revealed non-leaders next to the Palace
        ["chthonians", "Cerberus", 8, 13],
        ["chthonians", "Thanatos", 9, 13],
        ["chthonians", "Hades", 10, 9],
    ]
    moves = [["Ares", 2, 0, 2], ["Ares", 4, -1, 0]]  # over the Styx (Energy); back (Honor)
    liturgy = [{"command": {"type": "liturgy"}, "honor": -2, "energy": -6}]
    set_position(page, units=units, eliminated=["Persephone"], honor={"olympians": 4},
                 energy={"olympians": 24}, moves=moves, extra=liturgy)

    # Honor 4, three enemies can come in: 4 - 3 > 0, no warning; the Styx costs Energy (not Honor)
    confirm = click_move(page, "Ares", 2)
    assert confirm.locator("#confirm-title").inner_text() == "This costs Energy"
    assert "Energy 24 → 22" in confirm.inner_text()
    assert "Honor" not in confirm.inner_text()
    assert confirm.locator("li.danger").count() == 0
    cancel(page)

    # the same three, after a move that costs 1 Honor: 3 - 3 = 0, the enemy can make you lose
    confirm = click_move(page, "Ares", 4)
    assert confirm.locator("#confirm-title").inner_text() == "The enemy may win"
    assert "Honor 4 → 3" in confirm.inner_text()
    assert confirm.locator("li.danger").all_inner_texts() == [
        "The enemy can make you lose on its next move: 3 more can come in (3 from region 13); "
        "at the start of your next turn each enemy unit in your base costs you 1 Honor: "
        "Honor 3 → 0."
    ]
    cancel(page)

    # a Liturgy too (it moves nobody, but costs 2 Honor)
    page.click("#btn-liturgy")
    confirm = page.locator("dialog#confirm[open]")
    assert confirm.locator("#confirm-title").inner_text() == "The enemy may win"
    assert "Honor 2 → -1" in confirm.locator("li.danger").inner_text()
    assert confirm.locator("[data-action=ok]").inner_text() == "Perform it anyway"
    cancel(page)

    # no group next to the Palace, but a lone hidden token far away may be the Harpies, who fly
    # anywhere: at Honor 1 after the move, that one is enough; once they are eliminated, it is not
    units = [
        ["olympians", "Zeus", 1, 35],
        ["olympians", "Ares", 3, 3],
        ["chthonians", None, 11, 2],
        ["chthonians", "Hades", 10, 9],
    ]
    moves = [["Ares", 4, -1, 0]]
    set_position(page, units=units, eliminated=[], honor={"olympians": 2}, energy={}, moves=moves)
    confirm = click_move(page, "Ares", 4)
    assert confirm.locator("#confirm-title").inner_text() == "The enemy may win"
    assert "token #11 in region 2 (it may be Harpies) by flight" in (
        confirm.locator("li.danger").inner_text()
    )
    cancel(page)
    set_position(page, units=units, eliminated=["Harpies"], honor={}, energy={}, moves=moves)
    confirm = click_move(page, "Ares", 4)
    assert confirm.locator("#confirm-title").inner_text() == "This costs Honor"
    assert confirm.locator("li.danger").count() == 0
    cancel(page)


def test_the_chthonians_last_leader_within_a_thunderbolt_is_warned_of(
    new_page, web_server
) -> None:
    page = random_setup_game(new_page, web_server, "chthonians")
    units = [
        ["chthonians", "Persephone", 1, 27],
        ["chthonians", "Cronus", 2, 3],
        ["olympians", None, 7, 13],  # hidden: may be Zeus (or Demeter)
        ["olympians", None, 8, 5],
    ]
    moves = [["Persephone", 21, 0, 0], ["Cronus", 2, 0, 2]]
    set_position(page, units=units, eliminated=["Hades"], honor={}, energy={"olympians": 24},
                 moves=moves)

    # Persephone, the last leader, alone next to a token that may be Zeus (or Demeter)
    confirm = click_move(page, "Persephone", 21)
    assert confirm.locator("#confirm-title").inner_text() == "The enemy may win"
    assert confirm.locator("li.danger").all_inner_texts() == [
        "The enemy may win on its next move: token #7 in region 13 (it may be Zeus) can throw "
        "a thunderbolt at Persephone, your last leader, alone in region 21.",
        "The enemy may win on its next move: token #7 in region 13 (it may be Demeter) can "
        "meet Persephone, your last leader, in region 21, and both are eliminated.",
    ]
    cancel(page)

    # where she stands (region 27) nobody is next to her: crossing the Styx is only a cost
    confirm = click_move(page, "Cronus", 2)
    assert confirm.locator("#confirm-title").inner_text() == "This costs Energy"
    assert confirm.locator("li.danger").count() == 0
    cancel(page)
