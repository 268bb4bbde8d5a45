"""Fixtures: a fresh client and namespace per test (the redis-server: tests/conftest.py)."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from olympus.store import EmbeddedRedis, EventStore


@pytest.fixture(params=["redis", "cluster"])
async def redis_client(
    request: pytest.FixtureRequest, redis_server: EmbeddedRedis
) -> AsyncIterator[Redis | RedisCluster]:
    """The same store suite on one Redis and on a Redis Cluster (3 masters + 3 replicas)."""
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
