"""The archive's contract (store/ports.py, ``Archive``) on its two backends, PostgreSQL (a real
server, a database of the test's own) and memory; and a backend with an archive (tiered.py),
whose every read of a room answers the same before and after the room moved."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import msgpack
import pytest

from olympus.store import (
    Archive,
    ArchiveConflict,
    ArchiveCorrupt,
    ArchivedGame,
    ArchivedHead,
    Backend,
    EmbeddedPostgres,
    GameSummary,
    RoomArchived,
    RoomNotFound,
    StoreConfig,
    StoreUnavailable,
    chain_head,
    chain_next,
    open_archive,
    open_backend,
)
from olympus.store.archived import pack_log, stored_events, unpack_log
from olympus.store.migrate import migrations

ARCHIVES = ["memory", "postgres"]


@pytest.fixture(params=ARCHIVES)
async def archive(request: pytest.FixtureRequest) -> AsyncIterator[Archive]:
    prefix = f"a-{uuid.uuid4().hex}"
    url = "memory://" if request.param == "memory" else request.getfixturevalue("database_url")
    opened = open_archive(StoreConfig("memory://", prefix=prefix, archive_url=url))
    await opened.migrate()
    yield opened
    await opened.aclose()


def game(
    room_id: str,
    n: int = 5,
    *,
    ended_ms: int = 2_000,
    names: tuple[str, str] = ("Ann", "Bo"),
    salt: str = "",
) -> ArchivedGame:
    events = [msgpack.packb({"type": "e", "n": i, "salt": salt}) for i in range(n)]
    summary = GameSummary(
        options={"open_combat": False},
        players={"olympians": names[0], "chthonians": names[1]},
        result="olympians",
        reason="palace",
        started_ms=1_000,
        ended_ms=ended_ms,
    )
    seats = {"olympians": "1", "chthonians": "1", "name:olympians": names[0]}
    meta = msgpack.packb({"v": 1, "created_ms": 1_000})
    return ArchivedGame(room_id, 42, meta, seats, events, summary)


async def test_a_game_comes_back_as_it_was_kept(archive: Archive) -> None:
    kept = game("r1")
    head = await archive.put(kept)
    assert head == ArchivedHead(5, chain_head(kept.events))
    got = await archive.get("r1")
    assert got == kept
    assert got is not None and got.head == kept.head
    assert await archive.get("r2") is None
    assert await archive.head("r2") is None


async def test_putting_a_game_again_writes_nothing_more(archive: Archive) -> None:
    kept = game("r1")
    first = await archive.put(kept)
    assert await archive.put(game("r1")) == first
    assert await archive.room_ids() == ["r1"]
    assert [g.room_id for g in await archive.games_of("ann")] == ["r1"]


async def test_another_history_under_a_kept_id_is_refused(archive: Archive) -> None:
    kept = game("r1")
    await archive.put(kept)
    with pytest.raises(ArchiveConflict):
        await archive.put(game("r1", salt="other"))
    with pytest.raises(ArchiveConflict):
        await archive.put(game("r1", n=6))
    assert await archive.get("r1") == kept


async def test_ids_are_listed_in_order_and_paged(archive: Archive) -> None:
    for room in ["b", "a", "c-1", "C"]:
        await archive.put(game(room))
    assert await archive.room_ids() == ["C", "a", "b", "c-1"]  # as Python sorts them
    assert await archive.room_ids(offset=1, limit=2) == ["a", "b"]
    records = await archive.records(["a", "zz"])
    assert list(records) == ["a"]
    meta, seats = records["a"]
    assert meta == game("a").meta and seats == game("a").seats


async def test_a_players_games_page_newest_first(archive: Archive) -> None:
    for i in range(5):
        await archive.put(game(f"g{i}", ended_ms=10_000 + i // 2, names=("Ann", f"P{i}")))
    await archive.put(game("other", names=("Zed", "Bo")))
    first = await archive.games_of("ANN", limit=3)
    assert [g.room_id for g in first] == ["g4", "g3", "g2"]
    assert all(g.seat == "olympians" for g in first)
    last = first[-1]
    rest = await archive.games_of("ann", before=(last.summary.ended_ms, last.room_id), limit=3)
    assert [g.room_id for g in rest] == ["g1", "g0"]
    assert [g.seat for g in await archive.games_of("p3")] == ["chthonians"]
    assert await archive.games_of("nobody") == []


async def test_migrating_again_changes_nothing(archive: Archive) -> None:
    await archive.put(game("r1"))
    await archive.migrate()
    assert await archive.head("r1") is not None


async def test_the_schema_is_versioned(database_url: str) -> None:
    archive = open_archive(StoreConfig("memory://", archive_url=database_url))
    await archive.migrate()
    await archive.migrate()
    connection = await asyncpg.connect(database_url)
    try:
        rows = await connection.fetch("SELECT version, name FROM schema_migrations ORDER BY 1")
    finally:
        await connection.close()
    await archive.aclose()
    assert [(r["version"], r["name"]) for r in rows] == [(m.version, m.name) for m in migrations()]


def test_a_packed_log_unpacks_and_garbage_does_not() -> None:
    events = [b"\x81\xa1a\x01", b"", b"x" * 1000]
    assert unpack_log(pack_log(events)) == events
    with pytest.raises(ArchiveCorrupt):
        unpack_log(b"not zstd")
    chain = ""
    for stored in stored_events(events):
        chain = chain_next(chain, stored.data)
        assert stored.chain == chain
    assert chain == chain_head(events)


async def test_an_archive_that_cannot_be_reached_says_so(tmp_path: Any) -> None:
    url = f"postgresql://postgres@/olympus?host={tmp_path}&port=5432"
    archive = open_archive(StoreConfig("memory://", archive_url=url, timeout=2.0))
    with pytest.raises(StoreUnavailable):
        await archive.get("r1")
    with pytest.raises(StoreUnavailable):
        await archive.put(game("r1"))
    await archive.aclose()


# -- a backend with an archive --------------------------------------------------------------


@pytest.fixture(params=[("memory", "memory"), ("redis", "postgres")], ids=["memory", "redis"])
async def tiered(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    live, kept = request.param
    url = "memory://" if live == "memory" else request.getfixturevalue("redis_server").url
    archive_url = "memory://" if kept == "memory" else request.getfixturevalue("database_url")
    config = StoreConfig(url, prefix=f"t-{uuid.uuid4().hex}", archive_url=archive_url)
    backend = open_backend(config)
    assert backend.archive is not None
    await backend.archive.migrate()
    yield backend
    await backend.aclose()


async def reads(backend: Backend, room: str) -> dict[str, Any]:
    """Everything a caller may read of a room."""
    events, seats, rooms = backend.events, backend.seats, backend.rooms
    loaded = await events.load(room)
    return {
        "epoch": await events.epoch(room),
        "meta": await events.room_meta(room),
        "exists": await events.room_exists(room),
        "version": await events.version(room),
        "all": await events.read(room, 0),
        "tail": await events.read(room, 2, count=2),
        "load": (loaded.version, loaded.epoch, loaded.events if loaded.snapshot is None else None),
        "fields": await seats.fields(room),
        "field": await seats.field(room, "name:olympians"),
        "unset": await seats.field(room, "rematch"),
        "records": await seats.records([room, "nope"]),
        "status": await rooms.room_status(room),
        "finished": await rooms.rooms_by_status("finished"),
        "page": await rooms.rooms_by_status("finished", offset=1, limit=1),
    }


async def test_a_room_reads_the_same_before_and_after_it_moves(tiered: Backend) -> None:
    archive = tiered.archive
    assert archive is not None
    await archive.put(game("already"))
    room = "r-moving"
    events = [json.dumps({"n": i}).encode() for i in range(6)]
    epoch = await tiered.events.create_room(room, b"meta")
    await tiered.seats.write(room, {"olympians": "1", "name:olympians": "Ann"})
    chain = ""
    for version, data in enumerate(events):
        await tiered.events.append(room, version, [data], f"c{version}", chain)
        chain = chain_next(chain, data)
    await tiered.rooms.set_room_status(room, "finished")
    before = await reads(tiered, room)
    assert before["epoch"] == epoch and before["finished"] == ["already", room]

    summary = game(room).summary
    fields = await tiered.seats.fields(room)
    await archive.put(ArchivedGame(room, epoch, b"meta", fields, events, summary))
    assert await reads(tiered, room) == before  # in both stores
    assert await tiered.events.delete_room(room)
    after = await reads(tiered, room)
    assert after == before
    assert await tiered.rooms.set_room_status(room, "finished") == "finished"
    # Its seats change no more, and no seats of a room are made in the live store for it.
    assert await tiered.seats.set_once(room, "name:olympians", "Zed") == "Ann"
    with pytest.raises(RoomArchived):
        await tiered.seats.set_once(room, "rematch", "r-next")
    with pytest.raises(RoomArchived):
        await tiered.seats.bump(room, "olympians")
    assert await reads(tiered, room) == before
    with pytest.raises(RoomNotFound):
        await tiered.events.epoch("never")
    assert await tiered.seats.fields("never") == {}
    assert await tiered.rooms.room_status("never") is None


def test_the_embedded_server_restarts_on_its_files(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """A second start on the same directory finds the database the first one made."""
    import asyncio
    import tempfile

    directory = tempfile.mkdtemp(prefix="olympus-pg-")

    async def write(url: str) -> None:
        connection = await asyncpg.connect(url)
        await connection.execute("CREATE TABLE kept (n int); INSERT INTO kept VALUES (7)")
        await connection.close()

    async def read(url: str) -> int:
        connection = await asyncpg.connect(url)
        value = await connection.fetchval("SELECT n FROM kept")
        await connection.close()
        return int(value)

    with EmbeddedPostgres(directory, durable=False) as server:
        asyncio.run(write(server.url))
        first = server.pid
    server = EmbeddedPostgres(directory, durable=False).start()
    try:
        assert server.pid != first
        assert asyncio.run(read(server.url)) == 7
    finally:
        server.stop()


async def test_a_kept_games_analysis_is_written_once(archive: Archive) -> None:
    assert await archive.put_analysis("r1", b"first") is None  # no such game kept
    await archive.put(game("r1"))
    assert await archive.analysis("r1") is None
    assert await archive.put_analysis("r1", b"first") == b"first"
    assert await archive.put_analysis("r1", b"second") == b"first"
    assert await archive.analysis("r1") == b"first"
    assert await archive.analysis("r2") is None
