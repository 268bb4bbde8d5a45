"""``olympus serve --workers N``: N server processes on one port, supervised by this one.

Each worker is an ordinary ``olympus serve --workers 1`` process on the same Redis (processes
are interchangeable, settings.py), listening with ``SO_REUSEPORT`` so that the kernel spreads
new connections over the workers' own accept queues. The supervisor owns what is shared (the
embedded Redis, if any) and nothing else: it serves no request.

- A worker dies with its supervisor (``PR_SET_PDEATHSIG``): a ``kill -9`` of the supervisor
  leaves no worker serving on a Redis that is about to stop.
- A worker that exits while the supervisor is not stopping is started again, so one crash does
  not take a core's share of the capacity away for good.
- SIGTERM/SIGINT to the supervisor is passed to every worker, which drains gracefully (closing
  its sockets with 1012, docs/operations.md); the supervisor returns once all have exited.
- The workers keep their metrics in a directory the supervisor makes for each of its starts
  (``PROMETHEUS_MULTIPROC_DIR``), so that any worker's ``/metrics`` adds up all of them
  (metrics.py). A worker that exits leaves its counts there and its gauges are deleted; the
  supervisor removes the directory when it returns, and at its start those that supervisors
  now gone left behind (a ``kill -9``).
"""

from __future__ import annotations

import logging
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from prometheus_client.multiprocess import mark_process_dead

from olympus.lifetime import alive, die_with, started_at

from .metrics import SHARED_DIRECTORY

log = logging.getLogger("olympus.server.workers")

# A worker that dies sooner than this after its start is restarted only after this long, so
# that a worker that cannot start (a bad setting) does not spin.
RESTART_BACKOFF_SECONDS = 1.0
STOP_TIMEOUT_SECONDS = 30.0
# The workers' metrics: ``<temp dir>/olympus-metrics-<pid>-<start>-<random>``, named after the
# supervisor (its pid and start time, olympus.lifetime) so that a later one can tell it is gone.
METRICS_PREFIX = "olympus-metrics-"


def listening_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound with SO_REUSEPORT: several processes may listen on the same port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(2048)
    sock.set_inheritable(True)
    return sock


def metrics_directory() -> str:
    """A fresh directory for the workers' metrics; first, the directories of supervisors that
    are gone are removed."""
    for left in Path(tempfile.gettempdir()).glob(f"{METRICS_PREFIX}*"):
        owner = _owner(left)
        if owner is not None and not alive(*owner):
            shutil.rmtree(left, ignore_errors=True)
    pid = os.getpid()
    return tempfile.mkdtemp(prefix=f"{METRICS_PREFIX}{pid}-{started_at(pid)}-")


def _owner(directory: Path) -> tuple[int, int] | None:
    """The pid and start time of the supervisor a metrics directory is named after."""
    parts = directory.name.removeprefix(METRICS_PREFIX).split("-")
    if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit():
        return int(parts[0]), int(parts[1])
    return None


class Supervisor:
    """Starts ``count`` workers with ``argv`` and keeps them running until told to stop."""

    def __init__(self, argv: list[str], count: int) -> None:
        self.argv = argv
        self.count = count
        self.workers: dict[int, tuple[subprocess.Popen[bytes], float]] = {}
        self.stopping = False
        self.metrics_dir = ""  # the workers' metrics, while ``run`` runs

    def _spawn(self, index: int) -> None:
        env = {**os.environ, "OLYMPUS_WORKER": str(index), SHARED_DIRECTORY: self.metrics_dir}
        proc = subprocess.Popen(self.argv, env=env, preexec_fn=die_with(os.getpid()))
        self.workers[index] = (proc, time.monotonic())
        log.info("worker %d started (pid %d)", index, proc.pid)

    def stop(self, signum: int = signal.SIGTERM) -> None:
        """Pass the stop on to every worker (a signal handler may call it)."""
        self.stopping = True
        for proc, _ in self.workers.values():
            if proc.poll() is None:
                proc.send_signal(signum)

    def run(self) -> int:
        """Supervise until stopped; then wait for the workers to drain. The exit status is 0
        unless a worker had to be killed."""
        self.metrics_dir = metrics_directory()
        try:
            return self._supervise()
        finally:
            shutil.rmtree(self.metrics_dir, ignore_errors=True)

    def _supervise(self) -> int:
        for index in range(self.count):
            self._spawn(index)
        while not self.stopping:
            for index, (proc, started) in list(self.workers.items()):
                if proc.poll() is not None and not self.stopping:
                    code = proc.returncode
                    log.warning("worker %d exited with %s; starting it again", index, code)
                    mark_process_dead(proc.pid, self.metrics_dir)  # type: ignore[no-untyped-call]
                    if time.monotonic() - started < RESTART_BACKOFF_SECONDS:
                        time.sleep(RESTART_BACKOFF_SECONDS)
                    if not self.stopping:
                        self._spawn(index)
            time.sleep(0.2)
        status = 0
        deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
        for index, (proc, _) in self.workers.items():
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.error("worker %d did not stop in time; killing it", index)
                proc.kill()
                proc.wait()
                status = 1
        return status
