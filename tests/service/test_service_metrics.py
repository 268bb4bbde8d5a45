"""``GET /metrics`` of ``olympus serve --workers 2``: one exposition for all the workers.

Real processes (``process_harness.py``): a supervisor and its two workers on one port, the
kernel spreading connections over them (``SO_REUSEPORT``). Games are played by seats whose
sockets landed on both workers (a worker's ``/healthz`` names its pid and counts its sockets),
and sockets are refused for text that is not UTF-8. Then ``/metrics``, scraped over fresh
connections (each one's worker named by a ``/healthz`` on the same connection), gives the
same totals whichever worker answers: the commands acknowledged, the sockets refused, every
counter and histogram alike, and the seats connected to both. A worker killed leaves its
counts in the totals and takes its gauges out of them. The next start of the supervisor counts
from nothing again, in a directory of its own (the workers' ``PROMETHEUS_MULTIPROC_DIR``).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from process_harness import Player, ServerProcess, wait_until
from service_harness import create_game, setup_command
from websockets.asyncio.client import connect

from olympus.lifetime import alive, children
from olympus.rules import Faction
from olympus.store import EmbeddedRedis

TIMEOUT = 60.0  # seconds for a restart, for the gauges to settle
GAMES_TIMEOUT = 180.0  # seconds for the games, played at once
MAX_GAMES = 6  # games opened until both workers hold a seat's socket (each one: 1 in 2)
SCRAPES = 30  # at least, and until both workers have answered
REFUSALS = 8  # sockets closed for text that is not UTF-8
TEXT = 0x81
SEAT_SOCKETS = 'olympus_connections{kind="seat"}'


def masked(first: int, payload: bytes) -> bytes:
    """A client's small frame (RFC 6455 §5.2): masked, a 7-bit length."""
    mask = os.urandom(4)
    return (
        bytes([first, 0x80 | len(payload)])
        + mask
        + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
    )


def worker_pids(supervisor: int) -> set[int]:
    return {pid for pid in children(supervisor) if alive(pid)}


def metrics_dir(worker: int) -> Path:
    """The directory a worker keeps its metrics in (its ``PROMETHEUS_MULTIPROC_DIR``)."""
    environ = Path(f"/proc/{worker}/environ").read_bytes().split(b"\0")
    [value] = [v for v in environ if v.startswith(b"PROMETHEUS_MULTIPROC_DIR=")]
    return Path(value.split(b"=", 1)[1].decode())


def parse(text: str) -> dict[str, float]:
    """A /metrics text as ``{series: value}``."""
    series = (line.rsplit(" ", 1) for line in text.splitlines() if not line.startswith("#"))
    return {name: float(value) for name, value in series}


def totals(series: dict[str, float]) -> dict[str, float]:
    """The counters' and histograms' series: what only grows, and adds up over workers."""
    kept = ("_total", "_bucket", "_sum", "_count")
    return {k: v for k, v in series.items() if k.split("{")[0].endswith(kept)}


async def healthz(server: ServerProcess, want: set[int]) -> dict[int, dict[str, Any]]:
    """``/healthz`` of every worker in ``want``, over fresh connections, by pid."""
    seen: dict[int, dict[str, Any]] = {}
    deadline = time.monotonic() + TIMEOUT
    while set(seen) != want:
        assert time.monotonic() < deadline, f"only {sorted(seen)} of {sorted(want)} answered"
        async with httpx.AsyncClient(timeout=1) as http:  # a new connection each time
            try:
                body = (await http.get(f"{server.url}/healthz")).json()
            except httpx.TimeoutException:  # a worker starting: its queue is not read yet
                continue
        seen[body["pid"]] = body
    return seen


async def scrape(server: ServerProcess) -> tuple[int, dict[str, float]]:
    """One scrape over a fresh connection, and the pid of the worker that answered it (its
    ``/healthz``, on the same connection)."""
    async with httpx.AsyncClient(timeout=10, limits=httpx.Limits(max_connections=1)) as http:
        pid = (await http.get(f"{server.url}/healthz")).json()["pid"]
        text = (await http.get(f"{server.url}/metrics")).text
    return pid, parse(text)


async def scrapes(server: ServerProcess, workers: set[int]) -> list[tuple[int, dict[str, float]]]:
    """``SCRAPES`` scrapes at least, and until each of ``workers`` has answered some."""
    done: list[tuple[int, dict[str, float]]] = []
    while len(done) < SCRAPES or {pid for pid, _ in done} != workers:
        assert len(done) < 20 * SCRAPES, f"only {sorted({p for p, _ in done})} answered"
        done.append(await scrape(server))
    return done


async def settled(server: ServerProcess, series: str, value: float) -> None:
    """Until a scrape shows ``series`` at ``value`` (each worker writes its gauges every
    second)."""
    deadline = time.monotonic() + TIMEOUT
    while (seen := (await scrape(server))[1].get(series)) != value:
        assert time.monotonic() < deadline, f"{series} is {seen}, not {value}"
        await asyncio.sleep(0.1)


async def counted(server: ServerProcess, acknowledged: int) -> None:
    """Until a scrape counts ``acknowledged`` commands, ok or duplicate."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        series = (await scrape(server))[1]
        seen = sum(series.get(f'olympus_commands_total{{result="{r}"}}', 0) for r in RESULTS)
        if seen == acknowledged:
            return
        assert time.monotonic() < deadline, f"{seen} commands counted, not {acknowledged}"
        await asyncio.sleep(0.1)


RESULTS = ("ok", "duplicate")


async def play(server: ServerProcess, players: list[Player], seed: int) -> None:
    """A game whose two seats play it to the end (bots), their sockets where the kernel puts
    them."""
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
        game = await create_game(http)
    seats = []
    for i, faction in enumerate(Faction):
        token = game.tokens[faction]
        player = Player(faction.value[:3], game.room, game.epoch, [server.ws_url], token, seed + i)
        players.append(player)
        seats.append(await player.start())
    rng = random.Random(seed)
    for faction, player in zip(Faction, seats, strict=True):
        reply = await (await player.command(setup_command(rng, faction), "setup"))
        assert reply["type"] == "ack", reply


async def refuse(server: ServerProcess) -> None:
    """A socket closed for text that is not UTF-8 (1007)."""
    async with connect(server.ws_url, ping_interval=None) as client:
        client.transport.write(masked(TEXT, b"\xff\xfe not UTF-8"))
        await asyncio.wait_for(client.wait_closed(), 30)
    assert client.close_code == 1007


@pytest.fixture
def supervisor(redis_server: EmbeddedRedis, tmp_path: Path) -> Iterator[ServerProcess]:
    prefix = f"met-{uuid.uuid4().hex[:10]}"
    server = ServerProcess("m", redis_server.url, prefix, tmp_path, workers=2)
    yield server
    server.kill()


async def test_every_worker_answers_metrics_with_the_totals_of_all(
    supervisor: ServerProcess,
) -> None:
    server = supervisor.spawn()
    players: list[Player] = []
    try:
        await server.wait_healthy()
        workers = worker_pids(server.pid)
        assert len(workers) == 2

        # Games until both workers hold seats' sockets, then every game to its end.
        while True:
            await play(server, players, seed=len(players))
            sockets = {pid: h["connections"] for pid, h in (await healthz(server, workers)).items()}
            if all(sockets.values()) or len(players) >= 2 * MAX_GAMES:
                break
        assert sum(sockets.values()) == len(players)
        assert all(sockets.values()), f"every seat's socket on one worker: {sockets}"
        await wait_until(lambda: all(p.over for p in players), GAMES_TIMEOUT, "the end", players)
        for _ in range(REFUSALS):
            await refuse(server)
        acknowledged = sum(len(p.acks) for p in players)

        # Every scrape, whichever worker answers, has the totals of both: once each worker has
        # added what a command counts (it tallies them, and adds them every second).
        await counted(server, acknowledged)
        done = await scrapes(server, workers)
        first = totals(done[0][1])
        for pid, series in done:
            ok = series.get('olympus_commands_total{result="ok"}', 0)
            duplicate = series.get('olympus_commands_total{result="duplicate"}', 0)
            assert ok + duplicate == acknowledged, f"worker {pid}: {ok} of {acknowledged} acks"
            assert series.get('olympus_ws_refused_total{code="1007"}') == REFUSALS, pid
            assert totals(series) == first, f"worker {pid} differs"
        loads = sum(v for k, v in first.items() if k.startswith("olympus_room_loads_total"))
        assert loads >= len(players) // 2  # each room in one worker at least

        # The gauges: the seats' sockets on both workers, summed; the same from either.
        await settled(server, SEAT_SOCKETS, len(players))
        for pid, series in await scrapes(server, workers):
            assert series[SEAT_SOCKETS] == len(players), pid
            assert series["olympus_compiled"] == done[0][1]["olympus_compiled"], pid

        # A worker killed: its counts stay, its sockets (gone with it) leave the gauge.
        crashed = max(workers, key=lambda pid: sockets[pid])
        os.kill(crashed, signal.SIGKILL)
        await wait_until(lambda: len(worker_pids(server.pid) - workers) == 1, TIMEOUT, "restart")
        renewed = worker_pids(server.pid)
        await healthz(server, renewed)
        await settled(server, SEAT_SOCKETS, len(players) - sockets[crashed])
        for pid, series in await scrapes(server, renewed):
            assert totals(series) == first, f"worker {pid} differs after a restart"
            assert series[SEAT_SOCKETS] == len(players) - sockets[crashed], pid

        # A kill -9 of the supervisor leaves its directory; the next start removes it, counts
        # from nothing in a directory of its own, and removes that one when it stops.
        shared = metrics_dir(min(renewed))
        assert shared.is_dir() and {metrics_dir(pid) for pid in renewed} == {shared}
        for player in players:
            await player.close()
        server.kill()
        assert shared.is_dir()
        server.spawn()
        await server.wait_healthy()
        workers = worker_pids(server.pid)
        await healthz(server, workers)
        fresh = metrics_dir(min(workers))
        assert fresh != shared and not shared.exists()
        for pid, series in await scrapes(server, workers):
            assert 'olympus_commands_total{result="ok"}' not in series, pid
            assert series["olympus_append_seconds_count"] == 0, pid
        server.signal(signal.SIGTERM)
        assert server.proc is not None and server.proc.wait(40) == 0
        assert not fresh.exists()
    finally:
        for player in players:
            await player.close()
