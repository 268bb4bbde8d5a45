"""A room's commands on a Redis Cluster, sent so that a migration of the room's slot delays
them instead of failing them.

While a slot is resharded (``CLUSTER SETSLOT … IMPORTING`` on its new master, ``MIGRATING`` on
its old one, then ``MIGRATE`` of its keys, one by one or in batches, then ``SETSLOT … NODE``),
the old master serves a command whose keys it still has all of, answers ``ASK <new master>``
for one whose keys it has none of (gone, or never written), and ``TRYAGAIN`` for one whose keys
are split between the two; the new master serves a command preceded by ``ASKING`` on the same
connection if it has all its keys, and answers ``TRYAGAIN`` otherwise. Once the slot is given
away, the old master answers ``MOVED``. Each of these refusals means that nothing ran, so
sending the command again is always safe.

redis-py's asyncio ``RedisCluster`` (8.1) does not get through a migration. It follows ``ASK``
by sending ``ASKING`` as a command of its own, on one pooled connection, and then the command on
whichever connection is free next: when a room's commands run concurrently the command often
arrives without ``ASKING``, the new master (which does not own the slot yet) answers ``MOVED``
back to the old one, and after 16 such hops the call fails with ``ClusterError("TTL
exhausted.")``; meanwhile every fifth ``MOVED`` closes all the client's connections, failing
the other commands in flight (``ConnectionError``, even ``AttributeError``). A ``TRYAGAIN`` it
sends again 16 times in about 0.4 s, then gives up the same way. Seen on the test cluster:
through redis-py's routing, tests/store/test_slot_migration.py fails every run.

``call`` sends a command (and what must follow it on its connection: ``WAIT``) as one pipeline
to the node that should serve it, and follows each answer itself:

- ``MOVED``: the client's map of the slots learns the slot's master (``NodesManager.move_slot``,
  as redis-py does), and the command goes there;
- ``ASK``: ``ASKING`` and the command, on one connection, to the node named;
- ``TRYAGAIN``: again after a pause (10 ms, doubling up to 200 ms), for at most ``PATIENCE``
  seconds. A resharding moves a room's keys in milliseconds; a migration left half-way (its
  ``redis-cli`` stopped: ``redis-cli --cluster fix`` ends it) fails the call with
  ``TryAgainError``, and nothing of it ran;
- ``NOSCRIPT``: the script is loaded on that node, and the call sent again;
- a lost connection, a timeout, ``CLUSTERDOWN``: the map is read again and the call sent again,
  ``retries`` times (by default as many as the client's ``retry`` allows, as redis-py does).

A script runs during a migration only where all the keys it names are, so every key a room's
scripts name exists from early in the room's life (event_store.py): otherwise a key not yet
written would refuse the room's scripts (``TRYAGAIN``) until its whole slot had moved.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Sequence
from typing import Any

from redis.asyncio.cluster import ClusterNode, PipelineCommand, RedisCluster
from redis.cluster import PRIMARY
from redis.commands.core import AsyncScript
from redis.exceptions import (
    AskError,
    ClusterDownError,
    ClusterError,
    ConnectionError,
    MovedError,
    NoScriptError,
    SlotNotCoveredError,
    TimeoutError,
    TryAgainError,
)

from .resp_connection import first

PATIENCE = 10.0  # seconds of TRYAGAIN before a call fails
REDIRECTS = 16  # MOVED/ASK/NOSCRIPT hops before a call fails (redis-py's RedisClusterRequestTTL)
_LOST = (ConnectionError, TimeoutError, ClusterDownError, SlotNotCoveredError)

Command = Sequence[Any]


async def call(
    cluster: RedisCluster,
    key: Any,
    command: Command,
    *after: Command,
    script: Any = None,
    retries: int | None = None,
) -> list[Any]:
    """The replies of ``command`` (on ``key``'s slot) and of ``after`` (sent behind it on its
    connection), each a value or the error Redis answered, once ``command`` was not refused
    for a migration of the slot (the module's docstring). ``script``: the text of the script
    that ``command`` (an ``EVALSHA``) runs, loaded where Redis does not know it. Raises what
    failed the call: a lost connection after ``retries`` more tries, ``TryAgainError`` after
    ``PATIENCE``, ``ClusterError`` after ``REDIRECTS`` hops."""
    await cluster.initialize()  # a no-op once the client has its map of the slots
    retries = cluster.retry.get_retries() if retries is None else retries
    asking: ClusterNode | None = None
    hops = 0
    pause = 0.01
    patience: float | None = None
    while True:
        node = asking
        try:
            node = node or _master(cluster, key)
            replies = await _send(node, command, after, asking is not None)
            if isinstance(replies[0], _LOST):
                raise replies[0]
        except _LOST as error:
            if isinstance(error, ClusterDownError):
                await asyncio.sleep(0.25)  # a failover under way, as redis-py waits
            with contextlib.suppress(*_LOST, ClusterError):  # the map, for this call or the next
                if node is not None:  # its other connections are likely dead too
                    await node.disconnect_free_connections()
                await cluster.nodes_manager.initialize()
            if retries <= 0:
                raise
            retries -= 1
            asking = None
            continue
        reply = replies[0]
        if isinstance(reply, TryAgainError):
            patience = patience or time.monotonic() + PATIENCE
            if time.monotonic() > patience:
                raise reply
            await asyncio.sleep(pause)
            pause = min(pause * 2, 0.2)
            asking = None  # from the slot's master again: the split may have ended either way
            hops = 0  # the pauses bound these rounds, not the hops
            continue
        if isinstance(reply, NoScriptError) and script is not None:
            await node.execute_command("SCRIPT", "LOAD", script)  # then to the same node
        elif not isinstance(reply, AskError):  # served (MovedError is an AskError too)
            return replies
        elif isinstance(reply, MovedError):
            await cluster.nodes_manager.move_slot(reply)
            asking = None
        else:
            asking = _node(cluster, reply.host, reply.port)
        hops += 1
        if hops > REDIRECTS:
            raise ClusterError(f"{hops} redirections for {command[0]!r}: {reply}")


async def call_script(
    cluster: RedisCluster,
    script: AsyncScript,
    keys: Sequence[Any],
    args: Sequence[Any],
    *after: Command,
    retries: int | None = None,
) -> list[Any]:
    """``call`` of the script's ``EVALSHA`` on its first key's slot."""
    evalsha = ("EVALSHA", script.sha, len(keys), *keys, *args)
    return await call(cluster, keys[0], evalsha, *after, script=script.script, retries=retries)


class SlotScript:
    """A Lua script called through ``call`` on a cluster: what redis-py's ``AsyncScript`` is on
    one Redis (the same ``keys=``, ``args=``)."""

    def __init__(self, cluster: RedisCluster, script: AsyncScript) -> None:
        self.cluster = cluster
        self.script = script

    async def __call__(self, keys: Sequence[Any] = (), args: Sequence[Any] = ()) -> Any:
        return first(await call_script(self.cluster, self.script, keys, args))


async def _send(
    node: ClusterNode, command: Command, after: Sequence[Command], asking: bool
) -> list[Any]:
    """One pipeline on one connection of ``node``: ``ASKING`` if ``asking``, then the commands;
    their replies (without ``ASKING``'s), each a value or an error."""
    commands = [*((("ASKING",),) if asking else ()), command, *after]
    pipeline = [PipelineCommand(n, *args) for n, args in enumerate(commands)]
    await node.execute_pipeline(pipeline)
    replies = [c.result for c in pipeline]
    return replies[1:] if asking else replies


def _master(cluster: RedisCluster, key: Any) -> ClusterNode:
    """The master of ``key``'s slot, as the client's map of the slots has it."""
    node = cluster.get_node_from_key(key)
    if node is None:
        raise SlotNotCoveredError(f"no node serves {key!r}")
    return node


def _node(cluster: RedisCluster, host: str, port: int) -> ClusterNode:
    """The node at ``host:port``; a master the client does not know yet (one that owns no slot:
    a node added to the cluster for a resharding) is added to its nodes, as redis-py does on
    ``MOVED``."""
    node = cluster.get_node(host=host, port=port)
    if node is None:
        manager = cluster.nodes_manager
        node = ClusterNode(host, port, PRIMARY, **manager.connection_kwargs)
        manager.set_nodes(manager.nodes_cache, {node.name: node})
    return node
