"""Fixtures shared by every test directory: one real redis-server per test session, and (for
the tests that ask for it) one real Redis Cluster of 3 masters and 3 replicas."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from olympus.store import EmbeddedRedis
from olympus.store.local_cluster import LocalCluster, available


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    with EmbeddedRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[LocalCluster]:
    """Debian's redis-server (7.x), which ``make test`` installs: its absence is a failure."""
    assert available(), "redis-server/redis-cli not found: run `make test` (it installs them)"
    cluster = LocalCluster(Path(tempfile.mkdtemp(prefix="olympus-cluster-"))).start()
    try:
        yield cluster
    finally:
        cluster.stop()
