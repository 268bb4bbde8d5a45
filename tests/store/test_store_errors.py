"""Only the store's own errors leave it: every port of the Redis backend, with no Redis to
reach, raises ``StoreUnavailable`` (a redis-py error as its cause), never redis-py's own."""

from __future__ import annotations

import socket
from collections.abc import Awaitable, Callable

import pytest
import redis

from olympus.store import Backend, StoreConfig, StoreUnavailable, open_backend

ROOM = "room-1"


def closed_port() -> int:
    """A port nothing listens on (bound, then let go)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


CALLS: dict[str, Callable[[Backend], Awaitable[object]]] = {
    "append": lambda b: b.events.append(ROOM, 0, [b"e"], "c1"),
    "read": lambda b: b.events.read(ROOM),
    "load": lambda b: b.events.load(ROOM),
    "create_room": lambda b: b.events.create_room(ROOM, b"meta"),
    "epoch": lambda b: b.events.epoch(ROOM),
    "room_status": lambda b: b.rooms.room_status(ROOM),
    "rooms_by_status": lambda b: b.rooms.rooms_by_status("open"),
    "set_room_status": lambda b: b.rooms.set_room_status(ROOM, "open", seen=True),
    "seats": lambda b: b.seats.fields(ROOM),
    "join": lambda b: b.seats.join(ROOM, None, False, ""),
    "records": lambda b: b.seats.records([ROOM]),
    "note_moved": lambda b: b.seats.note_moved({ROOM: 1}),
    "set_due": lambda b: b.deadlines.set_due(ROOM, 1),
    "overdue": lambda b: b.deadlines.overdue(1),
    "bots": lambda b: b.bots.read([0]),
    "put_bot": lambda b: b.bots.put(ROOM, "olympians", "{}"),
    "shared_secret": lambda b: b.keys.shared_secret("k"),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
async def test_a_redis_that_does_not_answer_is_store_unavailable(
    call: Callable[[Backend], Awaitable[object]],
) -> None:
    config = StoreConfig(f"redis://127.0.0.1:{closed_port()}", timeout=1.0, retries=0)
    backend = open_backend(config)
    try:
        with pytest.raises(StoreUnavailable) as raised:
            await call(backend)
        assert isinstance(raised.value.__cause__, (redis.RedisError, OSError))
    finally:
        await backend.aclose()


async def test_a_broadcast_without_redis_is_store_unavailable() -> None:
    backend = open_backend(StoreConfig(f"redis://127.0.0.1:{closed_port()}", retries=0))
    hints = backend.hints(lambda room, version: None, lambda message: None, lambda: None)
    try:
        with pytest.raises(StoreUnavailable):
            await hints.broadcast({"kind": "revoke"})
    finally:
        await backend.aclose()
