"""Combat explained, played through the UI: a revealing flight of Apollo
into Hypnos and Cronus. The commitment form shows the resulting power term by term as it is
chosen, the round result explains each side's power naming the powers that applied (Hypnos),
the loser's removal choice says what follows (Cronus fights at full strength without Hypnos),
and the panel closes by itself when the combat ends, its result kept in the log."""

from __future__ import annotations

from test_web_attention import box_text, side_state, wait_side_state
from test_web_game import _join_game

OLYMPIANS = {"Zeus": 35, "Apollo": 5, "Ares": 6, "Athena": 12, "Hera": 13, "Hermes": 19,
             "Poseidon": 20, "Artemis": 21, "Hephaestus": 27}
CHTHONIANS = {"Hades": 0, "Hypnos": 8, "Cronus": 1, "Cerberus": 14, "Thanatos": 22,
              "Persephone": 23, "Hecate": 29, "Erinyes": 30, "Charon": 15}


def place(page, placements: dict[str, int]) -> None:
    """Set up by clicks: the leader is selected first, then each unit and its region."""
    for name, region in placements.items():
        if page.get_attribute(f"li.setup-unit[data-unit='{name}'] button.setup-select",
                              "aria-pressed") != "true":
            page.click(f"li.setup-unit[data-unit='{name}'] button.setup-select")
        page.click(f"g.dest[data-region='{region}']")
        page.wait_for_function(
            "name => document.querySelector(`li.setup-unit[data-unit='${name}'] .where`)"
            ".textContent.startsWith('region')",
            arg=name,
        )
    page.click("#btn-submit-setup")


def confirm_if_asked(page) -> None:
    if page.locator("dialog#confirm[open]").count():
        page.click("dialog#confirm[open] [data-action=ok]")


def move(page, unit: str, region: int, fly: bool = False) -> None:
    page.wait_for_selector("#game[data-my-turn=true]")
    page.click(f"g.unit[data-unit='{unit}']")
    page.wait_for_selector(f"#game[data-selection='{unit}']")
    if fly:
        page.check("#fly-toggle")
    page.click(f"g.dest[data-region='{region}']")
    chooser = page.locator("dialog#chooser[open]")
    if chooser.count():
        chooser.locator("button.variant", has_text="Fly" if fly else "").first.click()
    confirm_if_asked(page)


def commit(page, maneuver: str, energy: int, power: int, words: str, honor: int = 0) -> None:
    """Choose and commit. A commitment that costs Honor (``honor`` < 0) or Energy must ask
    first, with each quantity before → after (the test fails without the dialog); a free one
    is sealed at once."""
    page.wait_for_selector("#commit-form")
    page.check(f"#maneuver-{maneuver}")
    page.fill("#energy", str(energy))
    page.wait_for_selector(f"#commit-power[data-power='{power}']")
    assert words in page.inner_text("#commit-power"), page.inner_text("#commit-power")
    side = page.get_attribute("#game", "data-seat")
    had_honor, had_energy = page.evaluate(
        "s => [window.olympus.model.honor[s], window.olympus.model.energy[s]]", side
    )
    page.click("#btn-commit")
    if honor or energy:
        confirm = page.locator("dialog#confirm[open]")
        text = confirm.inner_text()  # waits for the dialog: none fails the test
        title = confirm.locator("#confirm-title").inner_text()
        if honor:
            assert f"Honor {had_honor} → {had_honor + honor}" in text, text
        else:
            assert "Honor" not in text and title == "This costs Energy", text
        if energy:
            assert f"Energy {had_energy} → {had_energy - energy}" in text, text
        else:
            assert title == "This costs Honor", text
        confirm.locator("[data-action=ok]").click()
    else:
        assert page.locator("dialog#confirm[open]").count() == 0
    page.wait_for_selector("#combat-waiting, #round-result")


def test_combat_explained_term_by_term(new_page) -> None:
    _, olympians, chthonians = _join_game(new_page)
    place(olympians, OLYMPIANS)
    place(chthonians, CHTHONIANS)

    move(chthonians, "Cronus", 8)  # Cronus joins Hypnos
    olympians.wait_for_selector("#game[data-my-turn=true]")
    move(olympians, "Apollo", 8, fly=True)  # a revealing flight: an attack
    for page in (olympians, chthonians):
        page.wait_for_selector("#combat[data-mode=combat][data-round='1']")

    # each side's strength, from the rules, naming Hypnos
    olympians.wait_for_selector("#combat .base-strength[data-side=olympians]")
    assert "Apollo 0 (Hypnos −3) = 0" in olympians.inner_text(
        "#combat .base-strength[data-side=olympians]"
    )
    assert "Cronus 0 (Hypnos −6)" in olympians.inner_text(
        "#combat .base-strength[data-side=chthonians]"
    )
    # the form follows the choice: Standard with 0, then 3 Energy
    olympians.wait_for_selector("#commit-power[data-power='0']")
    commit(olympians, "standard", 3, 3, "Apollo 0 (Hypnos −3) + 3 Energy = 3")
    commit(chthonians, "all_out_defense", 0, 4, "× 2 (All-out Defense) = 4", honor=-2)
    # both revealed: each side's power explained, All-out Defense's doubling named
    for page in (olympians, chthonians):
        page.wait_for_selector("#round-result[data-round='1']")
    result = chthonians.inner_text("#round-result .round-powers")
    assert "Apollo 0 (Hypnos −3) + 3 Energy = 3" in result
    assert "× 2 (All-out Defense) = 4" in result and "Cronus 0 (Hypnos −6)" in result


def test_the_loser_sees_what_follows_and_the_panel_closes_itself(new_page) -> None:
    _, olympians, chthonians = _join_game(new_page)
    place(olympians, OLYMPIANS)
    place(chthonians, CHTHONIANS)
    move(chthonians, "Cronus", 8)
    move(olympians, "Apollo", 8, fly=True)
    commit(olympians, "standard", 3, 3, "= 3")
    # sealed commitments: each side's box says who has committed and who is still choosing
    for page in (olympians, chthonians):
        wait_side_state(page, "olympians", "committed")
        assert side_state(page, "chthonians") == "choosing"
        assert box_text(page, "olympians") == "committed"
        assert box_text(page, "chthonians") == "choosing…"
    commit(chthonians, "standard", 0, 2, "Hypnos 2")
    for page in (olympians, chthonians):
        page.wait_for_selector("#round-result[data-round='1'][data-winner=olympians]")
    # after the round only the loser chooses (which unit to remove); the winner waits
    for page in (olympians, chthonians):
        wait_side_state(page, "chthonians", "choosing")
        assert box_text(page, "chthonians") == "choosing: remove a unit"
        assert side_state(page, "olympians") == "waiting"
        assert box_text(page, "olympians") == "waiting"
    assert "Power: Olympians Apollo 0 (Hypnos −3) + 3 Energy = 3" in olympians.inner_text(
        "#event-log"
    )

    # the Chthonians lost: which unit goes, and what follows each choice
    chthonians.wait_for_selector("#choice[data-kind=remove] button.choice-remove_unit")
    hypnos = chthonians.inner_text("#follows-remove_unit-Hypnos")
    cronus = chthonians.inner_text("#follows-remove_unit-Cronus")
    assert "Cronus 6 = 6" in hypnos and "theirs 3" in hypnos, hypnos
    assert "Hypnos 2 = 2" in cronus and "theirs 0" in cronus, cronus
    olympians.wait_for_selector("#choice-waiting")
    chthonians.click("#choice button[data-value=Hypnos]")

    # round 2 without Hypnos: Apollo counts 3 again; the Olympians retreat and it is over
    olympians.wait_for_selector("#combat[data-round='2']")
    olympians.wait_for_selector("#commit-power[data-power='3']")
    commit(olympians, "retreat", 0, 3, "Apollo 3 = 3")
    commit(chthonians, "standard", 0, 6, "Cronus 6 = 6")
    olympians.wait_for_selector("#choice[data-kind=retreat] button.choice-retreat")
    olympians.locator("#choice button.choice-retreat").first.click()
    confirm_if_asked(olympians)
    for page in (olympians, chthonians):
        page.wait_for_selector("#game[data-combat=false]")
        page.wait_for_selector("#combat", state="detached")  # closed by itself
        log = page.inner_text("#event-log")
        assert "Round 2 resolved" in log and "Cronus 6" in log
        assert "The combat in region 8 is over." in log
