"""An accessibility pass with axe-core (the copy bundled in ``axe-playwright-python``, injected
into the page: no network) on the lobby, the invite page, the setup, the board in play and the
combat dialog, at 1280×720. Every violation axe reports is a failure, with its rule, impact and
elements."""

from __future__ import annotations

from axe_playwright_python.sync_playwright import Axe
from test_web_combat import CHTHONIANS, OLYMPIANS, move, place
from test_web_game import JOIN_SEEN, _join_game

SIZE = {"width": 1280, "height": 720}
AXE = Axe()


def violations(page, context: str | None = None) -> list[str]:
    results = AXE.run(page, context=context)
    found = []
    for v in results.response["violations"]:
        targets = ", ".join(str(n["target"]) for n in v["nodes"][:5])
        found.append(f"{v['id']} ({v['impact']}): {v['help']} — {targets}")
    return found


def test_the_lobby_the_board_and_the_combat_dialog_pass_axe(new_page) -> None:
    sized = lambda name, path: new_page(name, path, viewport=SIZE)  # noqa: E731
    found: dict[str, list[str]] = {}
    lobby = sized("lobby", "/")
    lobby.wait_for_selector("#lobby-lists table, #lobby-lists p.hint")
    lobby.wait_for_selector("#my-games h2")
    found["lobby"] = violations(lobby)

    room, olympians, chthonians = _join_game(sized)
    olympians.wait_for_selector("g.dest")
    olympians.wait_for_function(JOIN_SEEN)  # no redraw for the join while axe reads the page
    found["setup"] = violations(olympians)  # the setup editor, its free regions offered
    invite = sized("invite", f"/#/join/{room}")
    invite.wait_for_selector("#join-page")
    found["invite page"] = violations(invite)
    place(olympians, OLYMPIANS)
    place(chthonians, CHTHONIANS)
    move(chthonians, "Cronus", 8)
    olympians.wait_for_selector("#game[data-my-turn=true]")
    olympians.wait_for_selector("svg.board g.unit.movable")
    found["board"] = violations(olympians)  # the board with the player's units to move

    move(olympians, "Apollo", 8, fly=True)
    for page in (olympians, chthonians):
        page.wait_for_selector("#commit-form")
    found["combat dialog"] = violations(olympians, "#combat")
    found["combat, the whole page"] = violations(chthonians)
    assert found == {page: [] for page in found}, "\n".join(
        f"{page}: {v}" for page, vs in found.items() for v in vs
    )
