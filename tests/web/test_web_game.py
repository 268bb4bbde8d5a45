"""A full game through the browser UI: two players in two browser contexts, a spectator in a
third, against a real ``olympus serve``. Every action is a click or a key press on what the UI
offers; a reload in the middle of a combat must bring back the same seat and the combat panel.
"""

from __future__ import annotations

import json
import os
import random
import time

from web_driver import UiPlayer
from websockets.sync.client import connect

MAX_SECONDS = 300  # a random game takes ~35 s here; room for a box twice as slow and more


# The Olympians' page has the room's summary with the Chthonians joined and the room live: the
# join writes the seats, then the status, so a summary read between the two changes once more.
JOIN_SEEN = """() => {
  const summary = window.olympus.summary;
  return summary?.seats.chthonians === true && summary.status === "live";
}"""


def _join_game(new_page):
    olympians = new_page("olympians", "/")
    olympians.check("input[name=side][value=olympians]")
    olympians.click("#btn-create")
    olympians.wait_for_selector("#setup-panel")
    link = olympians.input_value("#invite-link")
    room = link.rsplit("/", 1)[1]
    assert "#/join/" in link

    chthonians = new_page("chthonians", link)
    chthonians.click("#btn-join-chthonians")
    chthonians.wait_for_selector("#setup-panel")
    return room, olympians, chthonians


def _box(page, selector: str) -> dict:
    """The bounding box of the element ``selector`` names, once it is laid out. The screen is
    drawn anew whenever the game or the room's summary changes (the opponent's setup arrives),
    and an element asked for while it is being replaced has none (Playwright's None)."""
    deadline = time.monotonic() + 15
    while (box := page.locator(selector).bounding_box()) is None:
        assert time.monotonic() < deadline, f"{selector} is never laid out"
        page.wait_for_selector(selector, state="visible")
    return box


def _manual_setup(page, rng: random.Random) -> None:
    """Pick and place by clicks, one unit by drag and drop, then submit sealed."""
    page.wait_for_selector("g.dest")  # the leader is selected: free regions are offered
    names = [li.get_attribute("data-unit") for li in page.locator("li.setup-unit").all()]
    leader, others = names[0], names[1:]
    picks = rng.sample(others, 8)
    page.locator("g.dest").nth(rng.randrange(page.locator("g.dest").count())).click()
    for name in picks[:-1]:
        page.click(f"li.setup-unit[data-unit='{name}'] button.setup-select")
        page.wait_for_selector("g.dest")
        dests = page.locator("g.dest")
        dests.nth(rng.randrange(dests.count())).click()
    # the last one by drag and drop from the list onto a free region
    last = picks[-1]
    page.wait_for_selector("#setup-count:has-text('Picked 8/9 · placed 8/9')")
    # the list may be longer than the side panel: its button in view (the board stays put)
    button = f"li.setup-unit[data-unit='{last}'] button.setup-select"
    page.locator(button).scroll_into_view_if_needed()
    source = _box(page, button)
    placeable = {el.get_attribute("data-region") for el in page.locator(".region.placeable").all()}
    taken = {el.get_attribute("data-region") for el in page.locator("g.unit").all()}
    free = sorted(placeable - taken)
    target = _box(page, f".region.placeable[data-region='{rng.choice(free)}']")
    page.mouse.move(source["x"] + 20, source["y"] + 10)
    page.mouse.down()
    page.mouse.move(source["x"] + 60, source["y"] + 30, steps=4)
    page.mouse.move(target["x"] + target["width"] / 2, target["y"] + target["height"] / 2, steps=8)
    page.mouse.up()
    page.wait_for_function(
        "name => document.querySelector(`li.setup-unit[data-unit='${name}'] .where`)"
        ".textContent.startsWith('region')",
        arg=last,
    )
    assert page.locator("#setup-count").inner_text() == "Picked 9/9 · placed 9/9"
    assert leader in names
    page.click("#btn-submit-setup")


def _normalized(view: dict) -> dict:
    """The parts of a position the client folds from events (model.js) and the server views."""
    combat = view.get("combat")
    if combat:
        keys = ("region", "attacker", "origin", "round", "committed", "commitments")
        combat = {k: combat[k] for k in keys}
    return {
        "phase": view["phase"],
        "turn": view["turn"],
        "turn_number": view["turn_number"],
        "honor": view["honor"],
        "energy": view["energy"],
        "units": sorted(
            (u["side"], u["region"], u["token"], u["name"] or "", u.get("revealed", "-"))
            for u in view["units"]
        ),
        "eliminated": sorted(view["eliminated"]),
        "picked": sorted(view.get("picked") or []),
        "combat": combat,
        "pending": view.get("pending"),
    }


def _check_model_against_server(page, server_url: str, room: str) -> bool:
    """The page's folded model equals a fresh view from the server at the same message number."""
    seat = page.get_attribute("#game", "data-seat")
    if seat == "spectator":
        hello = {"type": "hello", "spectate": room}
    else:
        seats = page.evaluate("() => JSON.parse(localStorage.getItem('olympus.seats'))")
        hello = {"type": "hello", "token": seats[room]["token"]}
    ws_url = server_url.replace("http://", "ws://") + "/ws"
    with connect(ws_url, subprotocols=["olympus.json"], open_timeout=5) as ws:
        ws.send(json.dumps(hello))
        messages: list[dict] = []
        while len(messages) < 2:  # a frame holds a message or an array of them (protocol.md)
            data = json.loads(ws.recv(timeout=5))
            messages += data if isinstance(data, list) else [data]
        assert messages[0]["type"] == "welcome"
        message = messages[1]
    assert message["type"] == "view"
    if message["view"]["phase"] == "over":
        return False  # once over, a view reveals everything: nothing to compare
    model = page.evaluate("() => window.olympus && window.olympus.model")
    if not model or model["seq"] != message["seq"]:
        return False  # the game moved on meanwhile: try again later
    assert _normalized(model) == _normalized(message["view"]), f"{seat}: the folded model differs"
    return True


def test_the_board_is_not_drawn_again_while_the_room_stays_the_same(new_page, web_server):
    """In the setup the room's summary is asked for every 4 s; the screen is drawn again only
    when it changed, since each drawing replaces the board under the player's pointer (the
    drag of a unit onto a region, above)."""
    _, olympians, _ = _join_game(new_page)
    olympians.wait_for_function(JOIN_SEEN)
    olympians.evaluate(
        """() => {
            const game = window.olympus;
            const refresh = game.refreshSummary.bind(game);
            game.summariesSeen = 0;
            game.refreshSummary = async () => { await refresh(); game.summariesSeen += 1; };
            document.querySelector("#board-holder svg").dataset.marked = "yes";
        }"""
    )
    olympians.wait_for_function("() => window.olympus.summariesSeen >= 2", timeout=20_000)
    assert olympians.locator("#board-holder svg[data-marked=yes]").count() == 1


def test_full_game_two_players_and_a_spectator(new_page, web_server):
    # the seed is printed; WEB_GAME_SEED plays a failed run's choices again
    seed = int(os.environ.get("WEB_GAME_SEED", random.randrange(1_000_000)))
    rng = random.Random(seed)
    print(f"seed {seed}")
    room, olympians, chthonians = _join_game(new_page)

    # the spectator finds the game in the lobby's live list and watches it
    spectator = new_page("spectator", "/")
    watch = f"#live-games tr[data-room='{room}'] a:has-text('Watch')"
    spectator.wait_for_selector(watch, timeout=15_000)
    spectator.click(watch)
    spectator.wait_for_selector("#game[data-seat=spectator]")

    olympians.click("#btn-random-setup")
    olympians.click("#btn-submit-setup")
    olympians.wait_for_selector("#setup-waiting")
    assert "Waiting for the opponent" in olympians.inner_text("#setup-waiting")
    _manual_setup(chthonians, rng)

    for page in (olympians, chthonians, spectator):
        page.wait_for_selector("#game[data-phase=turn]")
    chthonians.wait_for_selector("#game[data-my-turn=true]")  # the Chthonians begin

    players = [
        # the Olympians play with the keyboard only, the Chthonians with the mouse
        UiPlayer(olympians, "olympians", random.Random(rng.random()), 32, keyboard=True),
        UiPlayer(chthonians, "chthonians", random.Random(rng.random()), 32),
    ]
    reloaded = False
    checked = 0
    loops = 0
    spectator_turns: list[int] = []
    started = time.monotonic()
    idle_since = time.monotonic()
    while not all(p.over() for p in players):
        assert time.monotonic() - started < MAX_SECONDS, f"game too long (seed {seed})"
        acted = False
        for p in players:
            if not reloaded and p.page.locator("#btn-commit").count():
                # reload in the middle of a combat: same seat, same combat panel
                region = p.page.get_attribute("#combat", "data-region")
                p.page.reload()
                p.page.wait_for_selector("#game[data-connection=open]")
                p.page.wait_for_selector(f"#combat[data-region='{region}']")
                assert p.page.get_attribute("#game", "data-seat") == p.name
                p.page.wait_for_selector("#btn-commit")
                reloaded = True
                # the game waits for this commitment: every page's folded model must equal
                # a fresh server view now
                for page in (olympians, chthonians, spectator):
                    for _ in range(20):
                        if _check_model_against_server(page, web_server.url, room):
                            checked += 1
                            break
                        time.sleep(0.1)
                    else:
                        raise AssertionError("the model never caught up with the server")
            if p.step():
                acted = True
        if acted:
            idle_since = time.monotonic()
        else:
            assert time.monotonic() - idle_since < 20, (
                f"nobody can act (seed {seed}): "
                + "; ".join(f"{p.name}: {p.log[-3:]}" for p in players)
            )
            time.sleep(0.05)
        loops += 1
        if loops % 5 == 0:
            page = (olympians, chthonians, spectator)[loops // 5 % 3]
            if page.get_attribute("#game", "data-phase") != "over":
                checked += _check_model_against_server(page, web_server.url, room)
        turn = int(spectator.get_attribute("#game", "data-turn-number") or 0)
        if not spectator_turns or spectator_turns[-1] != turn:
            spectator_turns.append(turn)

    # everybody sees the end, with everything revealed
    for page in (olympians, chthonians, spectator):
        page.wait_for_selector("#game-over")
    result = olympians.inner_text("#gameover-title")
    assert result == chthonians.inner_text("#gameover-title")
    assert result == spectator.inner_text("#gameover-title")
    # the full reveal names every unit; it comes with `game_over`, which may follow the last
    # events in a frame of its own
    olympians.wait_for_function(
        "() => window.olympus.final && !document.querySelector('g.unit.hidden')"
    )
    assert len(spectator_turns) > 3, spectator_turns  # the spectator saw the game go on
    assert spectator.locator("#event-log li").count() > 10
    assert reloaded, "no combat happened"
    assert checked >= 3, f"only {checked} model checks"
    actions = [p.actions for p in players]
    print(f"turns {spectator_turns[-1]}, model checks {checked}, actions {actions}, {result}")

    # the replay of the finished game, move by move, with full information
    olympians.click("#link-replay")
    olympians.wait_for_selector("#replay")
    first = olympians.inner_text("#replay-text")
    olympians.click("#btn-replay-next")
    olympians.click("#btn-replay-next")
    assert olympians.get_attribute("#replay", "data-move") == "2"
    assert olympians.inner_text("#replay-text") != first
    olympians.click("#btn-replay-last")
    assert "win" in olympians.inner_text("#replay-text") or "draw" in olympians.inner_text(
        "#replay-text"
    )
    assert new_page.errors == []  # type: ignore[attr-defined]
