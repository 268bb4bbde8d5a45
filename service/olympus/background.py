"""Stopping a process's background tasks (the hints' readers, clocks, janitor, last-move writer,
snapshotter)."""

from __future__ import annotations

import asyncio
import logging

log = logging.getLogger("olympus.server")

# How long a cancelled task may take to unwind before shutdown goes on without it.
GRACE_SECONDS = 2.0


async def cancel(*tasks: asyncio.Task[None] | None) -> None:
    """Cancel ``tasks`` (None: never started) and wait, a bounded time, until they unwind.

    Bounded because a task cancelled inside a Redis call can stay stuck until the Redis clients
    are closed, which the shutdown does after stopping the tasks; asyncio's final cancellation
    then collects it. Seen in the service tests: the deadline sweeper cancelled mid-sweep kept
    ``olympus serve`` from stopping.
    """
    started = [t for t in tasks if t is not None]
    for task in started:
        task.cancel()
    if not started:
        return
    _, pending = await asyncio.wait(started, timeout=GRACE_SECONDS)
    for task in pending:
        log.warning("background task did not stop in time", extra={"task": task.get_name()})
