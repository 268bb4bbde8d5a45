"""The hints on Redis: one pub/sub connection per process, one channel per watched room.

After every append the log publishes the room's new version on its hint channel
(event_store.py). A process subscribes to the hint channels of the rooms it watches (not a
pattern: a process then hears only about its own rooms) and hands each hint to its handler,
which reads the room's tail from the log. The hint is only a wake-up: pub/sub drops messages
while a connection is down, so every (re)subscription confirmation is handed on too (with no
version); confirmed means Redis now publishes to us, so nothing appended after the read that
follows is missed.

On a Redis Cluster the hints are sharded (``EventStore.sharded``): the rooms' channels are
subscribed on their slots' masters instead (sharded_hints.py), with the same rule after a gap;
a gap there costs only the rooms of the master it touched.

A control channel carries rare broadcasts between processes (token revocations): classic
pub/sub on the one connection, which a cluster delivers to the subscribers of every node.

The classic connection is our own (resp_connection.py: ``PubSubConnection``): every append's
hint comes back to the process that appended it, so each command costs one message read here;
it is parsed in C and handed to ``_dispatch`` from the protocol's ``data_received``, without a
reader task or redis-py's Python. (Un)subscriptions are written at once. A lost connection is
noticed by ``_run``, which connects again (to the next node of a cluster) and subscribes to
every channel again, instead of trusting an implicit reconnect.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from olympus.background import cancel

from .event_store import EventStore
from .ports import ControlHandler, HintHandler, Readiness
from .redis_errors import REDIS_FAILURES, store_error
from .resp_connection import PubSubConnection
from .sharded_hints import ShardedHints

log = logging.getLogger("olympus.store.hints")

# How long the classic connection may be down before the process is not ready (``readiness``):
# it connects again within one backoff (0.05 s) when a node answers, on a cluster to the next
# node when its own is lost, and its subscriptions are confirmed at once.
CLASSIC_GRACE = 1.0


class RedisHints:
    """The ``Hints`` port on Redis (ports.py)."""

    def __init__(
        self,
        redis: Redis | RedisCluster,
        pubsub_clients: list[Redis],
        connect: Callable[[str], Redis],
        store: EventStore,
        on_hint: HintHandler,
        on_control: ControlHandler,
        on_lost: Callable[[], None],
    ) -> None:
        """``pubsub_clients``: where the classic connection may go, tried in turn after a loss
        (redis_clients.py); ``connect``: a client for one node's URL (the sharded hints)."""
        self.redis = redis
        self.store = store
        self._on_hint = on_hint
        self._on_control = on_control
        self._on_lost = on_lost
        self._pubsub_clients = pubsub_clients
        self._pubsub_at = 0
        self.pubsub = PubSubConnection(pubsub_clients[0], self._pushed)
        self.control_channel = f"{store.prefix}:ctl".encode()
        self.channels: dict[bytes, str] = {}  # hint channel -> room id
        self.shards: ShardedHints | None = None  # the hints' subscriptions on a cluster
        if store.sharded:
            assert isinstance(redis, RedisCluster)
            self.shards = ShardedHints(redis, connect, self.channels, self._message, on_lost)
        self._subscribed = False  # the classic connection
        self._unsubscribed_at: float | None = None  # since when it is down (None: up)
        self._heard = False  # its Redis has answered on it
        self._task: asyncio.Task[None] | None = None

    @property
    def connected(self) -> bool:
        """Every pub/sub connection is up (and subscribed)."""
        return self._subscribed and (self.shards is None or self.shards.connected)

    async def readiness(self, timeout: float) -> Readiness:
        """Ask every Redis master of the map (on one Redis: the one) for a PING, each within
        ``timeout``, at once: the process can serve while one answers and its classic
        connection is up. The masters that do not answer, and those whose rooms' hints this
        process cannot hear now (sharded_hints.py), are the shards down: their rooms' commands
        get ``unavailable`` meanwhile, the other rooms play on."""
        since = self._unsubscribed_at
        classic = since is None or time.monotonic() - since < CLASSIC_GRACE
        redis = self.redis
        if not isinstance(redis, RedisCluster):
            try:
                await asyncio.wait_for(redis.ping(), timeout)
            except Exception as error:
                return Readiness(repr(error), classic, [])
            return Readiness(None, classic, [])
        masters = redis.get_primaries()
        replies = await asyncio.gather(
            *(asyncio.wait_for(node.execute_command("PING"), timeout) for node in masters),
            return_exceptions=True,
        )
        silent = {
            node.name: repr(reply)
            for node, reply in zip(masters, replies, strict=True)
            if isinstance(reply, BaseException)
        }
        down = sorted(silent.keys() | set(() if self.shards is None else self.shards.down))
        if len(silent) < len(masters):
            return Readiness(None, classic, down)
        return Readiness(next(iter(silent.values()), "no master known"), classic, down)

    @property
    def _classic_channels(self) -> list[bytes]:
        """What the classic connection subscribes to: the control channel, and the rooms'
        hint channels unless they are sharded."""
        return [self.control_channel, *(self.channels if self.shards is None else ())]

    async def start(self) -> None:
        await self._resubscribe()
        if self.shards is not None:
            await self.shards.start()
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        await cancel(self._task)
        if self.shards is not None:
            await self.shards.stop()
        self.pubsub.close()
        self._subscribed = False
        for client in self._pubsub_clients:
            await client.aclose()

    # -- subscriptions ----------------------------------------------------------------------

    async def watch(self, room_id: str) -> None:
        channel = self.store.hint_channel(room_id).encode()
        self.channels[channel] = room_id
        if self.shards is not None:
            await self.shards.subscribe(channel)
        else:
            self._change(self.pubsub.subscribe, channel)

    async def unwatch(self, room_id: str) -> None:
        channel = self.store.hint_channel(room_id).encode()
        if self.channels.pop(channel, None) is None:
            return
        if self.shards is not None:
            await self.shards.unsubscribe(channel)
        else:
            self._change(self.pubsub.unsubscribe, channel)

    def _change(self, change: Callable[[bytes], None], channel: bytes) -> None:
        if not self._subscribed:
            return  # ``_resubscribe`` subscribes to what ``channels`` holds once connected
        try:
            change(channel)
        except (RedisError, OSError) as error:  # lost: ``_run`` subscribes to all again
            log.warning("pub/sub change failed", extra={"error": repr(error)})

    async def broadcast(self, message: dict[str, Any]) -> None:
        """Send a control message to every process (this one included); raises
        ``StoreUnavailable`` when Redis does not take it."""
        try:
            await self.redis.publish(self.control_channel, json.dumps(message))
        except REDIS_FAILURES as error:
            raise store_error(error) from error

    # -- the reader -------------------------------------------------------------------------

    def _next_node(self) -> None:
        """After a loss: the next connection through the next client (another node of a
        cluster; the one Redis again otherwise)."""
        self.pubsub.close()
        self._pubsub_at = (self._pubsub_at + 1) % len(self._pubsub_clients)
        self.pubsub = PubSubConnection(self._pubsub_clients[self._pubsub_at], self._pushed)

    async def _resubscribe(self) -> None:
        """A fresh connection (the old one and its subscriptions dropped), subscribed to every
        channel: their confirmations make the rooms read what a gap may have hidden."""
        self._lost_classic()
        self._heard = False
        await self.pubsub.connect()
        # The channels as they are once connected, written before anything else runs: a room
        # watched while the connection was being made is among them (``_change`` skipped it).
        self.pubsub.subscribe(*self._classic_channels)
        self._subscribed = True
        self._unsubscribed_at = None

    def _lost_classic(self) -> None:
        self._subscribed = False
        if self._unsubscribed_at is None:
            self._unsubscribed_at = time.monotonic()

    async def _run(self) -> None:
        backoff = 0.05
        while True:
            error: Exception
            try:
                if not self._subscribed:
                    await self._resubscribe()
                error = await self.pubsub.lost() or RedisConnectionError(
                    "The pub/sub connection was closed."
                )
            except (RedisError, OSError) as failed:  # Redis refused or is away
                error = failed
            self._lost_classic()
            self._on_lost()
            self._next_node()
            log.warning("pub/sub connection lost", extra={"error": repr(error)})
            # From the shortest wait after a connection that worked (Redis answered on it);
            # longer each time one brought nothing (refused, closed before a word).
            backoff = 0.05 if self._heard else min(backoff * 2, 2.0)
            await asyncio.sleep(backoff)

    def _pushed(self, reply: Any) -> None:
        """A message or a confirmation on the classic connection: ``[kind, channel, data]``."""
        self._heard = True
        try:
            kind, channel, data = reply
            self._dispatch(kind.decode(), channel, data)
        except Exception:  # a bug in a handler must not stop the hints
            log.exception("pub/sub dispatch failed")

    def _message(self, message: dict[str, Any]) -> None:
        """A message as redis-py's pub/sub gives it (the sharded hints, sharded_hints.py)."""
        self._dispatch(message["type"], message["channel"], message["data"])

    def _dispatch(self, kind: str, channel: bytes, data: Any) -> None:
        if channel == self.control_channel:
            if kind == "message":
                self._on_control(json.loads(data))
            return
        room_id = self.channels.get(channel)
        if room_id is None or kind not in ("message", "subscribe", "smessage", "ssubscribe"):
            return
        hinted = int(data) if kind.endswith("message") and data.isdigit() else None
        self._on_hint(room_id, hinted)
