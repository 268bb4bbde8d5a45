"""Fixtures shared by every test directory: one real redis-server per test session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from olympus.store import EmbeddedRedis


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    with EmbeddedRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server
