"""The appends' own connection and the hints' (store/resp_connection.py) against real Redis
servers.

It must say to Redis what redis-py says (the same bytes), give each reply or error in its
place, as redis-py's exceptions, with the settings of the client it was made from (socket or
TCP, database, user and password, timeout, retry policy), and survive what a connection goes
through: killed by the server, a reply that does not come in time.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator

import pytest
import redis
from redis.asyncio import Redis
from redis.asyncio.connection import Connection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from olympus.store import EmbeddedRedis
from olympus.store.local_cluster import LocalCluster
from olympus.store.resp_connection import (
    Command,
    PubSubConnection,
    RespConnection,
    pack_commands,
)

COMMANDS: list[Command] = [
    ("SET", "k", b"\x00\xffbytes"),
    ("EVALSHA", "abc", 2, "k1", "k2", 0, -17, 12345678901234, "", "Ünïcode {room}"),
    ("PING",),
    ("SET", "long", b"x" * 1023, b"y" * 1024, "é" * 700),  # past the headers made once
    ("DEL", *(f"k{n}" for n in range(70))),
]


def test_packs_commands_as_redis_py_does() -> None:
    assert pack_commands(COMMANDS) == b"".join(Connection().pack_commands(COMMANDS))


@pytest.mark.parametrize("arg", [True, None, object()])
def test_refuses_what_is_not_an_argument(arg: object) -> None:
    with pytest.raises(TypeError):
        pack_commands([("SET", "k", arg)])  # type: ignore[list-item]


@pytest.fixture
async def client(redis_server: EmbeddedRedis) -> AsyncIterator[Redis]:
    client = Redis.from_url(redis_server.url, socket_timeout=10)
    yield client
    await client.aclose()


@pytest.fixture
async def connection(client: Redis) -> AsyncIterator[RespConnection]:
    connection = RespConnection(client)
    yield connection
    await connection.aclose()


async def test_replies_and_errors_in_order(connection: RespConnection, client: Redis) -> None:
    key = f"resp-{uuid.uuid4().hex}"
    replies = await connection.call(
        [
            ("SET", key, "v"),
            ("HGET", key, "f"),  # a string is no hash: an error in its place, not raised
            ("EVALSHA", "0" * 40, 0),  # a script Redis does not know
            ("GET", key),
            ("EVAL", "return {1, 2, {3}}", 0),
        ]
    )
    assert replies[0] == b"OK"
    assert isinstance(replies[1], redis.ResponseError) and "WRONGTYPE" in str(replies[1])
    assert isinstance(replies[2], redis.exceptions.NoScriptError)
    assert replies[3:] == [b"v", [1, 2, [3]]]
    assert await client.get(key) == b"v"
    await client.delete(key)


async def test_over_tcp(redis_cluster: LocalCluster) -> None:
    """A cluster node answers what needs no key like any Redis: the TCP way in."""
    client = Redis.from_url(f"redis://{redis_cluster.nodes[0].address}")
    connection = RespConnection(client)
    try:
        assert await connection.call([("PING",), ("ECHO", "tcp")]) == [b"PONG", b"tcp"]
    finally:
        await connection.aclose()
        await client.aclose()


async def test_database_user_and_password_of_the_client(redis_server: EmbeddedRedis) -> None:
    user, password = f"u{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    admin = Redis.from_url(redis_server.url)
    await admin.acl_setuser(user, enabled=True, passwords=[f"+{password}"], commands=["+@all"])
    await admin.execute_command("ACL", "SETUSER", user, "~*")
    path = str(redis_server.socket_path)
    good = Redis.from_url(f"unix://{user}:{password}@{path}?db=3")
    bad = Redis.from_url(f"unix://{user}:wrong@{path}")
    third = Redis.from_url(f"{redis_server.url}?db=3")
    connections = [RespConnection(good), RespConnection(bad)]
    key = f"resp-{uuid.uuid4().hex}"
    try:
        replies = await connections[0].call([("SET", key, "in 3"), ("ACL", "WHOAMI")])
        assert replies == [b"OK", user.encode()]
        assert await third.get(key) == b"in 3"
        assert await admin.get(key) is None  # not in database 0
        with pytest.raises(redis.AuthenticationError):
            await connections[1].call([("PING",)], retry=False)
    finally:
        for connection in connections:
            await connection.aclose()
        await third.delete(key)
        await admin.acl_deluser(user)
        for c in (admin, good, bad, third):
            await c.aclose()


async def blocked(client: Redis, connection_id: int) -> None:
    """Until the connection ``connection_id`` waits in a blocking command (its batch is in
    flight when it is killed: no race with the loss being noticed first)."""
    deadline = asyncio.get_running_loop().time() + 30
    while not any(
        int(c["id"]) == connection_id and c["cmd"] == "blpop" for c in await client.client_list()
    ):
        assert asyncio.get_running_loop().time() < deadline, "BLPOP never reached Redis"
        await asyncio.sleep(0.01)


async def test_a_killed_connection_fails_its_batch_and_the_next_connects_again(
    redis_server: EmbeddedRedis, client: Redis
) -> None:
    """The connection is killed while a batch waits on it. Without retries the batch fails
    and the next connects again; with the client's retry policy the batch is sent again on a
    fresh connection (and gets the value pushed after the kill)."""
    retrying = Redis.from_url(redis_server.url, retry_on_error=[redis.ConnectionError])
    once, retried = RespConnection(client), RespConnection(retrying)
    key = f"resp-{uuid.uuid4().hex}"
    try:
        for connection, retry in ((once, False), (retried, True)):
            [ours] = await connection.call([("CLIENT", "ID")])
            waiting = asyncio.create_task(connection.call([("BLPOP", key, 20)], retry=retry))
            await blocked(client, ours)
            await client.client_kill_filter(_id=ours)
            if retry:
                await client.rpush(key, "after the kill")
                assert await waiting == [[key.encode(), b"after the kill"]]
            else:
                with pytest.raises(redis.ConnectionError):
                    await waiting
            assert await connection.call([("PING",)]) == [b"PONG"]
    finally:
        await once.aclose()
        await retried.aclose()
        await retrying.aclose()
        await client.delete(key)


async def test_a_failing_batch_is_sent_as_often_as_the_retry_policy_allows() -> None:
    """A batch whose every connection is closed at once: sent once without retries, and 1 +
    2 times with a policy of two retries. The first attempt is made outside the policy's own
    loop, yet counts as one of its attempts, as it would inside."""
    accepted = 0

    async def close_at_once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal accepted
        accepted += 1
        writer.close()

    server = await asyncio.start_server(close_at_once, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    client = Redis(
        host="127.0.0.1",
        port=port,
        retry=Retry(NoBackoff(), 2),
        retry_on_error=[redis.ConnectionError],
    )
    connection = RespConnection(client)
    try:
        for retry, attempts in ((False, 1), (True, 3)):
            accepted = 0
            with pytest.raises(redis.ConnectionError):
                await connection.call([("PING",)], retry=retry)
            assert accepted == attempts
    finally:
        await connection.aclose()
        await client.aclose()
        server.close()
        await server.wait_closed()


async def test_a_cancelled_call_leaves_the_others_on_the_connection(
    client: Redis, connection: RespConnection
) -> None:
    """A caller cancelled while its batch waits does not close the connection under the
    batches behind it (they would fail, and be sent again though Redis may have run them):
    its reply is read and dropped, the next batch gets its own, on the same connection."""
    key = f"resp-{uuid.uuid4().hex}"
    try:
        [ours] = await connection.call([("CLIENT", "ID")])
        blocked_call = asyncio.create_task(connection.call([("BLPOP", key, 20)], retry=False))
        await blocked(client, ours)
        behind = asyncio.create_task(connection.call([("INCR", key + ":n")], retry=False))
        await asyncio.sleep(0)  # written behind the BLPOP
        blocked_call.cancel()
        await client.rpush(key, "for nobody now")
        assert await asyncio.wait_for(behind, 10) == [1]
        assert await connection.call([("CLIENT", "ID")]) == [ours]
        assert await client.get(key + ":n") == b"1"  # run once
    finally:
        await client.delete(key, key + ":n")


async def test_a_late_reply_times_out_and_the_connection_is_not_reused(
    redis_server: EmbeddedRedis,
) -> None:
    """A reply that comes after the timeout would answer the next batch: the connection is
    closed instead, and the next batch gets a fresh one."""
    slow = Redis.from_url(redis_server.url, socket_timeout=0.2)
    connection = RespConnection(slow)
    try:
        [before] = await connection.call([("CLIENT", "ID")])
        with pytest.raises(redis.TimeoutError):
            await connection.call([("BLPOP", f"empty-{uuid.uuid4().hex}", 2)], retry=False)
        [after] = await connection.call([("CLIENT", "ID")])
        assert isinstance(after, int) and after != before  # not the late BLPOP's nil
    finally:
        await connection.aclose()
        await slow.aclose()


async def _next(pushed: asyncio.Queue[list[object]]) -> list[object]:
    return await asyncio.wait_for(pushed.get(), 10)


async def test_pubsub_hands_over_messages_and_confirmations_in_order(client: Redis) -> None:
    """Each message and (un)subscription confirmation as Redis sends it, in order, from the
    protocol itself; nothing after an unsubscription."""
    pushed: asyncio.Queue[list[object]] = asyncio.Queue()
    pubsub = PubSubConnection(client, pushed.put_nowait)
    first, second = (f"hint-{uuid.uuid4().hex}".encode() for _ in range(2))
    try:
        await pubsub.connect()
        pubsub.subscribe(first)
        assert await _next(pushed) == [b"subscribe", first, 1]
        pubsub.subscribe(second)
        assert await _next(pushed) == [b"subscribe", second, 2]
        await client.publish(first, "1")
        await client.publish(second, "2")
        assert [await _next(pushed), await _next(pushed)] == [
            [b"message", first, b"1"],
            [b"message", second, b"2"],
        ]
        pubsub.unsubscribe(first)
        assert await _next(pushed) == [b"unsubscribe", first, 1]
        assert await client.publish(first, "unheard") == 0
        await client.publish(second, "3")
        assert await _next(pushed) == [b"message", second, b"3"]
    finally:
        pubsub.close()


async def test_pubsub_tells_its_loss_and_takes_no_subscription_after(client: Redis) -> None:
    """Killed by the server: ``lost`` says so (its owner reconnects and reads what it missed),
    and a subscription is refused rather than written nowhere; ``connect`` makes a new one."""
    pushed: asyncio.Queue[list[object]] = asyncio.Queue()
    pubsub = PubSubConnection(client, pushed.put_nowait)
    channel = f"hint-{uuid.uuid4().hex}".encode()
    try:
        await pubsub.connect()
        pubsub.subscribe(channel)
        assert await _next(pushed) == [b"subscribe", channel, 1]
        assert await client.client_kill_filter(_type="pubsub") >= 1
        assert isinstance(await asyncio.wait_for(pubsub.lost(), 10), redis.ConnectionError)
        with pytest.raises(redis.ConnectionError):
            pubsub.subscribe(channel)
        await pubsub.connect()
        pubsub.subscribe(channel)
        assert await _next(pushed) == [b"subscribe", channel, 1]
        await client.publish(channel, "7")
        assert await _next(pushed) == [b"message", channel, b"7"]
    finally:
        pubsub.close()
