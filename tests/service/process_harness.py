"""Real ``olympus serve`` processes, and bots that play over them as a client would.

``ServerProcess`` runs ``python -m olympus.cli serve`` as an OS process in its own process
group (so that a kill takes all of it), on its own port, against a Redis given by URL, with
the test's key prefix. ``Player`` is a seat (or a spectator) the way a real client is written:
it acts only on the ``legal`` messages it receives, resends a command with the same id after
``unavailable`` or a reconnect, and reconnects to the next process of its list with its resume
token ``(epoch, seq)`` when its socket drops. It keeps everything it received, across all its
connections, so a test can compare it with the log in Redis (``Oracle``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from service_harness import Loopback, WsClient

from olympus.bots import pick_action
from olympus.rules import LegalAction, parse_command
from olympus.store.redis_clients import CLUSTER_SCHEME

START_TIMEOUT = 30.0
# Errors after which the same command is sent again (rate_limited names the refused id).
RETRIED = ("unavailable", "busy", "rate_limited")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerProcess(Loopback):
    """One ``olympus serve`` OS process (its own session and process group)."""

    def __init__(
        self,
        name: str,
        redis_url: str | None,
        prefix: str,
        work_dir: Path,
        port: int | None = None,
        workers: int = 1,
        env: dict[str, str] | None = None,
        bots: bool = False,
        store: str = "redis",
        archive: str | None = None,
    ) -> None:
        self.name = name
        # The archive: None, none (``--no-archive``: the tests of other things); "embedded":
        # olympus serve's own PostgreSQL in its data dir; else a ``--database-url``.
        self.archive = archive
        self.store = store  # olympus serve --store: redis, or memory (``redis_url`` None)
        self.bots = bots  # start the bots worker (olympus bots) beside it
        self.workers = workers
        self.env = env or {}  # settings of this deployment (OLYMPUS_…)
        self.redis_url = redis_url
        self.prefix = prefix
        self.work_dir = work_dir
        self.port = port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = work_dir / f"{name}.log"
        self.data_dir = work_dir / f"{name}-data"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def spawn(self) -> ServerProcess:
        """Start the process (same port as before on a restart); see ``wait_healthy``."""
        assert not self.alive, f"{self.name} is running"
        env = {
            **os.environ,
            "OLYMPUS_PREFIX": self.prefix,
            "PYTHONUNBUFFERED": "1",
            # Bots play as fast as acks come back; the limiter's tests set their own.
            "OLYMPUS_RATE_PER_SECOND": "1e9",
            **self.env,
        }
        env.pop("OLYMPUS_SECRET", None)  # the processes share the key generated in Redis
        env.pop("REDIS_URL", None)
        command = [
            sys.executable,
            "-m",
            "olympus.cli",
            "serve",
            "--workers",
            str(self.workers),  # 1 unless a test is about workers: tests kill them one by one
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--data-dir",
            str(self.data_dir),
        ]
        if self.store != "redis":
            command += ["--store", self.store]
        elif self.redis_url is not None and self.redis_url.startswith(CLUSTER_SCHEME):
            # a cluster the way an operator names it: --redis-cluster HOST:PORT,...
            command += ["--redis-cluster", self.redis_url.removeprefix(CLUSTER_SCHEME)]
        elif self.redis_url is not None:  # None: the process starts its embedded Redis
            command += ["--redis-url", self.redis_url]
        if not self.bots:
            command.append("--no-bots")
        if self.archive is None:
            command.append("--no-archive")
        elif self.archive != "embedded":
            command += ["--database-url", self.archive]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        return self

    def log_tail(self, limit: int = 3000) -> str:
        if not self.log_path.exists():
            return ""
        return self.log_path.read_text(errors="replace")[-limit:]

    async def wait_healthy(self, timeout: float = START_TIMEOUT) -> None:
        deadline = time.monotonic() + timeout
        async with httpx.AsyncClient(timeout=1.0) as http:
            while True:
                if not self.alive:
                    raise RuntimeError(f"{self.name} exited:\n{self.log_tail()}")
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get(f"{self.url}/healthz")).status_code == 200:
                        return
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{self.name} not healthy in {timeout}s:\n{self.log_tail()}")
                await asyncio.sleep(0.05)

    def signal(self, signum: int) -> None:
        if self.alive:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signum)

    def kill(self) -> None:
        """``kill -9`` the whole process group: a crash, nothing cleaned up."""
        if self.proc is None:
            return
        self.signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (graceful: sockets closed with 1012), SIGKILL if it hangs."""
        if self.proc is None:
            return
        self.signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()


async def wait_until(
    predicate: Callable[[], bool],
    timeout: float = 20.0,
    what: str = "condition",
    players: list[Player] | tuple[Player, ...] = (),
) -> None:
    """Poll ``predicate``; fail early if one of ``players`` failed."""
    deadline = time.monotonic() + timeout
    while not predicate():
        for player in players:
            player.check()
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(0.01)


def legal_actions_of(message: dict[str, Any], seat: str) -> list[LegalAction]:
    """A seat's ``legal`` message as the rules' actions (their commands name the side)."""
    return [
        LegalAction.of(parse_command({**a["command"], "side": seat}), a["honor"], a["energy"])
        for a in message["actions"]
    ]


def wire_command(action: LegalAction) -> dict[str, Any]:
    return action.command.model_dump(mode="json", exclude={"side", "at_ms"})


class Player:
    """A seat (``token``) or a spectator (``token=None``) that survives reconnects.

    ``hold(legal)``: while it returns True the bot does not act on that ``legal`` message
    (a test freezes the game at a chosen point this way); ``release()`` lets it go on.
    """

    def __init__(
        self,
        name: str,
        room: str,
        epoch: str,
        urls: list[str],
        token: str | None = None,
        seed: int = 0,
        protocol: str = "olympus.json",
        from_start: bool = True,
    ) -> None:
        self.name = name
        self.room = room
        self.epoch = epoch
        self.urls = urls
        self.token = token
        self.rng = random.Random(seed)
        self.protocol = protocol
        self.last_seq: int | None = 0 if from_start else None
        self.client: WsClient | None = None
        self.connections = 0
        self.welcomes: list[dict[str, Any]] = []
        self.views: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []  # every event received, across connections
        self.acks: list[dict[str, Any]] = []
        self.refused: list[dict[str, Any]] = []  # rules refusals: {error, sent_at, seq_then}
        self.retries = 0
        self.over: dict[str, Any] | None = None
        self.legal: dict[str, Any] | None = None
        self.hold: Callable[[dict[str, Any]], bool] | None = None
        self.holding: dict[str, Any] | None = None  # the legal message being held
        self.pending: dict[str, Any] | None = None  # {id, command, sent_seq, future}
        self.acted_seq = -1
        self.failure: BaseException | None = None
        self._ids = itertools.count(1)
        self._task: asyncio.Task[None] | None = None

    @property
    def seat(self) -> bool:
        return self.token is not None

    @property
    def side(self) -> str:
        """The seat's side, as its latest ``welcome`` said."""
        return str(self.welcomes[-1]["seat"])

    # -- lifecycle --------------------------------------------------------------------------

    async def start(self) -> Player:
        await self._connect()
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def check(self) -> None:
        if self.failure is not None:
            raise AssertionError(f"{self.name} failed") from self.failure

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        if self.client is not None:
            await self.client.close()

    async def reconnect(self, urls: list[str] | None = None) -> None:
        """Drop the socket (as a network cut would) and reconnect to ``urls``."""
        if urls is not None:
            self.urls = urls
        if self.client is not None:
            await self.client.close()

    async def _connect(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        for attempt in itertools.count():
            url = self.urls[attempt % len(self.urls)]
            hello: dict[str, Any] = {"token": self.token} if self.seat else {"spectate": self.room}
            if self.last_seq is not None:
                hello |= {"last_seq": self.last_seq, "epoch": self.epoch}
            client = None
            try:
                client = await WsClient.open(url, self.protocol)
                welcome = await client.hello(**hello)
            except Exception as error:  # refused, reset, not listening yet: try again
                if client is not None:
                    await client.close()
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{self.name}: cannot reconnect ({error!r})") from error
                await asyncio.sleep(0.1)
                continue
            assert welcome["type"] == "welcome", welcome
            assert welcome["epoch"] == self.epoch
            self.welcomes.append({**welcome, "url": url})
            self.client = client
            self.connections += 1
            self.legal = None
            if not welcome["resumed"]:
                view = await client.expect("view")
                self.views.append(view)
                self.last_seq = view["seq"]
            if self.pending is not None:  # the protocol's rule: resend with the same id
                await self._send_pending()
            return

    async def _run(self) -> None:
        try:
            while self.over is None:
                assert self.client is not None
                try:
                    message = await self.client.next(timeout=60.0)
                except ConnectionError:
                    await self._connect()
                    continue
                await self._handle(message)
                await self._maybe_act()
        except asyncio.CancelledError:
            raise
        except BaseException as error:
            self.failure = error
            if self.pending is not None and not self.pending["future"].done():
                self.pending["future"].set_exception(error)

    # -- messages ---------------------------------------------------------------------------

    async def _handle(self, message: dict[str, Any]) -> None:
        kind = message["type"]
        if kind == "event":
            assert message["seq"] == (self.last_seq or 0) + 1, (self.name, message, self.last_seq)
            self.last_seq = message["seq"]
            self.events.append(message)
        elif kind == "legal":
            self.legal = message
        elif kind == "game_over":
            self.over = message
        elif kind in ("ack", "error"):
            await self._reply(message)
        else:
            raise AssertionError(f"{self.name}: unexpected {message}")

    async def _reply(self, message: dict[str, Any]) -> None:
        pending = self.pending
        if pending is None or message.get("id") != pending["id"]:
            raise AssertionError(f"{self.name}: a reply to nothing pending: {message}")
        if message["type"] == "ack":
            assert message["seq"] <= (self.last_seq or 0), "an ack before its events"
            self.acks.append(message)
        elif message["code"] in RETRIED:
            self.retries += 1
            await asyncio.sleep(0.1)
            await self._send_pending()
            return
        else:
            self.refused.append(
                {"error": message, "sent_seq": pending["sent_seq"], "seq_then": self.last_seq}
            )
        self.pending = None
        pending["future"].set_result(message)

    async def _send_pending(self) -> None:
        assert self.pending is not None and self.client is not None
        with contextlib.suppress(Exception):  # a dead socket: the reader reconnects and resends
            await self.client.send(
                {"type": "command", "id": self.pending["id"], "command": self.pending["command"]}
            )

    async def command(
        self, command: dict[str, Any], command_id: str | None = None
    ) -> asyncio.Future[dict[str, Any]]:
        """Send a command; the future resolves to its ``ack`` or (rules) ``error``."""
        assert self.pending is None, f"{self.name}: a command is already pending"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending = {
            "id": command_id or f"{self.name}-{next(self._ids)}",
            "command": command,
            "sent_seq": self.last_seq,
            "future": future,
        }
        await self._send_pending()
        return future

    def current_legal(self) -> list[LegalAction]:
        """The actions of the newest ``legal`` message, if it is about the newest event."""
        if self.legal is None or self.legal["seq"] != self.last_seq:
            return []
        return legal_actions_of(self.legal, self.side)

    async def _maybe_act(self) -> None:
        legal = self.legal
        if not self.seat or self.pending is not None or self.over is not None or legal is None:
            return
        if legal["seq"] != self.last_seq or legal["seq"] == self.acted_seq:
            return
        if not legal["actions"]:  # nothing to do now (``waiting``), or a setup to submit
            return
        if self.hold is not None and self.hold(legal):
            self.holding = legal
            return
        self.holding = None
        self.acted_seq = legal["seq"]
        await self.command(wire_command(pick_action(self.rng, legal_actions_of(legal, self.side))))

    async def release(self) -> None:
        self.hold = None
        self.holding = None
        await self._maybe_act()


def has_commit(legal: dict[str, Any]) -> bool:
    return any(a["command"]["type"] == "commit" for a in legal["actions"])
