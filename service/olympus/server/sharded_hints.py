"""Wake-ups on a Redis Cluster: sharded pub/sub, one connection per master that owns a room.

On a cluster the append script sends its hint by ``SPUBLISH`` to a channel in the room's own
slot (event_store.py), which only the master of that slot (and its replicas) delivers. So a
process ``SSUBSCRIBE``s to each room it holds on the master that owns the room's slot, over one
plain connection per such master, each with a reader of its own that blocks until a message
comes. (redis-py's asyncio ``ClusterPubSub`` polls its per-node connections in turn with a
timeout, and reconnects and resubscribes silently: the fan-out must notice a gap to read what it
missed.)

Every gap is handled one way: a connection lost (its node killed), an ``SSUBSCRIBE`` refused
with ``MOVED`` (a stale map of the slots), or an ``SUNSUBSCRIBE`` the process did not ask for
(Redis sends one when a slot moves away from a node). Every connection is closed, the map of
the slots is read again from the cluster (``CLUSTER SLOTS``, through the command client's
``NodesManager``, shared with it), and every channel is subscribed again on its slot's master,
with backoff while the cluster fails over. Each confirmation makes the fan-out read the room's
tail (fanout.py), so a hint lost in the gap costs nothing: the stream stays the truth.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import ClusterDownError, RedisClusterException, RedisError

from .background import cancel
from .metrics import ServiceMetrics

log = logging.getLogger("olympus.server.fanout")

# What a lost connection, a refused subscription or a slot no node serves raise.
LOST = (RedisError, RedisClusterException, OSError)

Dispatch = Callable[[dict[str, Any]], None]


@dataclass
class _Shard:
    """The connection to one master and the channels subscribed there."""

    client: Redis
    pubsub: PubSub
    channels: set[bytes] = field(default_factory=set)
    reader: asyncio.Task[None] | None = None

    async def close(self) -> None:
        await cancel(self.reader)
        with contextlib.suppress(*LOST):
            await self.pubsub.aclose()
            await self.client.aclose()


class ShardedHints:
    def __init__(
        self,
        cluster: RedisCluster,
        connect: Callable[[str], Redis],
        wanted: Mapping[bytes, object],
        dispatch: Dispatch,
        metrics: ServiceMetrics,
    ) -> None:
        """``connect``: a client for a pub/sub connection to a node's URL (redis_clients.py).
        ``wanted``: the channels to be subscribed to (the fan-out's, read at each gap).
        ``dispatch``: gets every message but the unsubscriptions."""
        self.cluster = cluster
        self._connect = connect
        self._wanted = wanted
        self._dispatch = dispatch
        self._metrics = metrics
        self._shards: dict[str, _Shard] = {}  # node name (host:port) -> its connection
        self._lock = asyncio.Lock()  # one subscription change at a time
        self._gap = asyncio.Event()
        self.connected = False
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self._regroup()
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        await cancel(self._task)
        await self._close()

    def where(self, channel: bytes) -> str | None:
        """The node (host:port) this process is subscribed to ``channel`` on."""
        return next((name for name, s in self._shards.items() if channel in s.channels), None)

    # -- subscriptions ----------------------------------------------------------------------

    async def subscribe(self, channel: bytes) -> None:
        async with self._lock:  # after a regroup under way, which may have missed it
            if self._gap.is_set() or self.where(channel) is not None:
                return  # the next regroup subscribes everything wanted
            try:
                await self._subscribe(channel)
            except LOST as error:
                self._lost(error)

    async def unsubscribe(self, channel: bytes) -> None:
        async with self._lock:
            try:
                for name, shard in list(self._shards.items()):
                    if channel not in shard.channels:
                        continue
                    shard.channels.discard(channel)
                    if shard.channels:
                        await shard.pubsub.sunsubscribe(channel)
                    else:  # its last room: the connection goes, and its subscription with it
                        del self._shards[name]
                        await shard.close()
            except LOST as error:
                self._lost(error)

    async def _subscribe(self, channel: bytes) -> None:
        node = self.cluster.get_node_from_key(channel.decode())  # its slot's master, as last known
        if node is None:
            raise ClusterDownError(f"no master known for {channel!r}")
        shard = self._shards.get(node.name)
        if shard is None:
            client = self._connect(f"redis://{node.host}:{node.port}")
            shard = self._shards[node.name] = _Shard(client, client.pubsub())
        shard.channels.add(channel)
        await shard.pubsub.ssubscribe(channel)
        if shard.reader is None:  # after the first subscription: a pub/sub reads only then
            shard.reader = asyncio.get_running_loop().create_task(self._read(shard))

    # -- gaps -------------------------------------------------------------------------------

    def _lost(self, reason: object) -> None:
        if self.connected:
            self._metrics.pubsub_reconnects.inc()
            log.warning("sharded pub/sub lost", extra={"error": repr(reason)})
        self.connected = False
        self._gap.set()

    async def _read(self, shard: _Shard) -> None:
        while True:
            try:
                message = await shard.pubsub.get_message(timeout=None)
                if message is None:
                    continue
                if message["type"] == "sunsubscribe":
                    if message["channel"] in shard.channels:  # not asked for: its slot moved
                        self._lost(f"{message['channel']!r} unsubscribed by its node")
                        return
                    continue
                self._dispatch(message)
            except asyncio.CancelledError:
                raise
            except LOST as error:
                self._lost(error)
                return
            except Exception:  # a bug in a handler must not stop the fan-out
                log.exception("pub/sub dispatch failed")

    async def _run(self) -> None:
        backoff = 0.05
        while True:
            await self._gap.wait()
            try:
                await self._regroup()
            except asyncio.CancelledError:
                raise
            except LOST as error:
                self._lost(error)
            # At most one regroup per backoff: a refusal (MOVED) comes after the regroup, and
            # while the cluster fails over, its map of the slots may still name a dead master.
            await asyncio.sleep(backoff)
            backoff = 0.05 if self.connected else min(backoff * 2, 2.0)

    async def _regroup(self) -> None:
        """Every connection closed, the slots' masters asked again, every channel subscribed
        again on its own: the confirmations make the fan-out read every room's tail."""
        async with self._lock:
            self._gap.clear()
            await self._close()
            await self.cluster.nodes_manager.initialize()
            for channel in list(self._wanted):
                await self._subscribe(channel)
            self.connected = not self._gap.is_set()

    async def _close(self) -> None:
        shards, self._shards = list(self._shards.values()), {}
        for shard in shards:
            await shard.close()
