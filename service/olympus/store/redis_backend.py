"""The Redis backend: every port of ports.py on one Redis or a Redis Cluster.

Which of the two is chosen once, here, from the URL (redis_clients.py): the clients, the
log's way of calling Redis (its own connection on one Redis, slot-aware calls on a cluster:
event_store.py) and the hints' way of hearing (classic or sharded pub/sub: redis_hints.py)
follow from it, and no caller branches on it again.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .batching import Replicated
from .event_store import EventStore
from .ports import Accounts, Archive, ControlHandler, HintHandler, StoreConfig
from .redis_clients import command_client, pubsub_client, pubsub_clients
from .redis_hints import RedisHints
from .redis_indexes import RedisAnalyses, RedisBotSeats, RedisDeadlines, RedisSharedKeys
from .redis_players import RedisPlayers
from .redis_seats import RedisSeats
from .redis_seeks import RedisSeeks
from .watchers import RedisWatcherCounts


class RedisBackend:
    """The ``Backend`` port on Redis (ports.py); connections are made on first use."""

    def __init__(self, config: StoreConfig) -> None:
        self.config = config
        self.redis = command_client(config)
        replicated = (
            Replicated(config.append_replicas, config.append_replica_timeout_ms)
            if config.append_replicas
            else None
        )
        self.events = EventStore(self.redis, prefix=config.prefix, replicated=replicated)
        self.rooms = self.events  # the lobby's status index is kept by the log's store
        self.seats = RedisSeats(self.events)
        self.deadlines = RedisDeadlines(self.redis, config.prefix)
        self.archive_queue = RedisDeadlines(self.redis, config.prefix, "archive-due")
        self.rating_queue = RedisDeadlines(self.redis, config.prefix, "rating-due")
        self.archive: Archive | None = None  # tiered.py gives a backend its archive
        self.accounts: Accounts | None = None  # and its accounts
        self.players = RedisPlayers(self.redis, config.prefix)
        self.seeks = RedisSeeks(self.redis, config.prefix)
        self.watchers = RedisWatcherCounts(self.redis, config.prefix)
        self.bots = RedisBotSeats(self.redis, config.prefix)
        self.keys = RedisSharedKeys(self.redis, config.prefix)
        self.analyses = RedisAnalyses(self.redis, self.events.analysis_key)

    def hints(
        self, on_hint: HintHandler, on_control: ControlHandler, on_lost: Callable[[], None]
    ) -> RedisHints:
        return RedisHints(
            self.redis,
            pubsub_clients(self.config),
            functools.partial(pubsub_client, self.config),
            self.events,
            on_hint,
            on_control,
            on_lost,
        )

    async def aclose(self) -> None:
        await self.events.aclose()
        await self.redis.aclose()
