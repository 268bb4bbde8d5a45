"""``olympus bots``: the process that plays the computer's seats, as a client of the service.

The search is CPU-heavy, so it never runs in a server process: this worker reads the bot seat
records the service writes (``olympus.server.computer``), and plays each seat over the
websocket with the seat's token like any client: ``hello`` (resuming from message 0, so that
the bot's memory is its seat's whole history), its events into the bot, a command with an
idempotent id (``bot-<seq>``) for each ``legal`` message that offers something, resent after
``unavailable``/``busy``/``rate_limited``. A dropped socket (a server restart) is reconnected
with the resume token; a restarted worker rebuilds every bot from its seat's events. Once the
game is over, however it ended (a person's resignation or abort too: ``game_over`` comes
alike), the seat is played no more and its record is deleted.

Searches run in threads (``asyncio.to_thread``), so a thinking bot does not stop the worker's
sockets. A reply comes no sooner than ``min_reply_seconds`` after the options, so that a person
can follow. Several workers share the seats by ``--shard I/N`` (a hash of the room id), each
reading only the buckets of records that may hold its seats (``WorkerConfig.record_buckets``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import logging
import math
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from olympus.bot.levels import LEVELS, Level
from olympus.bot.player import SeatBot
from olympus.lifetime import idle_priority
from olympus.rules import Faction
from olympus.server import logs
from olympus.server.computer import BotSeat
from olympus.server.settings import Settings
from olympus.store import BOT_BUCKETS, StoreUnavailable, bot_hash, chosen_url, open_backend

log = logging.getLogger("olympus.bots")


RETRIED = ("unavailable", "busy", "rate_limited")
# Close codes after which the seat cannot be played (protocol.md): a bad or revoked token, a
# room that does not exist.
FINAL_CLOSES = (4401, 4403, 4404)
POLL_SECONDS = 0.5
BACKOFF_SECONDS = (0.1, 0.3, 1.0, 2.0)


@dataclass(frozen=True, slots=True)
class WorkerConfig:
    ws_url: str
    # The service's storage and key prefix: the worker reads the bot seats through the
    # service's own store, so it runs wherever the service does (one Redis, a Cluster).
    settings: Settings
    min_reply_seconds: float = 0.8
    max_iterations: int | None = None  # caps every level's iterations (tests)
    shard: int = 0
    shards: int = 1

    def level(self, name: str) -> Level:
        level = LEVELS[name]
        if self.max_iterations is None:
            return level
        iterations = min(level.budget.iterations, self.max_iterations)
        return replace(level, budget=replace(level.budget, iterations=iterations))

    def mine(self, room: str) -> bool:
        return bot_hash(room) % self.shards == self.shard

    def record_buckets(self) -> list[int]:
        """The buckets that may hold this shard's seats. A room is in bucket ``b`` when its hash
        is ``b`` mod BOT_BUCKETS, and of this shard when it is ``shard`` mod ``shards``: both at
        once only if ``b`` is ``shard`` mod their gcd. So with a number of shards that divides
        BOT_BUCKETS each worker reads its own buckets alone, with a multiple of it one bucket
        that it shares, and with an odd number every bucket."""
        step = math.gcd(self.shards, BOT_BUCKETS)
        return list(range(self.shard % step, BOT_BUCKETS, step))


def _messages(frame: str | bytes) -> list[dict[str, Any]]:
    data = json.loads(frame)
    return data if isinstance(data, list) else [data]


class SeatPlayer:
    """One computer seat, played until its game is over."""

    def __init__(self, record: BotSeat, config: WorkerConfig) -> None:
        self.record = record
        self.config = config
        self.seat = Faction(record.seat)
        self.bot: SeatBot | None = None
        self.last_seq = 0
        self.pending: dict[str, Any] | None = None
        self.acted_seq = -1
        # The newest ``legal``: one that comes while a command is pending (on a resume, before
        # the resent command's answer) is acted on once the answer comes, if still current.
        self.latest_legal: dict[str, Any] | None = None

    def _new_bot(self, view: dict[str, Any] | None) -> SeatBot:
        bot = SeatBot(self.seat, self.config.level(self.record.level), self.record.seed)
        bot.start(view)
        return bot

    async def run(self) -> None:
        """Play until the game is over; reconnect (resuming) whenever the socket drops."""
        for failures in itertools.count():
            try:
                if await self._session():
                    return
                reason: object = "closed"
            except ConnectionClosed as closed:
                if closed.rcvd is not None and closed.rcvd.code in FINAL_CLOSES:
                    log.warning("bot %s: closed for good (%s)", self.record.field, closed.rcvd)
                    return
                reason = closed
            except (OSError, InvalidHandshake, TimeoutError) as error:
                reason = error
            delay = BACKOFF_SECONDS[min(failures, len(BACKOFF_SECONDS) - 1)]
            log.info("bot %s: %r; reconnecting in %.1fs", self.record.field, reason, delay)
            await asyncio.sleep(delay)

    async def _session(self) -> bool:
        """One connection; True once the game is over."""
        async with connect(
            self.config.ws_url, subprotocols=["olympus.json"], max_size=None, compression=None
        ) as ws:
            hello = {"type": "hello", "token": self.record.token}
            hello |= {"last_seq": self.last_seq, "epoch": self.record.epoch}
            await ws.send(json.dumps(hello))
            async for frame in ws:
                for message in _messages(frame):
                    if await self._handle(ws, message):
                        return True
            return False

    async def _handle(self, ws: Any, message: dict[str, Any]) -> bool:
        kind = message["type"]
        if kind == "welcome":
            if message["resumed"] and self.bot is None:
                self.bot = self._new_bot(None)  # from message 0: every event follows
            if self.pending is not None:
                await self._send(ws)  # the protocol's rule: the same command, the same id
        elif kind == "view":  # not resumed: the position as of ``seq``
            self.bot = self._new_bot(message["view"])
            self.last_seq = message["seq"]
        elif kind == "event":
            assert self.bot is not None and message["seq"] == self.last_seq + 1, message
            self.bot.observe(message["event"])
            self.last_seq = message["seq"]
        elif kind == "legal":
            self.latest_legal = message
            await self._maybe_act(ws, message)
        elif kind == "ack":
            self.pending = None
            await self._act_on_latest(ws)
        elif kind == "error":
            await self._refused(ws, message)
        elif kind == "game_over":
            return True
        return False

    async def _maybe_act(self, ws: Any, legal: dict[str, Any]) -> None:
        if self.pending is not None or legal["seq"] != self.last_seq:
            return
        if legal["seq"] == self.acted_seq or not (legal["actions"] or legal.get("setup")):
            return
        assert self.bot is not None
        self.acted_seq = legal["seq"]
        started = time.monotonic()
        now_ms = time.time_ns() // 1_000_000
        command = await asyncio.to_thread(self.bot.act, legal, now_ms)
        await asyncio.sleep(max(0.0, self.config.min_reply_seconds - (time.monotonic() - started)))
        self.pending = {"type": "command", "id": f"bot-{legal['seq']}", "command": command}
        await self._send(ws)

    async def _act_on_latest(self, ws: Any) -> None:
        if self.latest_legal is not None:
            await self._maybe_act(ws, self.latest_legal)

    async def _send(self, ws: Any) -> None:
        await ws.send(json.dumps(self.pending))

    async def _refused(self, ws: Any, error: dict[str, Any]) -> None:
        if self.pending is None or error.get("id") != self.pending["id"]:
            log.warning("bot %s: %s", self.record.field, error)
            return
        if error["code"] in RETRIED:
            await asyncio.sleep(0.2)
            await self._send(ws)
            return
        # the rules refused it (the position moved on) or the id was applied: act on the
        # options of the position now, if they came meanwhile, else wait for them
        log.info("bot %s: command refused: %s", self.record.field, error["code"])
        self.pending = None
        await self._act_on_latest(ws)


async def serve_bots(config: WorkerConfig, stop: asyncio.Event | None = None) -> None:
    """Play every recorded bot seat of this shard until ``stop`` is set."""
    backend = open_backend(config.settings.store_config())
    buckets = config.record_buckets()
    running: dict[str, asyncio.Task[None]] = {}
    stop = stop or asyncio.Event()

    async def play(record: BotSeat) -> None:
        await SeatPlayer(record, config).run()
        await backend.bots.remove(record.room, record.seat)
        log.info("bot %s: game over", record.field)

    try:
        while not stop.is_set():
            try:
                records = await backend.bots.read(buckets)
            except StoreUnavailable as error:  # Redis down, a failover
                log.warning("bots: cannot read the bot seats: %r", error)
                records = {}
            for name, raw in records.items():
                task = running.get(name)
                if (task is None or task.done()) and config.mine(name.split(":")[0]):
                    if task is not None and task.exception() is not None:
                        log.error("bot %s failed: %r", name, task.exception())
                    running[name] = asyncio.create_task(play(BotSeat.decode(raw)))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), POLL_SECONDS)
    finally:
        for task in running.values():
            task.cancel()
        await asyncio.gather(*running.values(), return_exceptions=True)
        await backend.aclose()


@contextlib.contextmanager
def bots_thread(ws_url: str, settings: Settings) -> Iterator[threading.Thread]:
    """The computer's seats of the service at ``ws_url`` played by a thread of this process,
    on its own event loop: for ``olympus serve --store memory``, whose seats records only this
    process can read."""
    config = WorkerConfig(ws_url=ws_url, settings=settings)
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()
    thread = threading.Thread(
        target=loop.run_until_complete, args=(serve_bots(config, stop),), daemon=True
    )
    thread.start()
    try:
        yield thread
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)


def main(args: argparse.Namespace) -> int:
    """``olympus bots``: run until interrupted."""
    logs.configure()
    idle_priority()
    shard, _, shards = args.shard.partition("/")
    redis_url = chosen_url(args.redis_url, args.redis_cluster)
    if redis_url is None:
        raise SystemExit("olympus bots: --redis-url, --redis-cluster or REDIS_URL is required")
    config = WorkerConfig(
        ws_url=args.server,
        settings=Settings.from_env(redis_url=redis_url),
        min_reply_seconds=float(os.environ.get("OLYMPUS_BOT_REPLY_SECONDS", "0.8")),
        max_iterations=_int_or_none(os.environ.get("OLYMPUS_BOT_ITERATIONS")),
        shard=int(shard),
        shards=int(shards or 1),
    )

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, stop.set)
        await serve_bots(config, stop)

    asyncio.run(run())
    return 0


def _int_or_none(text: str | None) -> int | None:
    return int(text) if text else None
