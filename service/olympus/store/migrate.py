"""The archive's schema, versioned: ``sql/NNNN_name.sql`` files applied in order, each once.

``schema_migrations`` records each version applied. Every process may migrate at start: they
take turns on a transaction-level advisory lock, and the migrations a start applies run in
one transaction with their records, so a crash leaves them wholly applied or not at all. A
database that has a version this code does not know (a newer release's) is left alone: this release
runs on the tables it knows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources

import asyncpg

# pg_advisory_xact_lock's key for migrating: any number, the same in every release.
_LOCK = 0x4F4C594D50  # "OLYMP"
_NAME = re.compile(r"(\d{4})_([a-z0-9_]+)\.sql")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def migrations() -> list[Migration]:
    """This release's migrations, oldest first (``ValueError`` for a misnamed file or a gap)."""
    found = []
    for entry in resources.files("olympus.store").joinpath("sql").iterdir():
        matched = _NAME.fullmatch(entry.name)
        if matched is None:
            raise ValueError(f"not a migration's name: {entry.name} (NNNN_name.sql)")
        found.append(Migration(int(matched[1]), matched[2], entry.read_text()))
    found.sort(key=lambda m: m.version)
    if [m.version for m in found] != list(range(1, len(found) + 1)):
        raise ValueError(f"migrations are numbered 1, 2, … without gaps: {found}")
    return found


async def migrate(connection: asyncpg.Connection) -> list[int]:
    """Apply every migration the database lacks; return the versions applied now."""
    applied_now = []
    async with connection.transaction():
        await connection.execute("SELECT pg_advisory_xact_lock($1)", _LOCK)
        await connection.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version integer PRIMARY KEY, name text NOT NULL,"
            " applied_at timestamptz NOT NULL DEFAULT now())"
        )
        have = {
            r["version"] for r in await connection.fetch("SELECT version FROM schema_migrations")
        }
        for migration in migrations():
            if migration.version in have:
                continue
            await connection.execute(migration.sql)
            await connection.execute(
                "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                migration.version,
                migration.name,
            )
            applied_now.append(migration.version)
    return applied_now
