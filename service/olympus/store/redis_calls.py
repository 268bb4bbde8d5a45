"""How the Redis backend sends its calls: to one Redis, or to a Redis Cluster. One of the two
is chosen when a store is made (``redis_calls``), and its methods say how; no call of the
store asks again which it is.

- ``OneRedis``: every call on the store's own connection (resp_connection.py: redis-py's
  client cost tens of µs of Python per call, and a game makes a score of them), scripts by
  EVALSHA on it; the hints are classic pub/sub.
- ``OnCluster``: a call on a room's key through ``cluster_calls`` (a migration of the room's
  slot delays it, never fails it), the global scripts as redis-py routes them, calls on many
  rooms' keys in a redis-py pipeline (grouped by node); the hints are sharded pub/sub in the
  room's slot.

Every failure of Redis leaves as ``StoreUnavailable`` (redis_errors.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.commands.core import AsyncScript

from . import cluster_calls
from .redis_errors import REDIS_FAILURES, store_error
from .resp_connection import Command, RespConnection, RespScript, first, one

# A Lua script, called with ``keys=`` and ``args=``.
Script = AsyncScript | cluster_calls.SlotScript | RespScript


class StoreScript:
    """A script whose failures are the store's errors (redis_errors.py)."""

    def __init__(self, script: Script) -> None:
        self.script = script

    async def __call__(self, keys: Sequence[Any], args: Sequence[Any] = ()) -> Any:
        try:
            return await self.script(keys=keys, args=args)
        except REDIS_FAILURES as error:
            raise store_error(error) from error


class OneRedis:
    """Calls to one Redis, on the store's own connection."""

    sharded = False  # the hints: classic pub/sub

    def __init__(self, redis: Redis) -> None:
        self.connection = RespConnection(redis)

    def room_script(self, script: str) -> StoreScript:
        """A script on a room's keys."""
        return StoreScript(RespScript(self.connection, script))

    def script(self, script: str) -> StoreScript:
        """A script on one slot's keys (the lobby's status index)."""
        return StoreScript(RespScript(self.connection, script))

    async def call(self, key: str, command: Sequence[Any]) -> Any:
        """``command``'s reply as Redis gives it; an error reply raised."""
        return await one(self.connection, command)

    async def calls(self, commands: Sequence[Command]) -> list[Any]:
        """The replies of ``commands`` sent as one batch, errors among them as values."""
        return list(await self.connection.call(commands))

    def hint_channel(self, prefix: str, room_id: str) -> str:
        return f"{prefix}:room:{room_id}:hint"

    async def aclose(self) -> None:
        await self.connection.aclose()


class OnCluster:
    """Calls to a Redis Cluster, each to the master of its key's slot."""

    sharded = True  # the hints: sharded pub/sub, in the room's slot

    def __init__(self, redis: RedisCluster) -> None:
        self.redis = redis

    def room_script(self, script: str) -> StoreScript:
        """A script on a room's keys, following a migration of its slot (``cluster_calls``)."""
        return StoreScript(cluster_calls.SlotScript(self.redis, self.redis.register_script(script)))

    def script(self, script: str) -> StoreScript:
        """A script on one slot's keys, as redis-py routes it."""
        return StoreScript(self.redis.register_script(script))

    async def call(self, key: str, command: Sequence[Any]) -> Any:
        """``command`` on ``key``'s slot, through redis-py's reply callbacks (which make
        HGETALL's a dict, HSETNX's a bool); an error reply raised."""
        return first(await cluster_calls.call(self.redis, key, command))

    async def calls(self, commands: Sequence[Command]) -> list[Any]:
        """The replies of ``commands``, in a pipeline grouped by node; the first error raised."""
        pipe = self.redis.pipeline(transaction=False)
        for command in commands:
            pipe.execute_command(*command)
        return list(await pipe.execute())

    def hint_channel(self, prefix: str, room_id: str) -> str:
        return f"{prefix}:room:{{{room_id}}}:hint"

    async def aclose(self) -> None:
        """Nothing of its own: the cluster client is the caller's."""


def redis_calls(redis: Redis | RedisCluster) -> OneRedis | OnCluster:
    """The way to call ``redis``, chosen by what it is."""
    return OnCluster(redis) if isinstance(redis, RedisCluster) else OneRedis(redis)
