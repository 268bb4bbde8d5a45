"""``open_backend``: the one place that picks a storage backend, from its URL.

``memory://`` opens the process's memory backend of the config's prefix (memory.py: every
caller in the process with that prefix shares it, as the processes of a deployment share one
Redis); anything else the Redis backend (redis_backend.py), on one Redis or a Cluster as the
URL says. Nothing else in the service branches on the kind of storage.

Given an ``archive_url``, the backend reads through to that archive (tiered.py):
``postgresql://…`` (postgres_archive.py) or ``memory://`` (memory_archive.py, the process's one
for the prefix); players' accounts live beside it (postgres_accounts.py, memory_accounts.py).
"""

from __future__ import annotations

from .ports import Accounts, Archive, Backend, StoreConfig

MEMORY_URL = "memory://"


def open_backend(config: StoreConfig) -> Backend:
    """Every port of the storage ``config.url`` names, reading through to the archive
    ``config.archive_url`` names if any; connections are made on first use."""
    live = _live(config)
    if config.archive_url is None:
        return live
    from .tiered import TieredBackend

    archive = open_archive(config)
    return TieredBackend(live, archive, open_accounts(archive, config))


def open_archive(config: StoreConfig) -> Archive:
    """The archive ``config.archive_url`` names (``ValueError`` for none or an unknown one)."""
    url = config.archive_url or ""
    if url.startswith(MEMORY_URL):
        from .memory_archive import MemoryArchive

        return MemoryArchive.shared(config.prefix)
    if url.startswith(("postgresql://", "postgres://")):
        from .postgres_archive import PostgresArchive

        return PostgresArchive(url, timeout=config.timeout)
    raise ValueError(f"an archive URL is postgresql://… or memory://, not {url!r}")


def open_accounts(archive: Archive, config: StoreConfig) -> Accounts:
    """The players' accounts beside ``archive``: in its PostgreSQL database, or in memory."""
    from .postgres_archive import PostgresArchive

    if isinstance(archive, PostgresArchive):
        from .postgres_accounts import PostgresAccounts

        return PostgresAccounts(archive)
    from .memory_accounts import MemoryAccounts

    return MemoryAccounts.shared(config.prefix)


def _live(config: StoreConfig) -> Backend:
    if config.url.startswith(MEMORY_URL):
        from .memory import MemoryBackend

        return MemoryBackend.shared(config)
    from .redis_backend import RedisBackend

    return RedisBackend(config)
