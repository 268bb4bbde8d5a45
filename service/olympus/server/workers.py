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
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import time

from olympus.lifetime import die_with

log = logging.getLogger("olympus.server.workers")

# A worker that dies sooner than this after its start is restarted only after this long, so
# that a worker that cannot start (a bad setting) does not spin.
RESTART_BACKOFF_SECONDS = 1.0
STOP_TIMEOUT_SECONDS = 30.0


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


class Supervisor:
    """Starts ``count`` workers with ``argv`` and keeps them running until told to stop."""

    def __init__(self, argv: list[str], count: int) -> None:
        self.argv = argv
        self.count = count
        self.workers: dict[int, tuple[subprocess.Popen[bytes], float]] = {}
        self.stopping = False

    def _spawn(self, index: int) -> None:
        env = {**os.environ, "OLYMPUS_WORKER": str(index)}
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
        for index in range(self.count):
            self._spawn(index)
        while not self.stopping:
            for index, (proc, started) in list(self.workers.items()):
                if proc.poll() is not None and not self.stopping:
                    code = proc.returncode
                    log.warning("worker %d exited with %s; starting it again", index, code)
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
