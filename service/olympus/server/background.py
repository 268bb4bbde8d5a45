"""Stopping the process's background tasks (fan-out reader, clocks, legal queue, janitor)."""

from __future__ import annotations

import asyncio
import contextlib


async def cancel(*tasks: asyncio.Task[None] | None) -> None:
    """Cancel ``tasks`` and wait until they have unwound (None: never started)."""
    started = [t for t in tasks if t is not None]
    for task in started:
        task.cancel()
    for task in started:
        with contextlib.suppress(asyncio.CancelledError):
            await task
