"""Calls of one Lua script made in the same turn of the event loop, sent as one pipeline.

A server process appends for hundreds of rooms at once. Sent one by one, each append costs a
pooled connection, a send and a read of its own: ~80 µs of client CPU (redis-py) per append.
Queued during one turn of the event loop and sent together in a non-transactional pipeline,
they share one connection, one send and one read: ~45 µs each at 500 concurrent rooms. Each
call still gets its own result or its own error; Redis runs each script atomically as before,
and a pipeline is not a transaction, so one call's failure does not touch the others.

On a Redis Cluster the calls of a turn go out together but one by one (redis-py's cluster
client refuses scripts in its pipelines): each to the master of its room's slot.

``Replicated(n, timeout_ms)``: after the calls, ``WAIT n timeout`` on the same connection (WAIT
counts the replicas that have every write of its own connection), and if fewer than ``n``
replicas confirm in time, every call of the batch fails with ``NotReplicated``: what it wrote
is on the master but may die with it. Its caller may send the same call again (appends are
idempotent by command id), which then confirms nothing new but finds it applied.
"""

from __future__ import annotations

import asyncio
from asyncio import Future
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterNode, PipelineCommand, RedisCluster
from redis.commands.core import AsyncScript
from redis.exceptions import NoScriptError

Queued = tuple[Sequence[Any], Sequence[Any], "asyncio.Future[Any]"]  # keys, args, its result


@dataclass(frozen=True)
class Replicated:
    """Wait for ``replicas`` replicas to confirm each batch, at most ``timeout_ms``."""

    replicas: int
    timeout_ms: int = 1000


class NotReplicated(Exception):
    """Fewer replicas than required confirmed the write in time: it is on the master only."""

    def __init__(self, required: int, confirmed: int) -> None:
        super().__init__(f"{confirmed} of {required} replicas confirmed the write in time")
        self.required = required
        self.confirmed = confirmed


class ScriptBatcher:
    def __init__(
        self,
        redis: Redis | RedisCluster,
        script: AsyncScript,
        replicated: Replicated | None = None,
    ) -> None:
        self.redis = redis
        self.script = script
        self.replicated = replicated
        self._queued: list[Queued] = []
        self._flushes: set[asyncio.Task[None]] = set()

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
        if isinstance(self.redis, RedisCluster):
            await self._one_by_one(batch)
            return
        try:
            replies = await self._pipeline(batch)
            # A script Redis does not know (a restart flushes them) is refused without running:
            # load it, and send those calls again.
            unknown = [k for k, reply in enumerate(replies) if isinstance(reply, NoScriptError)]
            if unknown:
                await self.redis.script_load(self.script.script)
                again = await self._pipeline([batch[k] for k in unknown])
                for k, reply in zip(unknown, again, strict=True):
                    replies[k] = reply
            for (*_, result), reply in zip(batch, replies, strict=True):
                if result.done():  # its caller was cancelled
                    continue
                if isinstance(reply, Exception):
                    result.set_exception(reply)
                else:
                    result.set_result(reply)
        except asyncio.CancelledError:  # the process is stopping
            for *_, result in batch:
                result.cancel()
            raise
        except Exception as error:  # the connection failed: every call still waiting did
            for *_, result in batch:  # (no caller may wait forever)
                if not result.done():
                    result.set_exception(error)

    async def _pipeline(self, batch: list[Queued]) -> list[Any]:
        """The calls as EVALSHA (redis-py would ask SCRIPT EXISTS first for the script object,
        a round trip each time) in one pipeline, and WAIT after them if asked; each reply or
        error in order."""
        pipe = self.redis.pipeline(transaction=False)
        sha = self.script.sha
        for keys, args, _ in batch:
            pipe.evalsha(sha, len(keys), *keys, *args)
        if self.replicated is not None:
            pipe.execute_command("WAIT", self.replicated.replicas, self.replicated.timeout_ms)
        replies: list[Any] = await pipe.execute(raise_on_error=False)
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
        call = self._call_replicated if self.replicated is not None else self._call

        async def settle(keys: Sequence[Any], args: Sequence[Any], result: Future[Any]) -> None:
            try:
                reply = await call(keys, args)
            except Exception as error:
                if not result.done():
                    result.set_exception(error)
            else:
                if not result.done():
                    result.set_result(reply)

        try:
            await asyncio.gather(*(settle(*queued) for queued in batch))
        except asyncio.CancelledError:
            for *_, result in batch:
                result.cancel()
            raise

    async def _call(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        return await self.script(keys=keys, args=args)

    async def _on_node(
        self, node: ClusterNode, keys: Sequence[Any], args: Sequence[Any]
    ) -> tuple[Any, Any]:
        assert self.replicated is not None
        commands = [
            PipelineCommand(0, "EVALSHA", self.script.sha, len(keys), *keys, *args),
            PipelineCommand(1, "WAIT", self.replicated.replicas, self.replicated.timeout_ms),
        ]
        await node.execute_pipeline(commands)
        return commands[0].result, commands[1].result

    async def _call_replicated(self, keys: Sequence[Any], args: Sequence[Any]) -> Any:
        """On a cluster: the script and WAIT on one connection of the master of the call's
        slot (redis-py's ``ClusterNode.execute_pipeline``, as its own cluster pipelines do).
        After any failure the client's view of the cluster is refreshed (a failover, a slot
        that moved) and the call fails: its caller sends it again."""
        assert isinstance(self.redis, RedisCluster) and self.replicated is not None
        node = self.redis.get_node_from_key(keys[0])
        try:
            if node is None:
                raise ConnectionError(f"no node serves {keys[0]!r}")
            reply, confirmed = await self._on_node(node, keys, args)
            if isinstance(reply, NoScriptError):  # nothing ran: load it, send it again
                await self.redis.script_load(self.script.script)
                reply, confirmed = await self._on_node(node, keys, args)
            if isinstance(reply, Exception):
                raise reply
        except Exception:
            await self.redis.nodes_manager.initialize()
            raise
        replies = [reply]
        self._confirm(confirmed, replies)
        if isinstance(replies[0], Exception):
            raise replies[0]
        return reply
