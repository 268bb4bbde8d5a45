"""Wake-ups on a Redis Cluster: sharded pub/sub, one connection per master that owns a room.

On a cluster the append script sends its hint by ``SPUBLISH`` to a channel in the room's own
slot (event_store.py), which only the master of that slot (and its replicas) delivers. So a
process ``SSUBSCRIBE``s to each room it holds on the master that owns the room's slot, over one
plain connection per such master, each with a reader of its own that blocks until a message
comes. (redis-py's asyncio ``ClusterPubSub`` polls its per-node connections in turn with a
timeout, and reconnects and resubscribes silently: the fan-out must notice a gap to read what it
missed.)

A gap costs only the channels it touches; the connections to the other masters, and their
subscriptions, stay as they are:

- a connection lost (its node killed, or unreachable): the channels it carried wait for a new
  subscription, and the node is *down* until a connection to it is made again;
- an ``SSUBSCRIBE`` refused with ``MOVED`` (a stale map of the slots: the client's map learns
  the slot's master, as the store does) or ``ASK`` (the slot is migrating), or an
  ``SUNSUBSCRIBE`` the process did not ask for (Redis sends one when a slot moves away from a
  node): that channel waits.

A task subscribes the waiting channels again, each on its slot's master: after a loss or an
unasked unsubscription it first reads the map of the slots again (``CLUSTER SLOTS``, through
the command client's ``NodesManager``, shared with it, which keeps the connections of the nodes
it already knows), then subscribes on each master at once (one master that does not answer
holds up no other), and while some channel still waits (its master is dead and the cluster has
not promoted its replica yet) it tries again with backoff. Each confirmation makes the fan-out
read the room's tail (redis_hints.py), so a hint lost in the gap costs nothing: the stream stays the
truth.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.crc import key_slot
from redis.exceptions import AskError, MovedError, RedisClusterException, RedisError

from olympus.background import cancel

log = logging.getLogger("olympus.store.hints")

# What a lost connection, a refused subscription or a slot no node serves raise.
LOST = (RedisError, RedisClusterException, OSError)
# The pause after each round of subscriptions while channels still wait: from FIRST_BACKOFF,
# doubling up to MAX_BACKOFF. A round costs one CLUSTER SLOTS and one connection attempt per
# master that does not answer; MAX_BACKOFF bounds how long after a failover the promoted
# replica's rooms stay unheard.
FIRST_BACKOFF = 0.05
MAX_BACKOFF = 0.5

Dispatch = Callable[[dict[str, Any]], None]


@dataclass(eq=False)
class _Shard:
    """The connection to one master and the channels subscribed there."""

    name: str  # the node, host:port
    client: Redis
    pubsub: PubSub
    channels: set[bytes] = field(default_factory=set)
    reader: asyncio.Task[None] | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one (un)subscription at a time
    closed: bool = False  # lost or let go: never used again (its pub/sub would reconnect)

    async def close(self) -> None:
        self.closed = True
        if self.reader is not asyncio.current_task():
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
        on_lost: Callable[[], None],
    ) -> None:
        """``connect``: a client for a pub/sub connection to a node's URL (redis_clients.py).
        ``wanted``: the channels to be subscribed to (the fan-out's).
        ``dispatch``: gets every message but the unsubscriptions.
        ``on_lost``: called for each connection lost or subscription moved (a counter)."""
        self.cluster = cluster
        self._connect = connect
        self._wanted = wanted
        self._dispatch = dispatch
        self._on_lost = on_lost
        self._shards: dict[str, _Shard] = {}  # node name (host:port) -> its connection
        # Wanted channels subscribed nowhere -> the node they were lost with (None: moved, or
        # not tried yet).
        self._waiting: dict[bytes, str | None] = {}
        self._down: set[str] = set()  # nodes lost, until a connection to one is made again
        self._stale = False  # the map of the slots is to be read again before subscribing
        self._wake = asyncio.Event()
        self._closing: set[asyncio.Task[None]] = set()
        self._task: asyncio.Task[None] | None = None

    @property
    def connected(self) -> bool:
        """Every wanted channel is subscribed on a connection that is up."""
        return self._task is not None and not self._waiting

    @property
    def down(self) -> list[str]:
        """The nodes (host:port) lost with channels that are not subscribed again yet: the
        rooms whose hints this process cannot hear now."""
        return sorted({node for node in self._waiting.values() if node is not None})

    async def start(self) -> None:
        await self.cluster.initialize()  # the map of the slots, if the client has none yet
        self._wait(self._wanted, None)
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        await cancel(self._task)
        shards, self._shards = list(self._shards.values()), {}
        for shard in shards:
            await shard.close()
        await asyncio.gather(*self._closing, return_exceptions=True)

    def where(self, channel: bytes) -> str | None:
        """The node (host:port) this process is subscribed to ``channel`` on."""
        return next((name for name, s in self._shards.items() if channel in s.channels), None)

    # -- subscriptions ----------------------------------------------------------------------

    async def subscribe(self, channel: bytes) -> None:
        """Subscribe on the slot's master, or leave the channel to wait if that master is down
        (or unknown): the task subscribes it once it can."""
        if channel in self._waiting or self.where(channel) is not None:
            return
        try:
            node = self._master(channel)
        except LOST:
            self._stale = True
            self._wait((channel,), None)
            return
        if node.name in self._down:
            self._wait((channel,), node.name)
            return
        await self._subscribe_on(node, [channel])

    async def unsubscribe(self, channel: bytes) -> None:
        if channel in self._waiting:
            del self._waiting[channel]
            return
        for shard in list(self._shards.values()):
            if channel not in shard.channels:
                continue
            shard.channels.discard(channel)
            if not shard.channels:  # its last room: the connection goes, its subscription too
                self._let_go(shard)
                continue
            async with shard.lock:
                if shard.closed:
                    continue
                try:
                    await shard.pubsub.sunsubscribe(channel)
                except LOST as error:
                    self._lose(shard, error)

    def _master(self, channel: bytes) -> ClusterNode:
        """The master of the channel's slot, as the client's map has it."""
        node = self.cluster.get_node_from_key(channel.decode())
        if node is None:
            raise RedisClusterException(f"no master known for {channel!r}")
        return node

    async def _subscribe_on(self, node: ClusterNode, channels: list[bytes]) -> None:
        """Subscribe ``channels`` on ``node``, over its connection (made if there is none)."""
        shard = self._shards.get(node.name)
        if shard is None:
            client = self._connect(f"redis://{node.host}:{node.port}")
            shard = self._shards[node.name] = _Shard(node.name, client, client.pubsub())
        for channel in channels:
            self._waiting.pop(channel, None)
        shard.channels.update(channels)
        async with shard.lock:
            wanted = [c for c in channels if c in shard.channels]  # not unsubscribed meanwhile
            if shard.closed or not wanted:
                return  # lost meanwhile: its channels wait again
            try:
                await shard.pubsub.ssubscribe(*wanted)
            except LOST as error:
                self._lose(shard, error)
                return
            if shard.closed:
                return  # lost while subscribing: its channels wait again
            self._down.discard(node.name)
            if shard.reader is None:  # after the first subscription: a pub/sub reads only then
                shard.reader = asyncio.get_running_loop().create_task(self._read(shard))

    def _wait(self, channels: Iterable[bytes], node: str | None) -> None:
        """``channels`` wait for the task to subscribe them (those still wanted)."""
        for channel in channels:
            if channel in self._wanted:
                self._waiting[channel] = node
        if self._waiting:
            self._wake.set()

    # -- gaps -------------------------------------------------------------------------------

    def _lose(self, shard: _Shard, reason: object) -> None:
        """``shard``'s connection is gone: its channels wait, its node is down."""
        if shard.closed:
            return
        self._let_go(shard)
        if shard.name not in self._down:  # counted once per loss, not per failed attempt
            self._down.add(shard.name)
            self._on_lost()
            log.warning("sharded pub/sub lost", extra={"error": f"{shard.name}: {reason!r}"})
        self._stale = True
        self._wait(shard.channels, shard.name)

    def _moved(self, shard: _Shard, channels: Iterable[bytes], reason: object) -> None:
        """``channels`` are no longer subscribed on ``shard`` (refused, or unsubscribed by its
        node): they wait; the connection stays for the others."""
        moved = [c for c in channels if c in shard.channels]
        if not moved:
            return
        shard.channels.difference_update(moved)
        self._on_lost()
        log.info("sharded pub/sub moved", extra={"error": f"{shard.name}: {reason!r}"})
        self._wait(moved, None)
        if not shard.channels:  # its last room: the connection goes
            self._let_go(shard)

    def _let_go(self, shard: _Shard) -> None:
        """``shard`` is never used again; its connection is closed in the background."""
        shard.closed = True
        if self._shards.get(shard.name) is shard:
            del self._shards[shard.name]
        closing = asyncio.get_running_loop().create_task(shard.close())
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)

    async def _read(self, shard: _Shard) -> None:
        while not shard.closed:
            try:
                message = await shard.pubsub.get_message(timeout=None)
            except asyncio.CancelledError:
                raise
            except AskError as refused:  # MOVED or ASK: one SSUBSCRIBE refused, for its slot
                if not isinstance(refused, MovedError):
                    self._stale = True  # migrating: the round reads the map again
                else:
                    try:  # where the slot is now, as the store does
                        await self.cluster.nodes_manager.move_slot(refused)
                    except Exception:
                        self._stale = True  # the round reads the whole map instead
                slot = refused.slot_id
                self._moved(shard, [c for c in shard.channels if key_slot(c) == slot], refused)
                continue
            except LOST as error:
                self._lose(shard, error)
                return
            if message is None:
                continue
            if message["type"] == "sunsubscribe":
                if message["channel"] in shard.channels:  # not asked for: its slot moved
                    self._stale = True
                    self._moved(shard, [message["channel"]], "unsubscribed by its node")
                continue
            try:
                self._dispatch(message)
            except Exception:  # a bug in a handler must not stop the fan-out
                log.exception("pub/sub dispatch failed")

    async def _run(self) -> None:
        backoff = FIRST_BACKOFF
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._resubscribe()
            except asyncio.CancelledError:
                raise
            except LOST as error:  # no node gave the map: tried again after the pause
                log.debug("sharded pub/sub: no map of the slots", extra={"error": repr(error)})
            except Exception:  # a bug must not stop the subscriptions for good
                log.exception("sharded pub/sub: a round of subscriptions failed")
            # At most one round per pause: a refusal (MOVED) comes after the round, and while
            # the cluster fails over, its map of the slots may still name a dead master.
            await asyncio.sleep(backoff)
            backoff = FIRST_BACKOFF if not self._waiting else min(backoff * 2, MAX_BACKOFF)
            if self._waiting:
                self._wake.set()

    async def _resubscribe(self) -> None:
        """One round: the map read again if a gap may have changed it, then every waiting
        channel subscribed on its slot's master, each master at once."""
        if not self._waiting:
            return
        if self._stale:
            self._stale = False
            try:  # a node known to be down is asked last
                last = next(iter(self._down), None)
                await self.cluster.nodes_manager.initialize(last_failed_node_name=last)
            except BaseException:
                self._stale = True
                raise
            known = {node.name for node in self.cluster.get_nodes()}
            self._down &= known  # a node gone from the map is nobody's master any more
        by_node: dict[str, tuple[ClusterNode, list[bytes]]] = {}
        for channel in list(self._waiting):
            try:
                node = self._master(channel)
            except LOST:
                self._stale = True
                continue
            by_node.setdefault(node.name, (node, []))[1].append(channel)
        await asyncio.gather(
            *(self._subscribe_on(node, channels) for node, channels in by_node.values())
        )
        if not self._waiting:
            count = sum(len(channels) for _, channels in by_node.values())
            log.info(f"sharded pub/sub: {count} rooms subscribed again")
