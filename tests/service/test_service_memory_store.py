"""``olympus serve --store memory``: the whole service in one process, without Redis.

A real ``olympus serve`` process on the memory backend serves the lobby and plays the
computer's seats (its bots run in a thread of it, on the same memory); what it held is gone
once it stops.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import httpx
from process_harness import ServerProcess

BOT_ENV = {"OLYMPUS_BOT_ITERATIONS": "3", "OLYMPUS_BOT_REPLY_SECONDS": "0"}
TIMEOUT = 60.0
LEVELS = {"olympians": "easy", "chthonians": "easy"}


async def spectators_messages(http: httpx.AsyncClient, room: str) -> int:
    """How many messages the room's spectators have been sent (its whole log once over)."""
    log = (await http.get(f"/rooms/{room}/log")).json()
    return len(log["events"] if log["over"] else log["messages"])


async def test_the_memory_store_serves_and_plays_the_computer_in_one_process(
    tmp_path: Path,
) -> None:
    prefix = f"mem-{uuid.uuid4().hex[:8]}"
    server = ServerProcess(
        "mem", None, prefix, tmp_path, env=BOT_ENV, bots=True, store="memory", archive="embedded"
    )
    server.spawn()
    try:
        await server.wait_healthy()
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            reply = await http.post("/rooms/watch", json=LEVELS)
            assert reply.status_code == 201, reply.text
            room = reply.json()["room"]
            # The computer plays both seats: the spectators' messages grow past the start.
            deadline = time.monotonic() + TIMEOUT
            while (count := await spectators_messages(http, room)) < 5:
                assert time.monotonic() < deadline, f"{count} messages:\n{server.log_tail()}"
                await asyncio.sleep(0.1)
        log = server.log_tail(100_000)
        assert "memory store" in log and "embedded redis" not in log
        server.stop()
        server.spawn()  # nothing outlived the process
        await server.wait_healthy()
        async with httpx.AsyncClient(base_url=server.url, timeout=10) as http:
            assert (await http.get(f"/rooms/{room}")).status_code == 404
    finally:
        server.kill()
