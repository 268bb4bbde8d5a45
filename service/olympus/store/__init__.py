"""Storage layer: an embedded, AOF-persisted redis-server and a per-room event store on it."""

from olympus.store.event_store import (
    AppendResult,
    EventStore,
    EventStoreError,
    EventsTrimmed,
    LogDiverged,
    RoomExists,
    RoomKeys,
    RoomLoad,
    RoomNotFound,
    Snapshot,
    SnapshotAhead,
    StoredEvent,
    TrimBeyondSnapshot,
    VersionConflict,
    chain_next,
)
from olympus.store.redis_server import EmbeddedRedis

__all__ = [
    "AppendResult",
    "EmbeddedRedis",
    "EventStore",
    "EventStoreError",
    "EventsTrimmed",
    "LogDiverged",
    "RoomExists",
    "RoomKeys",
    "RoomLoad",
    "RoomNotFound",
    "Snapshot",
    "SnapshotAhead",
    "StoredEvent",
    "TrimBeyondSnapshot",
    "VersionConflict",
    "chain_next",
]
