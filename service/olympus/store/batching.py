"""Calls of one Lua script made in the same turn of the event loop, sent as one pipeline.

A server process appends for hundreds of rooms at once. Sent one by one, each append costs a
send and a read of its own. Queued during one turn of the event loop and sent together in a
non-transactional pipeline on the batches' own connection (resp_connection.py: RESP written at
once, replies parsed by hiredis; redis-py's pipeline cost tens of µs of Python per append),
they share one send and one read. Each call still gets its own result or its own error; Redis
runs each script atomically as before, and a pipeline is not a transaction, so one call's
failure does not touch the others.

On a Redis Cluster the calls of a turn go out together but one by one (redis-py's cluster
client refuses scripts in its pipelines): each to the master of its room's slot, through
``cluster_calls.call``, so that a migration of the slot delays it and never fails it.

``Replicated(n, timeout_ms)``: after the calls, ``WAIT n timeout`` on the same connection, and
if fewer than ``n`` replicas confirm in time, every call of the batch fails with
``NotReplicated``: what it wrote is on the master but may die with it. Its caller may send the
same call again (appends are idempotent by command id). WAIT is documented to count the
replicas that have every write sent on its own connection, so a call whose result vouches for
an earlier write, maybe made on another connection (the append script's duplicate finds the
events its first call wrote), writes itself, and the WAIT behind it covers the earlier write
on those terms: event_store.py's duplicate sets the command id's record again, a write after
the original in the master's replication stream. (Redis in fact waits for its replication
offset as of the connection's previous command, a read too; the promise does not rest on that.)
"""

from __future__ import annotations

import asyncio
from asyncio import Future
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

from .cluster_calls import call_script
from .records import StoreUnavailable
from .redis_errors import store_error
from .resp_connection import RespConnection, RespScript, first

Queued = tuple[Sequence[Any], Sequence[Any], "asyncio.Future[Any]"]  # keys, args, its result


@dataclass(frozen=True)
class Replicated:
    """Wait for ``replicas`` replicas to confirm each batch, at most ``timeout_ms``."""

    replicas: int
    timeout_ms: int = 1000


class NotReplicated(StoreUnavailable):
    """Fewer replicas than required confirmed the write in time: it is on the master only."""

    def __init__(self, required: int, confirmed: int) -> None:
        super().__init__(f"{confirmed} of {required} replicas confirmed the write in time")
        self.required = required
        self.confirmed = confirmed


class ScriptBatcher:
    def __init__(
        self,
        redis: Redis | RedisCluster,
        script: str,
        replicated: Replicated | None = None,
    ) -> None:
        self.redis = redis
        self.replicated = replicated
        # On one Redis, the batches' own connection (resp_connection.py) and the script on
        # it; on a cluster, redis-py's script (cluster_calls.call_script).
        self._script: RespScript | None = None
        self._cluster_script: AsyncScript | None = None
        if isinstance(redis, RedisCluster):
            self._cluster_script = redis.register_script(script)
        else:
            self._script = RespScript(RespConnection(redis), script)
        self._queued: list[Queued] = []
        self._flushes: set[asyncio.Task[None]] = set()

    async def aclose(self) -> None:
        """Close the batches' own connection (one Redis); a later call opens it again."""
        if self._script is not None:
            await self._script.connection.aclose()

    async def __call__(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        loop = asyncio.get_running_loop()
        result: asyncio.Future[Any] = loop.create_future()
        if not self._queued:  # the first call of this turn: send the lot at the next turn
            flush = loop.create_task(self._flush())
            self._flushes.add(flush)
            flush.add_done_callback(self._flushes.discard)
        self._queued.append((keys, args, result))
        return await result

    async def _flush(self) -> None:
        batch, self._queued = self._queued, []
        script = self._script
        if script is None:  # a cluster
            await self._one_by_one(batch)
            return
        try:
            replies = await self._pipeline(script, batch)
            # A script Redis does not know (a restart flushes them) is refused without running:
            # load it, and send those calls again.
            unknown = [k for k, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
            if unknown:
                await script.load()
                again = await self._pipeline(script, [batch[k] for k in unknown])
                for k, reply in zip(unknown, again, strict=True):
                    replies[k] = reply
            for (*_, result), reply in zip(batch, replies, strict=True):
                if result.done():  # its caller was cancelled
                    continue
                if isinstance(reply, Exception):
                    result.set_exception(store_error(reply))
                else:
                    result.set_result(reply)
        except asyncio.CancelledError:  # the process is stopping
            for *_, result in batch:
                result.cancel()
            raise
        except Exception as error:  # the connection failed: every call still waiting did
            for *_, result in batch:  # (no caller may wait forever)
                if not result.done():
                    result.set_exception(store_error(error))

    async def _pipeline(self, script: RespScript, batch: list[Queued]) -> list[Any]:
        """The calls as EVALSHA (redis-py would ask SCRIPT EXISTS first for the script object,
        a round trip each time) in one pipeline on the batches' connection, and WAIT after
        them if asked; each reply or error in order. With WAIT, a batch whose connection is
        lost is not sent again (the confirmation must come from the connection that wrote)."""
        commands = [script.command(keys, args) for keys, args, _ in batch]
        if self.replicated is not None:
            commands.append(("WAIT", self.replicated.replicas, self.replicated.timeout_ms))
        replies = await script.connection.call(commands, retry=self.replicated is None)
        if self.replicated is not None:
            self._confirm(replies.pop(), replies)
        return replies

    def _confirm(self, confirmed: Any, replies: list[Any]) -> None:
        """Every reply becomes ``NotReplicated`` unless WAIT confirmed enough replicas (but a
        call Redis refused for not knowing the script stays so: nothing of it ran)."""
        assert self.replicated is not None
        required = self.replicated.replicas
        if isinstance(confirmed, Exception) or int(confirmed) < required:
            count = 0 if isinstance(confirmed, Exception) else int(confirmed)
            replies[:] = [
                r if isinstance(r, NoScriptError) else NotReplicated(required, count)
                for r in replies
            ]

    async def _one_by_one(self, batch: list[Queued]) -> None:
        async def settle(keys: Sequence[Any], args: Sequence[Any], result: Future[Any]) -> None:
            try:
                reply = await self._on_cluster(keys, args)
            except Exception as error:
                if not result.done():
                    result.set_exception(store_error(error))
            else:
                if not result.done():
                    result.set_result(reply)

        try:
            await asyncio.gather(*(settle(*queued) for queued in batch))
        except asyncio.CancelledError:
            for *_, result in batch:
                result.cancel()
            raise

    async def _on_cluster(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        """On a cluster: the script, and WAIT behind it on its connection if asked, sent to the
        master of the call's slot by ``cluster_calls.call``, which follows a migration of the
        slot (MOVED, ASK, TRYAGAIN; redis-py's own routing fails under one). A lost connection
        is tried again as redis-py would, except with WAIT: that call fails at once (its caller
        sends it again), so that every acknowledged append was confirmed on the connection
        that wrote it."""
        script = self._cluster_script
        assert isinstance(self.redis, RedisCluster) and script is not None
        wait = self.replicated
        if wait is None:
            return first(await call_script(self.redis, script, keys, args))
        replies = await call_script(
            self.redis, script, keys, args, ("WAIT", wait.replicas, wait.timeout_ms), retries=0
        )
        self._confirm(replies.pop(), replies)
        return first(replies)
