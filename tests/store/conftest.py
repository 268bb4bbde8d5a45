"""Fixtures: each port on every backend (``backend``: memory, one Redis, a Redis Cluster), and
for the tests of Redis itself a fresh client and namespace per test (the redis-server:
tests/conftest.py)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from olympus.store import (
    Backend,
    BotSeats,
    DeadlineIndex,
    EmbeddedRedis,
    EventLog,
    EventStore,
    RoomIndex,
    RoomSeats,
    SharedKeys,
    StoreConfig,
    open_backend,
)
from olympus.store.local_cluster import LocalCluster

BACKENDS = ["memory", "redis", "cluster"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test on the ``backend`` Cluster goes with the other tests on the session's cluster
    (tests/conftest.py: one xdist worker runs them all)."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("backend") == "cluster":
            item.add_marker(pytest.mark.xdist_group("cluster"))


def backend_url(request: pytest.FixtureRequest, kind: str) -> str:
    """The URL of the storage ``kind`` names, started for the session if it must be."""
    if kind == "memory":
        return "memory://"
    if kind == "redis":
        server: EmbeddedRedis = request.getfixturevalue("redis_server")
        return server.url
    cluster: LocalCluster = request.getfixturevalue("redis_cluster")
    return "redis+cluster://" + ",".join(node.address for node in cluster.nodes)


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    """Every port of one backend, on a prefix of the test's own (so that the global indexes of
    two tests never meet), opened inside the test's event loop and closed after it."""
    config = StoreConfig(backend_url(request, request.param), prefix=f"t-{uuid.uuid4().hex}")
    opened = open_backend(config)
    yield opened
    await opened.aclose()


@pytest.fixture
def events(backend: Backend) -> EventLog:
    return backend.events


@pytest.fixture
def rooms(backend: Backend) -> RoomIndex:
    return backend.rooms


@pytest.fixture
def seats(backend: Backend) -> RoomSeats:
    return backend.seats


@pytest.fixture
def deadlines(backend: Backend) -> DeadlineIndex:
    return backend.deadlines


@pytest.fixture
def bots(backend: Backend) -> BotSeats:
    return backend.bots


@pytest.fixture
def keys(backend: Backend) -> SharedKeys:
    return backend.keys


@pytest.fixture(params=["redis", "cluster"])
async def redis_client(
    request: pytest.FixtureRequest, redis_server: EmbeddedRedis
) -> AsyncIterator[Redis | RedisCluster]:
    """The tests of Redis itself on one Redis and on a Redis Cluster (3 masters + 3
    replicas)."""
    # Created inside the test's event loop: asyncio connections must not cross loops.
    client: Redis | RedisCluster
    if request.param == "cluster":
        cluster = request.getfixturevalue("redis_cluster")
        client = RedisCluster.from_url(f"redis://{cluster.nodes[0].address}", socket_timeout=10)
    else:
        client = Redis.from_url(redis_server.url, decode_responses=False, socket_timeout=10)
    yield client
    await client.aclose()


@pytest.fixture
def room_id() -> str:
    return f"room-{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def store(redis_client: Redis) -> AsyncIterator[EventStore]:
    # A unique prefix isolates the (global) lobby index between tests.
    store = EventStore(redis_client, prefix=f"test-{uuid.uuid4().hex[:8]}")
    yield store
    await store.aclose()


@pytest.fixture
def short_tmp_path(tmp_path: Path) -> Path:
    """tmp_path is short enough for a unix socket path under /tmp; fail loudly otherwise."""
    assert len(str(tmp_path)) < 90, tmp_path
    return tmp_path
