"""Child processes that do not outlive the process that started them, and proof of who that
process was (a pid alone can be reused by the kernel).

Used by ``olympus serve``: the embedded redis-server (store/redis_server.py) and the workers of
``--workers N`` (server/workers.py) get SIGTERM when their parent dies, even by ``kill -9``.
The processes that search (the computer's worker, the coach's pool) run at idle priority
(``idle_priority``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def die_with(parent: int, signum: int = signal.SIGTERM) -> Callable[[], None]:
    """A ``preexec_fn``: the child gets ``signum`` when its parent dies (Linux; the parent is
    the thread that forks, so fork from a thread that lives as long as the process), and exits
    at once if the parent is already gone (the fork raced its death)."""

    def preexec() -> None:
        if sys.platform.startswith("linux"):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum)
        if os.getppid() != parent:
            os._exit(1)

    return preexec


def started_at(pid: int) -> int | None:
    """When the process ``pid`` started (clock ticks since boot), None if there is none (or a
    zombie): with the pid, it names one process for good."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else int(fields[19])


def alive(pid: int, start: int | None = None) -> bool:
    """Whether ``pid`` runs (not a zombie); given ``start``, whether it is still the process
    that started then."""
    now = started_at(pid)
    return now is not None and (start is None or now == start)


def children(pid: int) -> list[int]:
    """The processes ``pid`` started that are still its children (Linux ``/proc``)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def idle_priority() -> None:
    """The search is the one thing here that may wait: on a box it shares with the service, a
    person's command goes first. Linux's SCHED_IDLE runs this process only on a core nothing
    else wants, and a waking service process preempts it at once (a niceness only weighs the
    shares); elsewhere the lowest niceness. bench/load_bench.py --bot-rooms measures it."""
    if hasattr(os, "SCHED_IDLE"):
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    else:
        os.nice(19)
