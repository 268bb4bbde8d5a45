"""How the Redis backend talks to Redis: one server (``redis://…``, ``unix://…``) or a Redis Cluster
(``redis+cluster://host:port[,host:port…]``, what ``olympus serve --redis-cluster`` passes).

Commands go through one client with a connection pool (for a cluster, redis-py's
``RedisCluster``, which routes each command to the master of its key's slot and follows
``MOVED``/``ASK``); on one Redis the appends take a connection of their own, made with this
client's settings (store/resp_connection.py). Every key of a room carries the ``{room}`` hash
tag, so each room's scripts run on one node. The global keys are few: the lobby's status index
under one ``{rooms}`` tag, the deadline index and the computer's seat records in buckets of a
slot each, and the token key in its name's slot (docs/operations.md, "On a Redis Cluster",
says why each is where it is).

Pub/sub is a separate connection to one node, for classic pub/sub: on one Redis the rooms'
hints and the control channel; on a cluster only the control channel, whose ``PUBLISH`` reaches
the subscribers of every node, so any node will do, and the fan-out moves to the next one when
its node is lost (``pubsub_clients``). The hints of a cluster are sharded: one more connection
to each master that owns a room the process holds (``pubsub_client``, sharded_hints.py).
"""

from __future__ import annotations

from redis import exceptions as redis_errors
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

from .ports import StoreConfig

CLUSTER_SCHEME = "redis+cluster://"
RETRIED = (redis_errors.ConnectionError, redis_errors.BusyLoadingError)


def cluster_url(nodes: str) -> str:
    """``host:port[,host:port…]`` as the service's Redis URL."""
    return CLUSTER_SCHEME + nodes


def chosen_url(redis_url: str | None, redis_cluster: str | None) -> str | None:
    """The one URL of the command line's ``--redis-url`` or ``--redis-cluster`` (``olympus
    serve``, ``olympus bots``); None: neither was given."""
    return cluster_url(redis_cluster) if redis_cluster else redis_url


def cluster_nodes(url: str) -> list[tuple[str, int]] | None:
    """The startup nodes of a cluster URL, None for a single Redis."""
    if not url.startswith(CLUSTER_SCHEME):
        return None
    nodes = []
    for part in url[len(CLUSTER_SCHEME) :].split(","):
        host, _, port = part.strip().rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"a cluster node is host:port, not {part!r}")
        nodes.append((host, int(port)))
    return nodes


def _retry(retries: int) -> Retry:
    return Retry(ExponentialBackoff(cap=1.0, base=0.05), retries, supported_errors=RETRIED)


def command_client(config: StoreConfig) -> Redis | RedisCluster:
    """The client for every command but pub/sub. Its commands are tried again, on a fresh
    connection, when the connection fails or Redis is still loading its AOF after a restart:
    the first command after Redis returns must not be refused because its pooled connection
    died with the old server. A command whose connection was lost after Redis ran it is then
    run twice: appends name their command id (a repeat is a duplicate), most else is a read or
    sets a value again, and the few that do not are written to bear it (a rematch's HSETNX
    finds its own id; a revoked seat's generation may step by two, and the token handed out
    is the one Redis holds). The store's own connections (store/resp_connection.py) follow the
    same policy."""
    nodes = cluster_nodes(config.url)
    if nodes is not None:
        return RedisCluster(
            startup_nodes=[ClusterNode(host, port) for host, port in nodes],
            socket_timeout=config.timeout,
            socket_connect_timeout=config.timeout,
            max_connections=config.pool_size,
            retry=_retry(config.retries),
            decode_responses=False,
        )
    return _single(config.url, config, config.pool_size, config.retries)


def pubsub_clients(config: StoreConfig) -> list[Redis]:
    """Clients for the pub/sub connection, tried in turn: the one Redis, or each startup node
    of a cluster. None retries inside redis-py: the fan-out notices a lost connection itself,
    resubscribes and reads what it missed (fanout.py), which a silent reconnect would skip."""
    nodes = cluster_nodes(config.url)
    urls = [config.url] if nodes is None else [f"redis://{h}:{p}" for h, p in nodes]
    return [pubsub_client(config, url) for url in urls]


def pubsub_client(config: StoreConfig, url: str) -> Redis:
    """A client for one pub/sub connection to ``url``, without retries (``pubsub_clients``)."""
    return _single(url, config, 2, retries=0)


def _single(url: str, config: StoreConfig, size: int, retries: int) -> Redis:
    # A blocking pool waits for a free connection instead of raising when all are busy.
    pool = BlockingConnectionPool.from_url(
        url,
        max_connections=size,
        timeout=config.timeout,
        socket_timeout=config.timeout,
        socket_connect_timeout=config.timeout,
        decode_responses=False,
        retry=_retry(retries),
        retry_on_error=list(RETRIED),
    )
    return Redis.from_pool(pool)
