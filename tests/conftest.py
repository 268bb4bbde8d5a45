"""Fixtures shared by every test directory: one real redis-server per pytest process, (for the
tests that ask for it) one real Redis Cluster of 3 masters and 3 replicas, one real PostgreSQL
server per pytest process with a database of its own for each test that asks, and the failover
report in the terminal summary; under pytest-xdist, which tests share a worker."""

from __future__ import annotations

import subprocess
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from olympus.store import EmbeddedPostgres, EmbeddedRedis
from olympus.store.local_cluster import LocalCluster, available


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    with EmbeddedRedis(tmp_path_factory.mktemp("redis")) as server:
        yield server


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[EmbeddedPostgres]:
    """The embedded PostgreSQL (the wheel's server, as ``make serve`` runs it), without fsync:
    the tests crash processes, not the machine. Its directory is outside pytest's temporary
    tree, which is private to root while PostgreSQL runs as ``nobody`` there."""
    with EmbeddedPostgres(tempfile.mkdtemp(prefix="olympus-pg-"), durable=False) as server:
        yield server


@pytest.fixture
def database_url(postgres_server: EmbeddedPostgres) -> Iterator[str]:
    """A new empty database on the session's PostgreSQL, dropped after the test (the
    server's own ``createdb`` and ``dropdb``: a synchronous fixture, which an asynchronous one
    may ask for too)."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    subprocess.run(postgres_server.tool("createdb", name), check=True, capture_output=True)
    yield postgres_server.url_of(name)
    subprocess.run(postgres_server.tool("dropdb", "--force", name), capture_output=True)


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[LocalCluster]:
    """Debian's redis-server (7.x), which ``make test`` installs: its absence is a failure."""
    assert available(), "redis-server/redis-cli not found: run `make test` (it installs them)"
    cluster = LocalCluster(Path(tempfile.mkdtemp(prefix="olympus-cluster-"))).start()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist with ``--dist loadgroup`` (``make test``: a process per core), the
    tests on a Redis Cluster run in one worker, one after another as in a single process: the
    session's cluster of six redis-servers is started once, and no two tests time failovers
    at once. (That is, every test that asks for ``redis_cluster``, and every test of a module
    that starts clusters of its own.) Every other test goes to whichever worker is free."""
    for item in items:
        if _on_a_cluster(item):
            item.add_marker(pytest.mark.xdist_group("cluster"))


def _on_a_cluster(item: pytest.Item) -> bool:
    """Whether ``item`` asks for ``redis_cluster`` (directly, or as the store's suite does:
    its ``redis_client`` parameter ``cluster``), or its module starts a ``LocalCluster``."""
    callspec = getattr(item, "callspec", None)
    client = callspec.params.get("redis_client") if callspec is not None else None
    module = getattr(item, "module", None)
    return (
        "redis_cluster" in getattr(item, "fixturenames", ())
        or client == "cluster"
        or getattr(module, "LocalCluster", None) is LocalCluster
    )


FAILOVER_REPORT = pytest.StashKey[list[str]]()
_REPORTED = "failover report"  # the key of a test's report lines among its user properties


@pytest.fixture
def failover_report(request: pytest.FixtureRequest) -> Callable[[str], None]:
    """Report a line in the "failover report" section of the terminal summary. What a failover
    test saw survive is a finding to read in every run, not only when it fails: a print would be
    swallowed by pytest's capture. The line travels with the test's report (its user
    properties), so that under pytest-xdist the controller, which writes the summary, has it."""
    name = request.node.name
    return lambda line: request.node.user_properties.append((_REPORTED, f"{name}: {line}"))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Collect the report lines of each test once, from its teardown's report (in the process
    that writes the summary: the only one, or xdist's controller)."""
    if report.when != "teardown":
        return
    lines = [value for key, value in report.user_properties if key == _REPORTED]
    if lines:
        _CONFIG[0].stash.setdefault(FAILOVER_REPORT, []).extend(lines)


_CONFIG: list[pytest.Config] = []  # this process's (the hook above is given no config)


def pytest_configure(config: pytest.Config) -> None:
    _CONFIG.append(config)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    lines = terminalreporter.config.stash.get(FAILOVER_REPORT, [])
    if lines:
        terminalreporter.section("failover report")
        for line in lines:
            terminalreporter.write_line(line)
