"""The lobby's featured game and the spectator counts: the most watched live game drawn on a
small board that follows its moves; each live game's count in the lobby's list and on the
game's page, changing as spectators open and close it. The counts are eventually consistent
(each server process writes its own every 2 s): every check waits for what it expects."""

from __future__ import annotations

import json
import time

import httpx
from websockets.sync.client import connect

WAIT = 30_000  # ms: a count is a few seconds behind, the featured choice a few more


def live_game(url: str) -> tuple[str, dict[str, str]]:
    """A Random Setup game between two seats taken over HTTP: live, in its first turn."""
    created = httpx.post(f"{url}/rooms", json={"side": "olympians", "random_setup": True}).json()
    joined = httpx.post(f"{url}/rooms/{created['room']}/join", json={}).json()
    return created["room"], {"olympians": created["token"], "chthonians": joined["token"]}


def move(ws_url: str, tokens: dict[str, str]) -> None:
    """The side to move plays its first legal action (read from its own ``legal``)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        for token in tokens.values():
            with connect(ws_url, subprotocols=["olympus.json"]) as ws:  # type: ignore[list-item]
                ws.send(json.dumps({"type": "hello", "token": token}))
                legal = None
                while legal is None:
                    frame = json.loads(ws.recv(timeout=10))
                    for message in frame if isinstance(frame, list) else [frame]:
                        if message["type"] == "legal":
                            legal = message
                if legal["actions"]:
                    command = legal["actions"][0]["command"]
                    ws.send(json.dumps({"type": "command", "id": "m1", "command": command}))
                    while True:
                        frame = json.loads(ws.recv(timeout=10))
                        messages = frame if isinstance(frame, list) else [frame]
                        if any(m["type"] == "ack" for m in messages):
                            return
        time.sleep(0.2)
    raise AssertionError("nobody had a move")


def test_the_featured_game_follows_its_moves_and_counts_follow_spectators(
    new_page, web_server
) -> None:
    room, tokens = live_game(web_server.url)
    watcher = new_page("watcher", f"/#/watch/{room}")
    watcher.wait_for_selector("#watching:has-text('1 watching')", timeout=WAIT)

    lobby = new_page("lobby", "/")
    board = f"#featured-game .featured-board[data-room='{room}']"
    lobby.wait_for_selector(board, timeout=WAIT)
    assert lobby.locator(f"{board} svg.board").count() == 1
    lobby.wait_for_selector("#featured-spectators:has-text('1 watching')", timeout=WAIT)
    row = f"#live-games tr[data-room='{room}'] .spectators"
    lobby.wait_for_selector(f"{row}:has-text('1 watching')", timeout=WAIT)
    seq = int(lobby.get_attribute(board, "data-seq"))

    move(web_server.url.replace("http", "ws") + "/ws", tokens)
    lobby.wait_for_function(
        "([sel, seq]) => { const b = document.querySelector(sel);"
        " return b && Number(b.dataset.seq) > seq; }",
        arg=[board, seq],
        timeout=WAIT,
    )  # the move shows on the small board, without a reload
    watcher.wait_for_selector("#turn-indicator", timeout=WAIT)

    second = new_page("second", f"/#/watch/{room}")
    for page, where in ((lobby, row), (lobby, "#featured-spectators"), (watcher, "#watching")):
        page.wait_for_selector(f"{where}:has-text('2 watching')", timeout=WAIT)
    second.close()
    for page, where in ((lobby, row), (watcher, "#watching")):
        page.wait_for_selector(f"{where}:has-text('1 watching')", timeout=WAIT)


def test_the_join_page_says_whether_the_game_has_a_commentary(new_page, web_server) -> None:
    """The broadcast delay is shown before a seat is taken, and the seat is taken on it."""
    created = httpx.post(f"{web_server.url}/rooms", json={"broadcast_delay_seconds": 60}).json()
    guest = new_page("guest", f"/#/join/{created['room']}")
    guest.wait_for_selector("#join-broadcast:has-text('1 min after it happens')")
    guest.click("#join-page .button-row button")
    guest.wait_for_selector("#game")
    plain = httpx.post(f"{web_server.url}/rooms", json={}).json()
    other = new_page("other", f"/#/join/{plain['room']}")
    other.wait_for_selector("#join-broadcast:has-text('No commentary')")


def test_a_spectator_closed_for_reading_slowly_skips_to_a_fresh_view(new_page, web_server):
    """Closed with 4413 (protocol.md, "Slow readers"), a spectator's next hello asks for the
    game as it is now (no ``last_seq``); a seat's still resumes."""
    room, tokens = live_game(web_server.url)
    watcher = new_page("watcher", f"/#/watch/{room}")
    watcher.wait_for_selector("#game[data-seat=spectator][data-phase=turn]")
    assert "last_seq" in watcher.evaluate("window.olympus.hello()")  # an ordinary resume
    watcher.evaluate("window.olympus.conn.lastClose = 4413")
    fresh = watcher.evaluate("window.olympus.hello()")
    assert fresh == {"type": "hello", "spectate": room}
    seat = new_page("seat", "/")
    seat.evaluate(
        "([room, token]) => localStorage.setItem('olympus.seats',"
        " JSON.stringify({[room]: {seat: 'olympians', token}}))",
        [room, tokens["olympians"]],
    )
    seat.goto(f"/#/play/{room}")
    seat.wait_for_selector("#game[data-seat=olympians][data-phase=turn]")
    seat.evaluate("window.olympus.conn.lastClose = 4413")
    assert "last_seq" in seat.evaluate("window.olympus.hello()")
