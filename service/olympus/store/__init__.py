"""Storage layer: an embedded, AOF-persisted redis-server and a per-room event store on it.

``COMPILED`` says whether its modules run compiled by mypyc (``olympus.native``) or as source.
"""

from olympus.native import runs_compiled
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
    text,
)
from olympus.store.redis_server import EmbeddedRedis

# Where the package's modules came from: olympus.native chose it before this module ran.
COMPILED = runs_compiled(__path__)

__all__ = [
    "COMPILED",
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
    "text",
]
