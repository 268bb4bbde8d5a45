"""Everything a server process can be tuned with, in one frozen value.

Processes are stateless apart from caches, so two processes with the same settings and the
same Redis are interchangeable; nothing here may differ between the processes of one
deployment except the listening address.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field

from olympus.store import StoreConfig

KIB = 1024


def _system_seed() -> int:
    """A fresh secret 63-bit seed (token draws, Random Setup): ``secrets``, never ``random``."""
    return secrets.randbits(63)


@dataclass(frozen=True)
class Settings:
    # Where the storage is (store/ports.py, ``StoreConfig``): ``redis://…``, ``unix://…``,
    # ``redis+cluster://host:port[,…]``, or ``memory://`` (one process, not durable).
    redis_url: str
    # Where finished games go (store/ports.py, ``Archive``): ``postgresql://…``, ``memory://``,
    # or None: they stay in the live store (archiver.py).
    archive_url: str | None = None
    # A finished room moves to the archive this long after its end (rematches and late
    # spectators meanwhile read the live store); the archiver looks every ``poll`` seconds,
    # moves at most ``batch`` rooms a pass, ``concurrency`` at once, and a room it claimed is
    # left to it this long.
    archive_grace_seconds: float = 600.0
    archive_poll_seconds: float = 5.0
    archive_batch: int = 100
    archive_concurrency: int = 8
    # The coach (server/coach.py): the processes of its pool, and how many analyses (and as
    # many hints) may wait or run at once.
    coach_processes: int = 1
    coach_queue: int = 4
    coach_iterations: int | None = None  # caps the search's iterations per decision (tests)
    archive_lease_seconds: float = 120.0
    # Rated games' ends (rater.py): how often the queue is read, how long a claim holds.
    rating_poll_seconds: float = 0.5
    rating_lease_seconds: float = 30.0
    # The leaderboard lists players of at least this many rated games.
    leaderboard_min_games: int = 5
    # Key prefix of every key and channel of this deployment (tests use one per test).
    prefix: str = "olympus"
    # HMAC key of seat tokens; None: generated once and shared through the store (tokens.py).
    secret: bytes | None = None
    # Frames above this are refused with an error frame; the connection stays usable.
    max_frame_bytes: int = 64 * KIB
    # uvicorn's hard limit: a bigger frame is not even buffered, the socket is closed (1009).
    hard_frame_bytes: int = 1024 * KIB
    # Token bucket per connection, and how many refused frames in a row close it. A person
    # never comes near 20 frames/s; a test or benchmark client that plays as fast as the
    # acks come back does, so harnesses raise it (OLYMPUS_RATE_PER_SECOND, _RATE_BURST).
    rate_per_second: float = 20.0
    rate_burst: int = 40
    rate_strikes: int = 10
    hello_timeout: float = 10.0
    # A resume further back than this many messages gets a fresh view instead.
    resume_window: int = 2000
    # Messages queued for one socket; a client that falls further behind is disconnected.
    send_queue: int = 4096
    # A socket's send buffer (connection.py, "Slow readers"): once its transport holds
    # ``send_high_water`` bytes unsent, what follows waits in the socket's queue, and a queue
    # past ``send_buffer_bytes`` while the transport is still full closes the socket (4413).
    # A close the client does not read within ``close_grace_seconds`` drops the connection.
    send_buffer_bytes: int = 512 * KIB
    send_high_water: int = 64 * KIB
    # SO_SNDBUF of each websocket, the kernel's share (it doubles it); None: its autotuning,
    # up to net.ipv4.tcp_wmem's maximum (4 MiB by default), in kernel memory, not the RSS.
    socket_send_buffer: int | None = None
    close_grace_seconds: float = 10.0
    # A room with no local socket is dropped from this process's cache after this long.
    idle_seconds: float = 60.0
    # How often a process writes its spectator counts to the store (watchers.py); a count is
    # then at most about this old, and a dead process's counts go after three times this.
    watcher_seconds: float = 2.0
    # How often the deadline index is polled, and how late a deadline must be before a
    # process that does not hold the room loads it (holders fire on their own timers).
    deadline_poll_seconds: float = 1.0
    deadline_grace_ms: int = 1000
    # Overload: while the event loop runs what is ready later than this (its lag,
    # loop_lag.py), the process refuses to create rooms (503 ``overloaded``), so that the
    # games it serves keep their pace. Negative: refuse always (a process being drained).
    overload_seconds: float = 0.5
    # A room's state is snapshotted once it is this many events past its last snapshot, so
    # that loading it is the snapshot and a short tail (snapshots.py); 0: never.
    snapshot_every: int = 100
    append_retries: int = 8
    # Replicas that must confirm each append (WAIT after the script, on its connection); 0:
    # acknowledged once on the master. Redis replicates asynchronously: without it, a master
    # lost in a failover takes its newest acknowledged events along (operations.md).
    append_replicas: int = 0
    append_replica_timeout_ms: int = 1000
    redis_pool_size: int = 64
    redis_timeout: float = 10.0
    # A Redis command whose connection failed is sent again this many times (redis_clients.py).
    redis_retries: int = 3
    # Cyclic GC thresholds of an ``olympus serve`` process (gc.set_threshold); it also freezes
    # what it loaded at start. Python's defaults (700, 10, 10) promote every command's
    # short-lived objects (legal actions) to the old generation, whose full collections then
    # scan every room held: half the CPU time at 500 rooms (docs/performance.md, "Service").
    gc_thresholds: tuple[int, int, int] = (50_000, 20, 10)
    seed_source: Callable[[], int] = field(default=_system_seed)

    def store_config(self) -> StoreConfig:
        """Where and how the process reaches its storage (``open_backend``)."""
        return StoreConfig(
            url=self.redis_url,
            prefix=self.prefix,
            timeout=self.redis_timeout,
            pool_size=self.redis_pool_size,
            retries=self.redis_retries,
            append_replicas=self.append_replicas,
            append_replica_timeout_ms=self.append_replica_timeout_ms,
            archive_url=self.archive_url,
        )

    @classmethod
    def from_env(cls, redis_url: str, **overrides: object) -> Settings:
        """Settings from the environment: OLYMPUS_SECRET, OLYMPUS_PREFIX,
        OLYMPUS_OVERLOAD_SECONDS, OLYMPUS_RATE_PER_SECOND, OLYMPUS_RATE_BURST,
        OLYMPUS_APPEND_REPLICAS, OLYMPUS_ARCHIVE_GRACE_SECONDS, OLYMPUS_LEADERBOARD_MIN_GAMES."""
        env: dict[str, object] = {}
        if secret := os.environ.get("OLYMPUS_SECRET"):
            env["secret"] = secret.encode()
        if prefix := os.environ.get("OLYMPUS_PREFIX"):
            env["prefix"] = prefix
        if overload := os.environ.get("OLYMPUS_OVERLOAD_SECONDS"):
            env["overload_seconds"] = float(overload)
        if rate := os.environ.get("OLYMPUS_RATE_PER_SECOND"):
            env["rate_per_second"] = float(rate)
        if burst := os.environ.get("OLYMPUS_RATE_BURST"):
            env["rate_burst"] = int(burst)
        if replicas := os.environ.get("OLYMPUS_APPEND_REPLICAS"):
            env["append_replicas"] = int(replicas)
        if grace := os.environ.get("OLYMPUS_ARCHIVE_GRACE_SECONDS"):
            env["archive_grace_seconds"] = float(grace)
        if board := os.environ.get("OLYMPUS_LEADERBOARD_MIN_GAMES"):
            env["leaderboard_min_games"] = int(board)
        return cls(redis_url=redis_url, **{**env, **overrides})  # type: ignore[arg-type]
