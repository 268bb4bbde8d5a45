"""A real ``olympus serve`` process for the browser tests (a subprocess on a free port with its
own data dir and embedded Redis). It can be stopped and started again on the same port and data
dir, like a restarted deployment.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, data_dir: Path, port: int | None = None) -> None:
        self.port = port or _free_port()
        self.data_dir = data_dir
        self.log_path = data_dir / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Server:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "olympus.cli",
                "serve",
                "--port",
                str(self.port),
                "--data-dir",
                str(self.data_dir),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            # Playwright clicks faster than a person: the limiter is the service suite's.
            # A player with one rated game is on the leaderboard (its tests finish one).
            env={
                **os.environ,
                "REDIS_URL": "",
                "OLYMPUS_RATE_PER_SECOND": "1e9",
                "OLYMPUS_LEADERBOARD_MIN_GAMES": "1",
            },
            start_new_session=True,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"olympus serve exited: {self.log_path.read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            time.sleep(0.1)
        raise TimeoutError("olympus serve did not become healthy")

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def open_custom_game(page) -> None:
    """Open the lobby's "Custom game" (the full form), if it is not open."""
    page.wait_for_selector("#custom-game")
    page.evaluate("document.getElementById('custom-game').open = true")


def random_setup_game(new_page, web_server, side: str):
    """A game with Random Setup: ``side`` in the browser, the other seat taken over HTTP."""
    page = new_page(side, "/")
    open_custom_game(page)
    page.check(f"input[name=side][value={side}]")
    page.check("#opt-random-setup")
    page.click("#btn-create")
    page.wait_for_selector("#setup-waiting")
    room = page.input_value("#invite-link").rsplit("/", 1)[1]
    httpx.post(f"{web_server.url}/rooms/{room}/join", json={}).raise_for_status()
    page.wait_for_selector("#game[data-phase=turn]")
    # the `legal` of the position has come (it would replace the hand-made one)
    page.wait_for_function(
        "() => { const g = window.olympus; return g.options && g.options.seq === g.model.seq; }"
    )
    return page


def liturgy(page) -> None:
    """The simplest whole turn: a Liturgy (it costs Honor: confirmed), then the opponent's."""
    page.wait_for_selector("#game[data-my-turn=true] #btn-liturgy")
    page.click("#btn-liturgy")
    page.click("dialog#confirm[open] [data-action=ok]")
    page.wait_for_selector("#game[data-my-turn=false]")
