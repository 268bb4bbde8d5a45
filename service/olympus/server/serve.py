"""``olympus serve``: the app on uvicorn, on the given Redis or on an embedded one, with the
given PostgreSQL archive or an embedded one.

Without ``--redis-url``/REDIS_URL the service starts its own redis-server in the data dir with
``appendfsync always`` (docs/operations.md: an acknowledged command survives a kill -9 of
either process), and stops it after uvicorn has shut down; without ``--database-url``/
DATABASE_URL (and unless ``--no-archive``), its own PostgreSQL server in the data dir, for the
archive of finished games, fsyncing each commit. With ``--workers N`` (N > 1) this process
supervises N worker processes on the same port, Redis and archive (workers.py).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

import uvicorn

from olympus.lifetime import die_with
from olympus.native import interpreted_because, turned_off
from olympus.rules import COMPILED
from olympus.store import MEMORY_URL, EmbeddedPostgres, EmbeddedRedis, chosen_url

from . import logs
from .app import create_app
from .settings import Settings
from .workers import Supervisor, listening_socket
from .ws_protocol import UpgradeProtocol, WriteFrameProtocol

log = logging.getLogger("olympus.server")


def uvicorn_config(app: object, settings: Settings, host: str, port: int) -> uvicorn.Config:
    """uvicorn settings shared by ``olympus serve`` and the tests."""
    return uvicorn.Config(
        app,  # type: ignore[arg-type]
        host=host,
        port=port,
        lifespan="on",
        log_config=None,
        access_log=False,
        http=UpgradeProtocol,  # httptools, and a websocket's request handed over as parsed
        ws=WriteFrameProtocol,  # websockets-sansio, and frames out straight to the transport
        ws_max_size=settings.hard_frame_bytes,
        # No compression: a zlib context per socket costs more memory than the small frames
        # save, and frame sizes then follow only what a seat may see.
        ws_per_message_deflate=False,
        timeout_graceful_shutdown=10,
    )


def tune_gc(settings: Settings) -> None:
    """Fewer, cheaper garbage collections (settings.py, ``gc_thresholds``).

    Everything imported and built so far lives as long as the process: frozen, it is never
    scanned again by a full collection.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(*settings.gc_thresholds)


class _Stopped(Exception):
    """A stop signal, after uvicorn's graceful shutdown: unwind so the embedded Redis stops."""


def _stop(signum: int, frame: FrameType | None) -> None:
    raise _Stopped(signum)


# Plays the computer's seats beside a memory store, in this process (bots_worker.py,
# ``bots_thread``): given by the CLI, which sits above both the server and the bots.
InProcessBots = Callable[[str, Settings], contextlib.AbstractContextManager[object]]


def cli_serve(args: argparse.Namespace, in_process_bots: InProcessBots | None = None) -> int:
    """``olympus serve``; ``in_process_bots`` plays the computer's seats on ``--store
    memory`` (without it, nobody does there)."""
    logs.configure()
    if args.workers < 1:
        raise SystemExit("olympus serve: --workers must be at least 1")
    # uvicorn shuts down gracefully on SIGINT/SIGTERM, then re-raises the signal to the handler
    # it found installed. The default one would kill the process before the ExitStack below
    # stops the embedded redis-server (which runs in its own session and would be orphaned).
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _stop)
    with contextlib.suppress(_Stopped):
        return _serve(args, in_process_bots)
    return 0


def _serve(args: argparse.Namespace, in_process_bots: InProcessBots | None) -> int:
    with contextlib.ExitStack() as stack:
        redis_url = chosen_url(args.redis_url, args.redis_cluster)
        if args.store == "memory":
            # One process on the memory store (store/memory.py): nothing outlives it, so it
            # serves alone, and a thread of it plays the computer's seats.
            if redis_url:
                raise SystemExit("olympus serve: --store memory takes no Redis")
            if args.workers > 1:
                log.info("--store memory serves in one process: --workers %d ignored", args.workers)
            log.warning("the memory store keeps the games in this process only: they end with it")
            archive = None if args.no_archive else MEMORY_URL
            settings = Settings.from_env(redis_url=MEMORY_URL, archive_url=archive)
            if not args.no_bots and in_process_bots is not None:
                stack.enter_context(in_process_bots(local_ws_url(args.host, args.port), settings))
            return _run(args, settings, reuse_port=False)
        if not redis_url:
            data_dir = Path(args.data_dir) / "redis"
            embedded = stack.enter_context(EmbeddedRedis(data_dir, appendfsync="always"))
            redis_url = embedded.url
            log.info("embedded redis started in %s", data_dir)
        archive_url = None if args.no_archive else args.database_url
        if not args.no_archive and not archive_url:
            data_dir = Path(args.data_dir) / "postgres"
            archive_url = stack.enter_context(EmbeddedPostgres(data_dir)).url
            log.info("embedded postgresql started in %s", data_dir)
        if not args.no_bots:
            stack.enter_context(bots_worker(args.host, args.port, redis_url))
        if args.workers > 1:
            return _supervise(args, redis_url, archive_url)
        settings = Settings.from_env(redis_url=redis_url, archive_url=archive_url)
        return _run(args, settings, args.reuse_port)


def _run(args: argparse.Namespace, settings: Settings, reuse_port: bool) -> int:
    """This process serving the app on ``settings`` until it is stopped."""
    _say_how_it_runs()
    app = create_app(settings)
    tune_gc(settings)
    server = uvicorn.Server(uvicorn_config(app, settings, args.host, args.port))
    sockets = [listening_socket(args.host, args.port)] if reuse_port else None
    server.run(sockets=sockets)
    return 0


def _say_how_it_runs() -> None:
    """Log whether the command path runs compiled (``COMPILED``, chosen at import); a warning
    when a build is missing or out of date (an edited module) rather than turned off on
    purpose."""
    if COMPILED:
        log.info("the rules and the command path run compiled")
        return
    reason = interpreted_because() or "the build was made after this process had started"
    level = logging.INFO if turned_off() else logging.WARNING
    log.log(level, "the rules and the command path run interpreted, slower: %s", reason)


def local_ws_url(host: str, port: int) -> str:
    """The websocket of the service listening on ``host:port``, as this machine reaches it."""
    host = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    return f"ws://{host}:{port}/ws"


@contextlib.contextmanager
def bots_worker(host: str, port: int, redis_url: str) -> Iterator[subprocess.Popen[bytes]]:
    """``olympus bots`` beside the service: the process that plays the computer's seats over
    this service's websocket (docs/bots.md). It dies with this process."""
    argv = [sys.executable, "-m", "olympus.cli", "bots", "--server", local_ws_url(host, port)]
    proc = subprocess.Popen([*argv, "--redis-url", redis_url], preexec_fn=die_with(os.getpid()))
    log.info("bots worker started (pid %d)", proc.pid)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _supervise(args: argparse.Namespace, redis_url: str, archive_url: str | None) -> int:
    """Run ``args.workers`` worker processes on the port; return when they have all stopped."""
    argv = [sys.executable, "-m", "olympus.cli", "serve", "--workers", "1", "--reuse-port"]
    argv += ["--host", args.host, "--port", str(args.port), "--redis-url", redis_url, "--no-bots"]
    argv += ["--database-url", archive_url] if archive_url else ["--no-archive"]
    supervisor = Supervisor(argv, args.workers)
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda signum, frame: supervisor.stop(signum))
    log.info("%d workers on %s:%d", args.workers, args.host, args.port)
    return supervisor.run()
