"""Finished games move to the PostgreSQL archive (server/archiver.py) after their grace period,
and every read of them answers byte for byte as before: real Redis, a real PostgreSQL server,
real server processes' websockets; a real ``kill -9`` of the archiving process at each step,
and a PostgreSQL server stopped in the middle of a run."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from killed_pass import killed_pass
from process_harness import ServerProcess
from redis.asyncio import Redis
from service_harness import TIMEOUT, Game, ServerThread, WsClient, played_game

from olympus.lifetime import alive
from olympus.rules import Faction
from olympus.server import Settings
from olympus.store import EmbeddedPostgres, EventStore, StoreConfig, open_archive, open_backend

LONG_GRACE = 3600.0  # no game moves by itself: the test says when its grace period is over


async def until(check: Callable[[], Any], timeout: float = TIMEOUT) -> None:
    """Wait until ``check()`` (awaited if need be) is true; fail after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if asyncio.iscoroutine(value):
            value = await value
        if value:
            return
        assert time.monotonic() < deadline, "the condition did not come true"
        await asyncio.sleep(0.05)


async def history(server: ServerThread, protocol: str, **hello: Any) -> list[str | bytes]:
    """Every message an audience is sent on a hello from the start, up to ``game_over``."""
    client = await WsClient.open(server.ws_url, protocol)
    welcome = await client.hello(last_seq=0, **hello)
    assert welcome["type"] == "welcome", welcome
    await client.expect("game_over")
    await client.close()
    return client.raw[1:]  # after the welcome, which names the connection


async def every_read(server: ServerThread, game: Game) -> dict[str, Any]:
    """The log, each seat's and a spectator's history in both codecs, and the lobby's lines."""
    async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT) as http:
        log = (await http.get(f"/rooms/{game.room}/log")).content
        summary = (await http.get(f"/rooms/{game.room}")).json()
        finished = (await http.get("/rooms", params={"status": "finished"})).json()
    reads: dict[str, Any] = {"log": log, "summary": summary, "finished": finished}
    for protocol in ("olympus.json", "olympus.msgpack"):
        reads[f"spectator {protocol}"] = await history(server, protocol, spectate=game.room)
        for faction in Faction:
            token = game.tokens[faction]
            reads[f"{faction.value} {protocol}"] = await history(server, protocol, token=token)
    return reads


async def live_keys(store: EventStore, room: str) -> list[bytes]:
    """The room's keys in Redis, its entries in the lobby's index and the archive's queue."""
    keys = [k async for k in store.redis.scan_iter(match=f"{store.prefix}:room:{{{room}}}*")]
    if await store.room_status(room) is not None:
        keys.append(b"status")
    return keys


@pytest.fixture
def archived(settings: Settings, database_url: str) -> Settings:
    return replace(
        settings,
        archive_url=database_url,
        archive_grace_seconds=LONG_GRACE,
        archive_poll_seconds=0.05,
    )


async def finish_grace(settings: Settings, *rooms: str) -> None:
    """The rooms' grace periods are over now (their entries in the archive's queue)."""
    backend = open_backend(settings.store_config())
    for room in rooms:
        await backend.archive_queue.set_due(room, 0)
    await backend.aclose()


async def due_of(settings: Settings, room: str) -> tuple[bool, bool]:
    """Whether the room is due within the grace period, and within a little more of it."""
    backend = open_backend(settings.store_config())
    now = time.time_ns() // 1_000_000
    soon = room in await backend.archive_queue.overdue(now + int(LONG_GRACE * 1000) - 60_000)
    later = room in await backend.archive_queue.overdue(now + int(LONG_GRACE * 1000) + 60_000)
    await backend.aclose()
    return soon, later


async def test_a_finished_game_moves_after_its_grace_and_reads_the_same(
    start_server: Callable[..., ServerThread], archived: Settings, store: EventStore
) -> None:
    first = start_server(**_overrides(archived))
    game, _ = await played_game(first, store, commands=None)
    await until(lambda: first.services.lobby.moves_unwritten == 0)  # "Your games"' last move
    assert await due_of(archived, game.room) == (False, True)  # due a grace period after its end
    before = await every_read(first, game)
    assert await store.room_exists(game.room)

    await finish_grace(archived, game.room)
    archive = open_archive(archived.store_config())
    await until(lambda: _moved(store, archive, game.room))
    assert await live_keys(store, game.room) == []  # its seats too, and its lobby entry
    assert await store.redis.zscore(_queue_key(archived, game.room), game.room) is None

    second = start_server(**_overrides(archived))  # holds nothing: reads the archive
    assert await every_read(second, game) == before
    assert await every_read(first, game) == before  # the process that held it live
    async with httpx.AsyncClient(base_url=second.url, timeout=TIMEOUT) as http:
        for action in ("rematch", "revoke"):  # it changes no more, and nothing is made live
            auth = {"authorization": f"Bearer {game.tokens[Faction.OLYMPIANS]}"}
            answer = await http.post(f"/rooms/{game.room}/{action}", headers=auth)
            assert (answer.status_code, answer.json()["code"]) == (409, "archived")
    assert await live_keys(store, game.room) == []
    assert await every_read(second, game) == before
    kept = await archive.get(game.room)
    assert kept is not None and kept.summary.result == json.loads(before["log"])["result"]
    names = {seat: name or None for seat, name in kept.summary.players.items()}
    assert names == before["summary"]["names"]
    await archive.aclose()


def _overrides(settings: Settings) -> dict[str, Any]:
    return {
        "archive_url": settings.archive_url,
        "archive_grace_seconds": settings.archive_grace_seconds,
        "archive_poll_seconds": settings.archive_poll_seconds,
    }


def _queue_key(settings: Settings, room: str) -> str:
    from olympus.store.redis_indexes import RedisDeadlines

    return RedisDeadlines(None, settings.prefix, "archive-due").key(room)  # type: ignore[arg-type]


async def _moved(store: EventStore, archive: Any, room: str) -> bool:
    return await archive.head(room) is not None and not await store.room_exists(room)


def archiving_pass(settings: Settings, kill_at: str | None) -> subprocess.CompletedProcess[str]:
    return killed_pass("archive", settings, settings.archive_url, kill_at)


async def logs(server: ServerThread, rooms: list[str]) -> dict[str, bytes]:
    async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT) as http:
        return {room: (await http.get(f"/rooms/{room}/log")).content for room in rooms}


async def archive_rows(database_url: str) -> list[tuple[str, int]]:
    connection = await asyncpg.connect(database_url)
    try:
        rows = await connection.fetch("SELECT room_id, event_count FROM games ORDER BY room_id")
    finally:
        await connection.close()
    return [(r["room_id"], r["event_count"]) for r in rows]


@pytest.mark.parametrize("step", ["copied", "dropped", "done"])
async def test_a_kill_at_any_step_loses_nothing_and_duplicates_nothing(
    step: str,
    start_server: Callable[..., ServerThread],
    archived: Settings,
    store: EventStore,
    database_url: str,
) -> None:
    # The server's own archiver makes one pass at its start and then sleeps: the passes of
    # this test are the processes it starts and kills.
    idle = {**_overrides(archived), "archive_poll_seconds": LONG_GRACE}
    server = start_server(**idle)
    rooms = [(await played_game(server, store, commands=None, seed=s))[0].room for s in (5, 6)]
    before = await logs(server, rooms)
    versions = sorted([(room, await store.version(room)) for room in rooms])
    await finish_grace(archived, *rooms)

    killed = archiving_pass(archived, kill_at=step)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    # The pass moves its rooms side by side: when the first one's step kills it, others may
    # be anywhere in theirs. Whatever is kept is whole, and every room is in one store or both.
    kept = dict(await archive_rows(database_url))
    assert kept and kept.items() <= dict(versions).items()
    live = {room for room in rooms if await store.room_exists(room)}
    assert live | set(kept) == set(rooms)
    if step == "copied":  # the first step's end: nothing was dropped yet
        assert live == set(rooms)
    else:
        assert live != set(rooms)
    reading = start_server(**idle)  # a room cut off mid-move answers as before
    assert await logs(reading, rooms) == before

    finished = archiving_pass(archived, kill_at=None)  # another process finds the work
    assert finished.returncode == 0, finished.stderr
    assert await archive_rows(database_url) == versions  # every game once, whole
    for room in rooms:
        assert await live_keys(store, room) == []
    fresh = start_server(**idle)
    assert await logs(fresh, rooms) == before


async def test_with_postgresql_down_games_go_on_and_the_backlog_drains_after(
    start_server: Callable[..., ServerThread], settings: Settings, store: EventStore
) -> None:
    postgres = EmbeddedPostgres(tempfile.mkdtemp(prefix="olympus-pg-"), durable=False).start()
    try:
        archived = replace(
            settings,
            archive_url=postgres.url,
            archive_grace_seconds=0.0,
            archive_poll_seconds=0.05,
        )
        server = start_server(**_overrides(archived))
        archive = open_archive(archived.store_config())
        early, _ = await played_game(server, store, commands=None, seed=7)
        await until(lambda: _moved(store, archive, early.room))
        [early_log] = (await logs(server, [early.room])).values()

        postgres.stop()
        late, _ = await played_game(server, store, commands=None, seed=8)  # every command acked
        fresh = start_server(**_overrides(archived))  # holds neither game
        async with httpx.AsyncClient(base_url=fresh.url, timeout=TIMEOUT) as http:
            # a guest's name is not checked against the accounts until PostgreSQL answers
            named = await http.post("/rooms", json={"side": "olympians", "name": "Quin"})
            assert named.status_code == 201, named.text
            answer = await http.get(f"/rooms/{early.room}/log")
            assert answer.status_code == 503
            assert answer.json()["code"] == "unavailable"
            assert (await http.get(f"/rooms/{late.room}/log")).status_code == 200  # still live

            def failures(metrics: str) -> float:
                line = 'olympus_archive_failures_total{cause="unavailable"} '
                return sum(float(x.split()[-1]) for x in metrics.splitlines() if x.startswith(line))

            async def failing() -> bool:
                return failures((await http.get("/metrics")).text) > 0

            await until(failing)
        assert await store.room_exists(late.room)  # waits in Redis

        postgres.start()
        await until(lambda: _moved(store, archive, late.room))  # the backlog drains
        assert (await logs(fresh, [early.room])) == {early.room: early_log}
        await archive.aclose()
    finally:
        postgres.stop()


async def test_a_backup_restored_into_an_empty_database_replays_the_same(
    start_server: Callable[..., ServerThread],
    archived: Settings,
    store: EventStore,
    postgres_server: EmbeddedPostgres,
    tmp_path: Any,
) -> None:
    """operations.md's backup: ``pg_dump -Fc`` of the archive, ``pg_restore`` into an empty
    database, and the games replay the same from it."""
    archived = replace(archived, archive_grace_seconds=0.0)
    server = start_server(**_overrides(archived))
    game, _ = await played_game(server, store, commands=None, seed=9)
    archive = open_archive(archived.store_config())
    await until(lambda: _moved(store, archive, game.room))
    await archive.aclose()
    before = await every_read(start_server(**_overrides(archived)), game)

    assert archived.archive_url is not None
    database = archived.archive_url.split("/")[3].split("?")[0]
    dump = tmp_path / "archive.dump"
    run = functools.partial(subprocess.run, check=True, capture_output=True)
    run(postgres_server.tool("pg_dump", "--format=custom", f"--file={dump}", database))
    restored = f"r_{uuid.uuid4().hex[:16]}"
    run(postgres_server.tool("createdb", restored))
    run(postgres_server.tool("pg_restore", "--no-owner", f"--dbname={restored}", str(dump)))
    try:
        on_restored = replace(archived, archive_url=postgres_server.url_of(restored))
        assert await every_read(start_server(**_overrides(on_restored)), game) == before
    finally:
        run(postgres_server.tool("dropdb", "--force", restored))


async def test_olympus_serve_archives_into_the_postgresql_it_starts() -> None:
    """``olympus serve`` as ``make serve`` runs it (embedded Redis and PostgreSQL in its data
    dir): a finished game moves to its own PostgreSQL, reads the same from there, and that
    server dies with the service, even by ``kill -9``."""
    work = Path(tempfile.mkdtemp(prefix="olympus-serve-"))
    env = {"OLYMPUS_ARCHIVE_GRACE_SECONDS": "0"}
    server = ServerProcess(
        "s", None, f"s-{uuid.uuid4().hex[:8]}", work, env=env, archive="embedded"
    )
    server.spawn()
    redis = Redis.from_url(f"unix://{server.data_dir / 'redis' / 'redis.sock'}")
    store = EventStore(redis, prefix=server.prefix)
    try:
        await server.wait_healthy()
        game, _ = await played_game(server, store, commands=None, seed=12)  # type: ignore[arg-type]
        postgres = EmbeddedPostgres(server.data_dir / "postgres")  # names it; starts nothing
        archive = open_archive(StoreConfig("memory://", archive_url=postgres.url))
        [before] = (await logs(server, [game.room])).values()  # type: ignore[arg-type]
        await until(lambda: _moved(store, archive, game.room))
        await archive.aclose()
        assert list((await logs(server, [game.room])).values()) == [before]  # type: ignore[arg-type]

        pid = int((postgres.cluster_dir / "postmaster.pid").read_text().split()[0])
        os.kill(server.pid, signal.SIGKILL)  # the service alone, not its process group
        server.proc.wait(10)  # type: ignore[union-attr]
        await until(lambda: not alive(pid))
    finally:
        await store.aclose()
        await redis.aclose()
        server.kill()
        shutil.rmtree(work, ignore_errors=True)
