"""A pass of the archiver or of the rater in an OS process of its own, killed (SIGKILL, by
itself) right after the step its argument names: what the kill tests of the archive
(test_service_archive.py) and of the ratings (test_service_ratings.py) run. A claimed room is
due again at once (a lease of 0), so the next pass finds the work the killed one left."""

from __future__ import annotations

import json
import subprocess
import sys

from olympus.server import Settings

SCRIPT = """
import asyncio, json, os, signal, sys
from olympus.server import Settings
from olympus.server.archiver import Archiver
from olympus.server.metrics import ServiceMetrics
from olympus.server.rater import Rater
from olympus.store import open_backend

args = json.loads(sys.argv[1])

def kill_at(step, room):
    if step == args["kill_at"]:
        os.kill(os.getpid(), signal.SIGKILL)

async def main():
    settings = Settings(
        redis_url=args["redis"], prefix=args["prefix"], archive_url=args["archive"],
        archive_lease_seconds=0, rating_lease_seconds=0,
    )
    backend = open_backend(settings.store_config())
    if args["pass"] == "archive":
        work = Archiver(backend, backend.archive, settings, ServiceMetrics(), on_step=kill_at)
    else:
        work = Rater(backend, settings, ServiceMetrics(), on_step=kill_at)
    print(await work.pass_once())
    await backend.aclose()

asyncio.run(main())
"""


def killed_pass(
    kind: str, settings: Settings, archive_url: str | None, kill_at: str | None
) -> subprocess.CompletedProcess[str]:
    """One pass of ``kind`` ("archive" or "rating") on the deployment of ``settings``, killed
    at ``kill_at`` (None: it runs to its end)."""
    args = {
        "pass": kind,
        "redis": settings.redis_url,
        "prefix": settings.prefix,
        "archive": archive_url,
        "kill_at": kill_at,
    }
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(args)], capture_output=True, text=True
    )
