"""``open_backend``: the one place that picks a storage backend, from its URL.

``memory://`` opens the process's memory backend of the config's prefix (memory.py: every
caller in the process with that prefix shares it, as the processes of a deployment share one
Redis); anything else the Redis backend (redis_backend.py), on one Redis or a Cluster as the
URL says. Nothing else in the service branches on the kind of storage.
"""

from __future__ import annotations

from .ports import Backend, StoreConfig

MEMORY_URL = "memory://"


def open_backend(config: StoreConfig) -> Backend:
    """Every port of the storage ``config.url`` names; connections are made on first use."""
    if config.url.startswith(MEMORY_URL):
        from .memory import MemoryBackend

        return MemoryBackend.shared(config)
    from .redis_backend import RedisBackend

    return RedisBackend(config)
