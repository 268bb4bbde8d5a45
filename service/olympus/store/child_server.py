"""A database server run as this process's private child, on its own data directory: what the
embedded Redis (redis_server.py) and the embedded PostgreSQL (postgres_server.py) share.

One server per directory: an exclusive ``flock`` on ``embedded-<name>.lock``, inherited by the
child, is held while either this object or the server process is alive. The server does not
outlive the process that started it (``die_with_parent``: it gets its stop signal even after a
``kill -9`` of its owner). A server that still holds the directory when a new one starts there
is an orphan if the process that started it is gone (``embedded-<name>.owner`` names both, by
pid and start time): it is stopped the same graceful way, and the new one starts on its files.
A directory whose owner still runs is refused.
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
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Self

from olympus.lifetime import alive, die_with, started_at


def _terminate(proc: subprocess.Popen[bytes], signum: int) -> None:
    """Last-resort cleanup at garbage collection / interpreter exit: never leak a server."""
    if proc.poll() is None:
        proc.send_signal(signum)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class ChildServer:
    """The life of one server process on ``data_dir``; a subclass says how it is prepared,
    started and asked whether it is ready. ``stop_signal`` is the one the server shuts down
    cleanly on (and is sent if its owner dies)."""

    name = "server"
    stop_signal = signal.SIGTERM

    def __init__(
        self,
        data_dir: str | os.PathLike[str],
        *,
        startup_timeout: float = 30.0,
        die_with_parent: bool = True,
    ) -> None:
        self.data_dir = Path(data_dir).resolve()
        self.startup_timeout = startup_timeout
        self.die_with_parent = die_with_parent
        self.owner_path = self.data_dir / f"embedded-{self.name}.owner"
        self.log_path = self.data_dir / f"{self.name}.log"
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock_fd: int | None = None
        self._finalizer: weakref.finalize[..., None] | None = None

    # -- what a subclass says ----------------------------------------------------------------

    def _prepare(self) -> list[str]:
        """Make the directory ready (configuration, first initialisation); return the argv."""
        raise NotImplementedError

    def _ready(self) -> bool:
        """Whether the started server answers; raises nothing."""
        raise NotImplementedError

    def _child_setup(self) -> Callable[[], None] | None:
        """Extra work in the child before it runs the server (e.g. another user)."""
        return None

    def _after_ready(self) -> None:
        """Work once the server answers for the first time in this start."""

    # -- the life ---------------------------------------------------------------------------

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> Self:
        """Start the server and block until it answers."""
        if self.running:
            raise RuntimeError(f"{self.name} already running")
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._acquire_lock()
        try:
            argv = self._prepare()
            setup = self._child_setup()
            death = die_with(os.getpid(), self.stop_signal) if self.die_with_parent else None

            def preexec() -> None:
                if setup is not None:
                    setup()  # before the death signal: a change of user clears it
                if death is not None:
                    death()

            with open(self.log_path, "ab") as log:
                self._proc = subprocess.Popen(
                    argv,
                    cwd=self.data_dir,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    pass_fds=(self._lock_fd,) if self._lock_fd is not None else (),
                    # Own session: a Ctrl-C in the terminal must not kill the store before the
                    # service has shut down cleanly; the service stops it explicitly.
                    start_new_session=True,
                    preexec_fn=preexec,
                )
            stopping = (self._proc, self.stop_signal)
            self._finalizer = weakref.finalize(self, _terminate, *stopping)  # type: ignore[arg-type]
            self._write_owner()
            self._wait_ready()
            self._after_ready()
        except BaseException:
            self.kill()
            raise
        return self

    def _wait_ready(self) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + self.startup_timeout
        while not self._ready():
            if self._proc.poll() is not None:
                raise RuntimeError(
                    f"{self.name} exited with {self._proc.returncode}:\n{self.log_tail()}"
                )
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"{self.name} not ready after {self.startup_timeout}s:\n{self.log_tail()}"
                )
            time.sleep(0.02)

    def log_tail(self, limit: int = 2000) -> str:
        path = self.log_path
        return path.read_text(errors="replace")[-limit:] if path.exists() else ""

    def stop(self, timeout: float = 30.0) -> None:
        """Graceful stop (``stop_signal``); SIGKILL if it takes longer than ``timeout``."""
        if self._proc is None:
            self._release_lock()
            return
        if self._proc.poll() is None:
            self._proc.send_signal(self.stop_signal)
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

    def _reap(self, timeout: float | None) -> None:
        assert self._proc is not None
        self._proc.wait(timeout=timeout)
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        self._proc = None
        self._release_lock()

    # -- one server per directory -----------------------------------------------------------

    def _acquire_lock(self) -> None:
        path = self.data_dir / f"embedded-{self.name}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
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
        """The directory is locked: stop its server if the process that started it is gone
        (``stop_signal``: it shuts down cleanly, releasing the lock); refuse otherwise."""
        try:
            owner = json.loads(self.owner_path.read_text())
            owner_pid, server_pid = int(owner["owner"]), int(owner["server"])
            owner_start, server_start = int(owner["owner_start"]), int(owner["server_start"])
        except (OSError, ValueError, KeyError, TypeError):
            raise RuntimeError(f"{self.data_dir} is in use by another {self.name}") from None
        if alive(owner_pid, owner_start):
            raise RuntimeError(
                f"{self.data_dir} is in use by a running process (pid {owner_pid}) and its "
                f"{self.name} (pid {server_pid})"
            )
        if alive(server_pid, server_start):
            with contextlib.suppress(ProcessLookupError):
                os.kill(server_pid, self.stop_signal)

    def _write_owner(self) -> None:
        assert self._proc is not None
        owner, server = os.getpid(), self._proc.pid
        record = {
            "owner": owner,
            "owner_start": started_at(owner),
            "server": server,
            "server_start": started_at(server),
        }
        self.owner_path.write_text(json.dumps(record) + "\n")

    def _release_lock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # closing drops our reference to the flock
            self._lock_fd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
