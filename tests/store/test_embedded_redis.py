"""EmbeddedRedis process management and crash durability (kill -9, restart, replay the AOF)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
from redis.asyncio import Redis

from olympus.lifetime import alive
from olympus.store import EmbeddedRedis, EventStore, VersionConflict


async def append_acknowledged(
    store: EventStore, room_id: str, writers: int, rounds: int
) -> list[tuple[int, bytes]]:
    """Concurrent writers; returns every (version, data) whose append was acknowledged."""
    acked: list[tuple[int, bytes]] = []

    async def writer(w: int) -> None:
        for r in range(rounds):
            data = f"w{w}-r{r}".encode()
            while True:
                try:
                    res = await store.append(
                        room_id, await store.version(room_id), [data], f"{w}/{r}"
                    )
                except VersionConflict:
                    continue
                acked.append((res.version, data))
                break

    await asyncio.gather(*(writer(w) for w in range(writers)))
    return sorted(acked)


async def test_kill_9_loses_no_acknowledged_event_with_appendfsync_always(
    short_tmp_path: Path,
) -> None:
    server = EmbeddedRedis(short_tmp_path / "data", appendfsync="always").start()
    try:
        client = Redis.from_url(server.url)
        store = EventStore(client)
        epoch = await store.create_room("crash", b"meta")
        acked = await append_acknowledged(store, "crash", writers=8, rounds=25)
        assert [v for v, _ in acked] == list(range(1, 201))
        await store.save_snapshot("crash", 150, b"snap@150")
        old_pid = server.pid
        server.kill()  # SIGKILL right after the last acknowledged reply: no graceful flush
        assert not server.running
        with pytest.raises(redis.ConnectionError):
            await client.ping()
        await store.aclose()
        await client.aclose()

        server.start()
        assert server.pid != old_pid
        client = Redis.from_url(server.url)
        store = EventStore(client)
        assert await store.epoch("crash") == epoch
        assert [(e.version, e.data) for e in await store.read("crash")] == acked
        assert (await store.load("crash")).snapshot == (150, b"snap@150")
        # Dedupe table survived too, and appends continue at the right version.
        assert (await store.append("crash", 0, [b"w0-r0"], "0/0")).duplicate
        assert (await store.append("crash", 200, [b"after"])).version == 201
        await store.aclose()
        await client.aclose()
    finally:
        server.stop()


async def test_kill_9_with_everysec_recovers_a_consistent_prefix(short_tmp_path: Path) -> None:
    """everysec normally loses nothing on a process kill (the AOF was write(2)n before the
    reply), but Redis 6.2 may postpone that write while a background fsync runs, so a few
    acknowledged events can legitimately be missing. What must hold: the recovered log is a
    prefix of what was acknowledged (no gaps, no reordering, no torn batches), and appends
    resume right after it."""
    server = EmbeddedRedis(short_tmp_path / "data", appendfsync="everysec").start()
    try:
        client = Redis.from_url(server.url)
        store = EventStore(client)
        await store.create_room("crash", b"meta")
        await store.append("crash", 0, [b"a", b"b", b"c"])
        acked = await append_acknowledged(store, "crash", writers=4, rounds=25)
        server.kill()
        await store.aclose()
        await client.aclose()

        server.start()
        client = Redis.from_url(server.url)
        store = EventStore(client)
        recovered = [(e.version, e.data) for e in await store.read("crash")]
        expected = [(1, b"a"), (2, b"b"), (3, b"c"), *acked]
        assert recovered == expected[: len(recovered)]
        version = await store.version("crash")
        assert version == len(recovered)
        assert (await store.append("crash", version, [b"next"])).version == version + 1
        await store.aclose()
        await client.aclose()
    finally:
        server.stop()


def test_graceful_stop_and_restart_keeps_data(short_tmp_path: Path) -> None:
    data = short_tmp_path / "data"
    with EmbeddedRedis(data) as server:
        assert server.url == f"unix://{data / 'redis.sock'}"
        client = redis.Redis.from_url(server.url)
        client.set("k", b"v")
        client.close()
    assert not server.running
    assert (data / "appendonly.aof").stat().st_size > 0
    with EmbeddedRedis(data) as server:
        client = redis.Redis.from_url(server.url)
        assert client.get("k") == b"v"
        assert client.config_get("appendonly") == {"appendonly": "yes"}
        assert client.config_get("appendfsync") == {"appendfsync": "everysec"}
        assert client.config_get("port") == {"port": "0"}
        client.close()


def test_second_server_on_same_dir_is_refused(short_tmp_path: Path) -> None:
    data = short_tmp_path / "data"
    with EmbeddedRedis(data) as server:
        with pytest.raises(RuntimeError, match="in use"):
            EmbeddedRedis(data).start()
        assert server.running
        assert redis.Redis.from_url(server.url).ping()
    EmbeddedRedis(data).start().stop()  # the lock is released after stop


def test_invalid_arguments(short_tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="appendfsync"):
        EmbeddedRedis(short_tmp_path, appendfsync="no")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="too long"):
        EmbeddedRedis(short_tmp_path / ("d" * 120))


ORPHAN_MAKER = """
import sys, time
from olympus.store import EmbeddedRedis
server = EmbeddedRedis(sys.argv[1], appendfsync="always", die_with_parent=False).start()
print(server.pid, flush=True)
time.sleep(600)
"""


def test_an_orphaned_server_is_stopped_and_its_data_served_again(short_tmp_path: Path) -> None:
    """A redis-server whose owner died (kill -9, and it was not made to die with it) still
    holds the directory: the next start stops it gracefully and serves its AOF. A directory
    whose owner still runs is refused."""
    data = short_tmp_path / "data"
    owner = subprocess.Popen(
        [sys.executable, "-c", ORPHAN_MAKER, str(data)], stdout=subprocess.PIPE, text=True
    )
    assert owner.stdout is not None
    orphan = int(owner.stdout.readline())
    client = redis.Redis(unix_socket_path=str(data / "redis.sock"))
    client.set("acknowledged", "yes")
    client.close()
    owner.kill()
    owner.wait()
    assert alive(orphan), "the orphan should live on (die_with_parent=False)"

    server = EmbeddedRedis(data, appendfsync="always").start()
    try:
        assert not alive(orphan)
        client = redis.Redis(unix_socket_path=str(server.socket_path))
        assert client.get("acknowledged") == b"yes"
        client.close()
        with pytest.raises(RuntimeError, match="in use by a running process"):
            EmbeddedRedis(data).start()  # its owner (this process) runs
        assert server.running
    finally:
        server.stop()


def test_the_server_dies_with_its_owner(short_tmp_path: Path) -> None:
    data = short_tmp_path / "data"
    maker = ORPHAN_MAKER.replace("die_with_parent=False", "die_with_parent=True")
    owner = subprocess.Popen([sys.executable, "-c", maker, str(data)], stdout=subprocess.PIPE)
    assert owner.stdout is not None
    server_pid = int(owner.stdout.readline())
    owner.kill()
    owner.wait()
    deadline = time.monotonic() + 30
    while alive(server_pid):
        assert time.monotonic() < deadline, "redis-server outlived its owner"
        time.sleep(0.02)
