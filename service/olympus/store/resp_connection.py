"""One connection to one Redis for the appends' batches: commands written as RESP at once,
replies read by hiredis on an asyncio protocol.

The appends are the service's hottest Redis traffic: a few per command, batched per turn of the
event loop (batching.py). Through redis-py's pipeline each costs tens of µs of Python: the
pipeline object, each argument encoded in a loop, the pool, the retry wrapper and asyncio's
streams (docs/performance.md). Here a batch is one ``transport.write`` of its packed commands
and one future, and the replies are parsed in C (``hiredis.Reader``) as they arrive, in order,
for every batch in flight on the connection.

It talks to the Redis of a redis-py client, with that client's settings (its pool's: TCP host
and port or unix socket, username and password, database, timeouts, retry policy), so that the
service has one configuration. Error replies become redis-py's exceptions (its own mapping:
``NoScriptError``, ``BusyLoadingError``…), each in its reply's place. A lost connection fails
every batch waiting on it (``ConnectionError``), and the next batch connects again; a batch is
sent again on a fresh connection by the client's retry policy (lost connection, Redis still
loading), as redis-py would, unless its caller asks for no retry (batching.py: a WAIT must be
on the connection that wrote).

Only for one Redis: a cluster's calls go through redis-py's cluster client (cluster_calls.py).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Sequence
from typing import Any, cast

import hiredis
from redis._parsers.base import BaseParser
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.exceptions import BusyLoadingError, InvalidResponse, RedisError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

Arg = bytes | str | int
Command = Sequence[Arg]


def pack_commands(commands: Sequence[Command]) -> bytes:
    """``commands`` in RESP, as one buffer: hiredis packs each (in C), as redis-py's hiredis
    serializer does."""
    # (hiredis' stub types its argument as a tuple of one)
    packed = [hiredis.pack_command(tuple(c)) for c in commands]  # type: ignore[arg-type]
    return b"".join(packed)


class _Waiting:
    __slots__ = ("count", "future", "replies", "timer")

    def __init__(self, count: int, future: asyncio.Future[list[Any]]) -> None:
        self.count = count
        self.future = future
        self.replies: list[Any] = []
        self.timer: asyncio.TimerHandle | None = None


class _Protocol(asyncio.Protocol):
    """The connection's reader: each reply goes to the oldest batch still waiting for one.

    ``timeout``: how long a batch may wait for its replies (the client's socket timeout);
    then it fails with ``TimeoutError`` and the connection is closed (its replies may still
    come, out of step with the next batch's). A timer of the loop per batch rather than
    ``asyncio.timeout`` around each wait: no context manager, task lookup or
    ``get_running_loop`` (a ``getpid`` syscall on Python 3.11) per batch.
    """

    def __init__(self, timeout: float | None) -> None:
        self.reader = hiredis.Reader(
            protocolError=InvalidResponse, replyError=BaseParser.parse_error
        )
        self.timeout = timeout
        self.waiting: deque[_Waiting] = deque()
        self.transport: asyncio.Transport | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # (uvloop's are not subclasses)
        self.loop = asyncio.get_running_loop()

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        while (reply := self.reader.gets()) is not False:
            if not self.waiting:  # a reply nobody asked for: the stream is not ours to trust
                self.close(InvalidResponse("an unexpected reply from Redis"))
                return
            head = self.waiting[0]
            head.replies.append(reply)
            if len(head.replies) == head.count:
                self.waiting.popleft()
                if head.timer is not None:
                    head.timer.cancel()
                if not head.future.done():
                    head.future.set_result(head.replies)

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        error = RedisConnectionError(f"Connection to Redis lost: {exc!r}")
        while self.waiting:
            waiting = self.waiting.popleft()
            if waiting.timer is not None:
                waiting.timer.cancel()
            if not waiting.future.done():
                waiting.future.set_exception(error)

    def send(self, commands: Sequence[Command]) -> asyncio.Future[list[Any]]:
        assert self.transport is not None and self.loop is not None
        waiting = _Waiting(len(commands), self.loop.create_future())
        if self.timeout is not None:
            waiting.timer = self.loop.call_later(self.timeout, self._timed_out, waiting)
        self.waiting.append(waiting)
        self.transport.write(pack_commands(commands))
        return waiting.future

    def _timed_out(self, waiting: _Waiting) -> None:
        if not waiting.future.done():
            waiting.future.set_exception(RedisTimeoutError("Timeout reading from Redis"))
        self.close()

    def close(self, error: Exception | None = None) -> None:
        if self.transport is not None and not self.lost:
            self.transport.close()
            self.connection_lost(error)


class RespConnection:
    """Batches of commands to the Redis of ``client`` on a connection of their own."""

    def __init__(self, client: Redis) -> None:
        # The settings as redis-py resolves them for a connection of the client's pool (its
        # defaults included: the retry policy, the connect timeout), read off one never opened.
        pool = client.connection_pool
        like = pool.connection_class(**pool.connection_kwargs)
        self._path: str | None = getattr(like, "path", None)
        self._host: str = getattr(like, "host", "localhost")
        self._port: int = getattr(like, "port", 6379)
        self._username: str | None = like.username
        self._password: str | None = like.password
        self._db: int = int(like.db)
        self._timeout: float | None = like.socket_timeout
        self._connect_timeout: float | None = like.socket_connect_timeout
        self._retry: Retry = like.retry
        self._protocol: _Protocol | None = None
        self._connecting = asyncio.Lock()  # one connect at a time

    async def call(self, commands: Sequence[Command], retry: bool = True) -> list[Any]:
        """Each command's reply, or its error as an exception, in order. Raises when the batch
        got no replies (a lost connection, a timeout) or Redis is still loading, after the
        retries if ``retry``."""
        if not retry:
            return await self._once(commands)
        return await self._retry.call_with_retry(lambda: self._once(commands), self._failed)

    async def aclose(self) -> None:
        if self._protocol is not None:
            self._protocol.close()
            self._protocol = None

    async def _failed(self, error: Exception) -> None:
        await self.aclose()

    async def _once(self, commands: Sequence[Command]) -> list[Any]:
        protocol = await self._connected()
        try:
            replies = await protocol.send(commands)  # fails after the timeout (_Protocol)
        except asyncio.CancelledError:  # its replies may still come, out of step with the
            protocol.close()  # next batch's: the connection can no longer be trusted
            raise
        for reply in replies:
            if isinstance(reply, BusyLoadingError):  # refused, not run: send the batch again
                raise reply
        return replies

    async def _connected(self) -> _Protocol:
        if self._protocol is not None and not self._protocol.lost:
            return self._protocol
        async with self._connecting:
            if self._protocol is None or self._protocol.lost:
                self._protocol = await self._connect()
        return self._protocol

    async def _connect(self) -> _Protocol:
        loop = asyncio.get_running_loop()

        def made() -> _Protocol:
            return _Protocol(self._timeout)

        try:
            async with asyncio.timeout(self._connect_timeout):
                if self._path is not None:
                    _, protocol = await loop.create_unix_connection(made, self._path)
                else:
                    _, protocol = await loop.create_connection(made, self._host, self._port)
                try:
                    await self._hello(protocol)
                except BaseException:  # a refused password, a timeout: not a connection to keep
                    protocol.close()
                    raise
        except (OSError, TimeoutError) as error:
            raise RedisConnectionError(f"Error connecting to Redis: {error!r}") from error
        return protocol

    async def _hello(self, protocol: _Protocol) -> None:
        """Authenticate and choose the database, as the client's connections do."""
        hello: list[Command] = []
        if self._password is not None:
            hello.append(("AUTH", *filter(None, (self._username,)), self._password))
        if self._db:
            hello.append(("SELECT", self._db))
        if hello:
            for reply in await protocol.send(hello):
                if isinstance(reply, RedisError):
                    raise reply
