"""Connections to one Redis that speak RESP themselves: commands written at once, replies read
by hiredis on an asyncio protocol.

The appends are the service's hottest Redis traffic: a few per command, batched per turn of the
event loop (batching.py). Through redis-py's pipeline each costs tens of µs of Python: the
pipeline object, each argument encoded in a loop, the pool, the retry wrapper and asyncio's
streams (docs/performance.md). Here a batch is one ``transport.write`` of its packed commands
and one future, and the replies are parsed in C (``hiredis.Reader``) as they arrive, in order,
for every batch in flight on the connection (``RespConnection``). The store's other calls on
one Redis (a score per game: creating, loading, snapshots, the lobby's status) go the same way,
one command or one script at a time (``one``, ``RespScript``). The pub/sub hints that follow
every append come back the same way: each message parsed in C and handed to its handler from
the protocol's ``data_received``, with no reader task, no message dict and no redis-py
(``PubSubConnection``, redis_hints.py).

Both talk to the Redis of a redis-py client, with that client's settings (its pool's: TCP host
and port or unix socket, username and password, database, timeouts, retry policy), so that the
service has one configuration. Error replies become redis-py's exceptions (its own mapping:
``NoScriptError``, ``BusyLoadingError``…), each in its reply's place. A lost connection fails
every batch waiting on it (``ConnectionError``), and the next batch connects again; a batch is
sent again on a fresh connection by the client's retry policy (lost connection, Redis still
loading), as redis-py would, unless its caller asks for no retry (batching.py: a WAIT must be
on the connection that wrote). The policy's own loop is entered only after a first failure.

Only for one Redis: a cluster's calls go through redis-py's cluster client (cluster_calls.py),
its sharded hints through redis-py's pub/sub (sharded_hints.py).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Final, cast

import hiredis
from redis._parsers.base import BaseParser
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.exceptions import BusyLoadingError, InvalidResponse, NoScriptError, RedisError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

Arg = bytes | str | int
Command = Sequence[Arg]
# A reply that answers no command (a pub/sub message, a subscription's confirmation).
Pushed = Callable[[Any], None]


# RESP's headers for the counts and lengths that occur, made once: an array of a command's
# arguments, then each argument as a bulk string.
_ARRAY_HEADS: Final = tuple([b"*%d\r\n" % n for n in range(64)])
_BULK_HEADS: Final = tuple([b"$%d\r\n" % n for n in range(1024)])


def pack_commands(commands: Sequence[Command]) -> bytes:
    """``commands`` in RESP, as one buffer, the bytes redis-py writes for them: an argument
    is its bytes, a str's UTF-8, an int's decimal digits (anything else, a bool too, is a
    ``TypeError``). Packed here, compiled, from headers made once: hiredis'
    ``pack_command`` formats each command through its sds strings (an int by its ``repr``),
    ~22,000 instructions for an append's EVALSHA of 13 arguments against ~9,400 here
    (docs/performance.md, "Redis")."""
    parts: list[bytes] = []
    for command in commands:
        count = len(command)
        parts.append(_ARRAY_HEADS[count] if count < len(_ARRAY_HEADS) else b"*%d\r\n" % count)
        for arg in command:
            if isinstance(arg, bytes):
                data = arg
            elif isinstance(arg, str):
                data = arg.encode()
            elif isinstance(arg, int) and not isinstance(arg, bool):
                data = str(arg).encode()
            else:
                raise TypeError(f"A Redis argument is bytes, str or int, not {type(arg).__name__}.")
            size = len(data)
            parts.append(_BULK_HEADS[size] if size < len(_BULK_HEADS) else b"$%d\r\n" % size)
            parts.append(data)
            parts.append(b"\r\n")
    return b"".join(parts)


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

    def __init__(self, timeout: float | None, pushed: Pushed | None = None) -> None:
        self.reader = hiredis.Reader(
            protocolError=InvalidResponse, replyError=BaseParser.parse_error
        )
        self.timeout = timeout
        self.waiting: deque[_Waiting] = deque()
        self.transport: asyncio.Transport | None = None
        # (made by a connection of the running loop)
        self.loop: asyncio.AbstractEventLoop = asyncio.get_running_loop()
        self.pushed = pushed  # where replies go that no batch waits for (None: an error)
        self.closed: asyncio.Future[Exception] = self.loop.create_future()  # lost: why

    @property
    def lost(self) -> bool:
        return self.closed.done()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # (uvloop's are not subclasses)

    def data_received(self, data: bytes) -> None:
        self.reader.feed(data)
        while (reply := self.reader.gets()) is not False:
            if not self.waiting:
                if self.pushed is None or isinstance(reply, Exception):
                    # a reply nobody asked for: the stream is not ours to trust. (Named by its
                    # kind only: it may hold events, and the error reaches the logs.)
                    kind = type(reply).__name__
                    self.close(InvalidResponse(f"an unexpected reply from Redis ({kind})"))
                    return
                self.pushed(reply)
                if self.lost:  # its handler closed the connection
                    return
                continue
            head = self.waiting[0]
            head.replies.append(reply)
            if len(head.replies) == head.count:
                self.waiting.popleft()
                if head.timer is not None:
                    head.timer.cancel()
                if not head.future.done():
                    head.future.set_result(head.replies)

    def connection_lost(self, exc: Exception | None) -> None:
        error = RedisConnectionError(f"Connection to Redis lost: {exc!r}")
        if not self.closed.done():
            self.closed.set_result(error)
        while self.waiting:
            waiting = self.waiting.popleft()
            if waiting.timer is not None:
                waiting.timer.cancel()
            if not waiting.future.done():
                waiting.future.set_exception(error)

    def send(self, commands: Sequence[Command]) -> asyncio.Future[list[Any]]:
        assert self.transport is not None
        waiting = _Waiting(len(commands), self.loop.create_future())
        if self.timeout is not None:
            waiting.timer = self.loop.call_later(self.timeout, self._timed_out, waiting)
        self.waiting.append(waiting)
        self.transport.write(pack_commands(commands))
        return waiting.future

    def write(self, commands: Sequence[Command]) -> None:
        """Write ``commands`` without waiting for replies: their replies are pushed."""
        assert self.transport is not None
        self.transport.write(pack_commands(commands))

    def _timed_out(self, waiting: _Waiting) -> None:
        if not waiting.future.done():
            waiting.future.set_exception(RedisTimeoutError("Timeout reading from Redis"))
        self.close()

    def close(self, error: Exception | None = None) -> None:
        if self.transport is not None and not self.lost:
            self.transport.close()
            self.connection_lost(error)


class _Endpoint:
    """Where and how to connect: the settings as redis-py resolves them for a connection of
    ``client``'s pool (its defaults included: the retry policy, the connect timeout), read off
    one never opened."""

    def __init__(self, client: Redis) -> None:
        pool = client.connection_pool
        like = pool.connection_class(**pool.connection_kwargs)
        self.path: str | None = getattr(like, "path", None)
        self.host: str = getattr(like, "host", "localhost")
        self.port: int = getattr(like, "port", 6379)
        self.username: str | None = like.username
        self.password: str | None = like.password
        self.db: int = int(like.db)
        self.timeout: float | None = like.socket_timeout
        self.connect_timeout: float | None = like.socket_connect_timeout
        self.retry: Retry = like.retry

    async def open(self, pushed: Pushed | None = None) -> _Protocol:
        """A connection, authenticated, on the client's database; replies that answer no
        command go to ``pushed``."""
        loop = asyncio.get_running_loop()

        def made() -> _Protocol:
            return _Protocol(self.timeout, pushed)

        try:
            async with asyncio.timeout(self.connect_timeout):
                if self.path is not None:
                    _, protocol = await loop.create_unix_connection(made, self.path)
                else:
                    _, protocol = await loop.create_connection(made, self.host, self.port)
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
        if self.password is not None:
            hello.append(("AUTH", *filter(None, (self.username,)), self.password))
        if self.db:
            hello.append(("SELECT", self.db))
        if hello:
            for reply in await protocol.send(hello):
                if isinstance(reply, RedisError):
                    raise reply


class RespConnection:
    """Batches of commands to the Redis of ``client`` on a connection of their own."""

    def __init__(self, client: Redis) -> None:
        self._endpoint = _Endpoint(client)
        self._retry: Retry = self._endpoint.retry
        self._protocol: _Protocol | None = None
        self._connecting = asyncio.Lock()  # one connect at a time

    async def call(self, commands: Sequence[Command], retry: bool = True) -> list[Any]:
        """Each command's reply, or its error as an exception, in order. Raises when the batch
        got no replies (a lost connection, a timeout) or Redis is still loading, after the
        retries if ``retry``."""
        try:
            return await self._once(commands)
        except Exception as error:
            if not retry:
                raise
            first = error
        return await self._retried(commands, first)

    async def _retried(self, commands: Sequence[Command], first: Exception) -> list[Any]:
        """After a batch's first failure, the client's retry policy decides, as if its own
        loop (redis-py's ``call_with_retry``: interpreted, a frame, a closure and a backoff
        reset per batch) had made the first attempt too: it is handed that failure first,
        then sends again as many times as it allows. A batch that succeeds never enters it."""
        failed = [first]

        async def again() -> list[Any]:
            if failed:
                raise failed.pop()
            return await self._once(commands)

        return await self._retry.call_with_retry(again, self._failed)

    async def aclose(self) -> None:
        if self._protocol is not None:
            self._protocol.close()
            self._protocol = None

    async def _failed(self, error: Exception) -> None:
        """Before a batch is sent again: nothing to do. A lost connection is replaced by the
        next batch's ``_connected``; one still up is kept, never closed here: other callers'
        batches may be waiting on it (a fresh one, even, opened by another caller's retry),
        and closing it would make them send again what Redis may already have run."""

    async def _once(self, commands: Sequence[Command]) -> list[Any]:
        protocol = await self._connected()
        # A caller cancelled meanwhile keeps its place in the connection's queue: its replies
        # are read and dropped (``_Protocol.data_received``), the others' stay in step.
        replies = await protocol.send(commands)  # fails after the timeout (_Protocol)
        for reply in replies:
            if isinstance(reply, BusyLoadingError):  # refused, not run: send the batch again
                raise reply
        return replies

    async def _connected(self) -> _Protocol:
        if self._protocol is not None and not self._protocol.lost:
            return self._protocol
        async with self._connecting:
            if self._protocol is None or self._protocol.lost:
                self._protocol = await self._endpoint.open()
        return self._protocol


def first(replies: list[Any]) -> Any:
    """The first reply, raised if it is an error."""
    if isinstance(replies[0], Exception):
        raise replies[0]
    return replies[0]


async def one(connection: RespConnection, command: Command) -> Any:
    """``command``'s reply on ``connection``; an error reply raised."""
    return first(await connection.call([command]))


class RespScript:
    """A Lua script called on a ``RespConnection``: what redis-py's ``AsyncScript`` is (the same
    ``keys=``, ``args=``), without its cost per call (a client-side ``isinstance`` against a
    typing protocol, the pool, the retry wrapper: tens of µs, docs/performance.md). Sent as
    EVALSHA; one Redis does not know (a restart flushes scripts) is refused unrun, loaded on
    the same connection and sent again. The appends' batches send its ``command`` in their
    pipelines and ``load`` it the same way (batching.py)."""

    def __init__(self, connection: RespConnection, script: str) -> None:
        self.connection = connection
        self.script = script
        self.sha = hashlib.sha1(script.encode()).hexdigest()  # as Redis names it

    def command(self, keys: Sequence[Arg], args: Sequence[Arg]) -> Command:
        return ("EVALSHA", self.sha, len(keys), *keys, *args)

    async def load(self) -> None:
        await one(self.connection, ("SCRIPT", "LOAD", self.script))

    async def __call__(self, keys: Sequence[Arg] = (), args: Sequence[Arg] = ()) -> Any:
        command = self.command(keys, args)
        replies = await self.connection.call([command])
        if isinstance(replies[0], NoScriptError):
            await self.load()
            replies = await self.connection.call([command])
        return first(replies)


class PubSubConnection:
    """One classic pub/sub connection to the Redis of ``client``: (un)subscriptions written at
    once, and every message and confirmation handed to ``pushed`` as Redis sends it, a list
    ``[kind, channel, data]`` of bytes (``data`` a count for a confirmation).

    No reconnecting: pub/sub drops what is published while a connection is down, so its owner
    must notice the loss (``lost``), connect again and read what it missed (redis_hints.py)."""

    def __init__(self, client: Redis, pushed: Pushed) -> None:
        self._endpoint = _Endpoint(client)
        self._pushed = pushed
        self._protocol: _Protocol | None = None

    async def connect(self) -> None:
        """A fresh connection, subscribed to nothing (the last one closed)."""
        self.close()
        self._protocol = await self._endpoint.open(self._pushed)

    def subscribe(self, *channels: bytes) -> None:
        """Subscribe at once (one command for all); Redis confirms each channel by a push."""
        self._write("SUBSCRIBE", channels)

    def unsubscribe(self, *channels: bytes) -> None:
        self._write("UNSUBSCRIBE", channels)

    async def lost(self) -> Exception | None:
        """Waits until the connection is lost (or closed); why. None at once without one."""
        if self._protocol is None:
            return None
        return await asyncio.shield(self._protocol.closed)

    def close(self) -> None:
        if self._protocol is not None:
            self._protocol.close()
            self._protocol = None

    def _write(self, verb: str, channels: tuple[bytes, ...]) -> None:
        if self._protocol is None or self._protocol.lost:
            raise RedisConnectionError("The pub/sub connection is down.")
        self._protocol.write([(verb, *channels)])
