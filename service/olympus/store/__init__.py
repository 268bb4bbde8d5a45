"""Storage layer: an embedded, AOF-persisted redis-server and a per-room event store on it."""

from olympus.store.batching import NotReplicated, Replicated
from olympus.store.event_store import (
    AppendResult,
    Applied,
    EventStore,
    EventStoreError,
    EventsTrimmed,
    IdReused,
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
    command_digest,
)
from olympus.store.redis_server import EmbeddedRedis

__all__ = [
    "AppendResult",
    "Applied",
    "EmbeddedRedis",
    "EventStore",
    "EventStoreError",
    "EventsTrimmed",
    "IdReused",
    "LogDiverged",
    "NotReplicated",
    "Replicated",
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
    "command_digest",
]
