"""Service fixtures: real servers (uvicorn threads) on the session's real Redis, or, for a test
marked ``memory_store``, on the memory backend.

Each test gets its own key prefix, so rooms, lobby, secret and deadline index never leak from
one test into another; servers started in one test share its prefix, like the processes of
one deployment.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis
from service_harness import TIMEOUT, ServerThread, WsClient

from olympus.server import Settings
from olympus.server.clocks import Clocks
from olympus.server.metrics import ServiceMetrics
from olympus.server.registry import RoomRegistry
from olympus.store import MEMORY_URL, EmbeddedRedis, EventStore, open_backend

UNLIMITED_RATE = 1e9  # frames per second: no test client comes near it


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "memory_store: the test's servers and its ``store`` run on the memory backend "
        "(store/memory.py) instead of the session's Redis: for tests of the service's own logic, "
        "which the store suite shows to behave alike on both",
    )


def on_memory(request: pytest.FixtureRequest) -> bool:
    """Whether the test runs on the memory backend (``memory_store``)."""
    return request.node.get_closest_marker("memory_store") is not None


@pytest.fixture
def settings(request: pytest.FixtureRequest) -> Settings:
    """A prefix of the test's own on the session's Redis, or on the memory backend."""
    url = MEMORY_URL if on_memory(request) else request.getfixturevalue("redis_server").url
    return Settings(
        redis_url=url,
        prefix=f"svc-{uuid.uuid4().hex[:10]}",
        hello_timeout=5.0,
        deadline_poll_seconds=0.2,
        deadline_grace_ms=300,
        # Test clients play as fast as the acks come back, and a fast box makes that faster:
        # no test but the limiter's own may depend on the box's speed (they set their own).
        rate_per_second=UNLIMITED_RATE,
    )


@pytest.fixture
async def start_server(settings: Settings) -> AsyncIterator[Callable[..., ServerThread]]:
    """Start another server process on the test's prefix (settings may be overridden).

    Afterwards the test's clients are closed and the servers stopped, all while the test's
    event loop runs: a blocked loop could not answer the servers' close handshakes.
    """
    started: list[ServerThread] = []

    def start(**overrides: Any) -> ServerThread:
        server = ServerThread(replace(settings, **overrides)).start()
        started.append(server)
        return server

    yield start
    await asyncio.gather(*(client.close() for client in list(WsClient.open_clients)))
    await asyncio.gather(*(s.aclose() for s in started if s.thread.is_alive()))


@pytest.fixture
def server(start_server: Callable[..., ServerThread]) -> ServerThread:
    return start_server()


@pytest.fixture
async def http(server: ServerThread) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server.url, timeout=10) as client:
        yield client


@pytest.fixture
async def browsers() -> AsyncIterator[Callable[[ServerThread], httpx.AsyncClient]]:
    """New browsers on a server: HTTP clients, each with its own cookie jar (a player's
    session), closed after the test."""
    opened: list[httpx.AsyncClient] = []

    def new(server: ServerThread) -> httpx.AsyncClient:
        client = httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT)
        opened.append(client)
        return client

    yield new
    for client in opened:
        await client.aclose()


@pytest.fixture
async def store(request: pytest.FixtureRequest, settings: Settings) -> AsyncIterator[EventStore]:
    """The event log the servers write to, for checking what really was appended: on the
    memory backend its ``EventLog`` (typed as the Redis one's: a test that runs there uses
    only the port's methods)."""
    if on_memory(request):
        backend = open_backend(settings.store_config())
        yield backend.events  # type: ignore[misc]
        await backend.aclose()
        return
    redis_server: EmbeddedRedis = request.getfixturevalue("redis_server")
    client = Redis.from_url(redis_server.url, decode_responses=False, socket_timeout=10)
    store = EventStore(client, prefix=settings.prefix)
    yield store
    await store.aclose()
    await client.aclose()


@pytest.fixture
async def clocks(settings: Settings) -> AsyncIterator[Clocks]:
    """The service's clocks on the test's store, with a registry of their own (no server)."""
    backend = open_backend(settings.store_config())
    metrics = ServiceMetrics()
    registry = RoomRegistry(backend.events, settings, metrics)
    clocks = Clocks(backend.deadlines, registry, settings, metrics)
    yield clocks
    await clocks.stop()
    await backend.aclose()
