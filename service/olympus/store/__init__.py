"""Storage: the ports the service and the computer's worker ask of it (ports.py), and their
two backends, Redis (an embedded, AOF-persisted redis-server, one Redis or a Cluster) and
memory; the archive of finished games, PostgreSQL (an embedded server, or any) or memory.
``open_backend`` opens the ones the URLs name.

``COMPILED`` says whether its modules run compiled by mypyc (``olympus.native``) or as source.
"""

from olympus.native import runs_compiled
from olympus.store.archived import (
    ArchiveConflict,
    ArchiveCorrupt,
    ArchivedGame,
    ArchivedHead,
    GameSummary,
    PlayerGame,
    chain_head,
)
from olympus.store.batching import NotReplicated, Replicated
from olympus.store.event_store import EventStore, RoomKeys
from olympus.store.players import Account, NameTaken, RatedGame, RatingChange, Standing
from olympus.store.ports import (
    BOT_BUCKETS,
    Accounts,
    Archive,
    Backend,
    BotSeats,
    ControlHandler,
    DeadlineIndex,
    EventLog,
    Hints,
    Join,
    Players,
    Readiness,
    RoomIndex,
    RoomRecord,
    RoomSeats,
    SeekPool,
    SharedKeys,
    StoreConfig,
    WatcherCounts,
    bot_hash,
)
from olympus.store.postgres_server import EmbeddedPostgres
from olympus.store.records import (
    AppendResult,
    Applied,
    EventStoreError,
    EventsTrimmed,
    IdReused,
    LogDiverged,
    RoomArchived,
    RoomExists,
    RoomLoad,
    RoomNotFound,
    Snapshot,
    SnapshotAhead,
    StoredEvent,
    StoreUnavailable,
    TrimBeyondSnapshot,
    VersionConflict,
    chain_next,
    command_digest,
    text,
)
from olympus.store.redis_clients import CLUSTER_SCHEME, chosen_url, cluster_nodes, cluster_url
from olympus.store.redis_server import EmbeddedRedis
from olympus.store.seeks import Match, Seek
from olympus.store.wiring import MEMORY_URL, open_archive, open_backend

# Where the package's modules came from: olympus.native chose it before this module ran.
COMPILED = runs_compiled(__path__)

__all__ = [
    "BOT_BUCKETS",
    "CLUSTER_SCHEME",
    "COMPILED",
    "MEMORY_URL",
    "Account",
    "Accounts",
    "AppendResult",
    "Applied",
    "Archive",
    "ArchiveConflict",
    "ArchiveCorrupt",
    "ArchivedGame",
    "ArchivedHead",
    "Backend",
    "BotSeats",
    "ControlHandler",
    "DeadlineIndex",
    "EmbeddedPostgres",
    "EmbeddedRedis",
    "EventLog",
    "EventStore",
    "EventStoreError",
    "EventsTrimmed",
    "GameSummary",
    "Hints",
    "IdReused",
    "Join",
    "LogDiverged",
    "Match",
    "NameTaken",
    "NotReplicated",
    "PlayerGame",
    "Players",
    "RatedGame",
    "RatingChange",
    "Readiness",
    "Replicated",
    "RoomArchived",
    "RoomExists",
    "RoomIndex",
    "RoomKeys",
    "RoomLoad",
    "RoomNotFound",
    "RoomRecord",
    "RoomSeats",
    "Seek",
    "SeekPool",
    "SharedKeys",
    "Snapshot",
    "SnapshotAhead",
    "Standing",
    "StoreConfig",
    "StoreUnavailable",
    "StoredEvent",
    "TrimBeyondSnapshot",
    "VersionConflict",
    "WatcherCounts",
    "bot_hash",
    "chain_head",
    "chain_next",
    "chosen_url",
    "cluster_nodes",
    "cluster_url",
    "command_digest",
    "open_archive",
    "open_backend",
    "text",
]
