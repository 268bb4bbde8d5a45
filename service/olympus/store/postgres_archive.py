"""The ``Archive`` port on PostgreSQL (ports.py): a ``games`` row per finished game, its log
packed in it (archived.py), and ``game_players`` for each player's list (sql/0001_archive.sql).

Connections come from an asyncpg pool made on first use (and made again after a failure to
make it); every failure to reach the server is ``StoreUnavailable``, as the live store's are.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import asyncpg

from .archived import (
    ArchiveConflict,
    ArchivedGame,
    ArchivedHead,
    GameSummary,
    PlayerGame,
    chain_head,
    pack_log,
    unpack_log,
)
from .failures import translating
from .migrate import migrate
from .records import StoreUnavailable, check_room_id

# What says the server was not reached (or was lost): the operation may not have happened.
_UNREACHED = (
    OSError,
    TimeoutError,
    asyncpg.PostgresConnectionError,
    asyncpg.exceptions.OperatorInterventionError,  # shutting down, starting up
    asyncpg.exceptions.InsufficientResourcesError,  # too many connections
    asyncpg.InterfaceError,  # a connection closed under a query
)


def _unreached(error: BaseException) -> StoreUnavailable:
    return StoreUnavailable(f"PostgreSQL: {type(error).__name__}: {error}")


# A coroutine method raising its failures to reach PostgreSQL as ``StoreUnavailable``.
reached = translating(_UNREACHED, _unreached)


_SUMMARY_COLUMNS = ("options", "players", "result", "reason", "started_ms", "ended_ms")
_SUMMARY = ", ".join(_SUMMARY_COLUMNS)
_SUMMARY_OF_GAMES = ", ".join(f"g.{column}" for column in _SUMMARY_COLUMNS)


def _summary(row: asyncpg.Record) -> GameSummary:
    return GameSummary(
        options=json.loads(row["options"]),
        players=json.loads(row["players"]),
        result=row["result"],
        reason=row["reason"],
        started_ms=row["started_ms"],
        ended_ms=row["ended_ms"],
    )


class PostgresArchive:
    """The archive in the PostgreSQL database ``url`` names (a libpq URL)."""

    def __init__(self, url: str, *, timeout: float = 10.0, pool_size: int = 4) -> None:
        self.url = url
        self.timeout = timeout
        self.pool_size = pool_size
        self._pool: asyncpg.Pool | None = None
        self._making: asyncio.Lock | None = None

    async def connections(self) -> asyncpg.Pool:
        """The pool (made now if there is none): the accounts' too (postgres_accounts.py)."""
        if self._pool is not None:
            return self._pool
        if self._making is None:
            self._making = asyncio.Lock()
        async with self._making:
            if self._pool is None:
                self._pool = await asyncpg.create_pool(
                    self.url,
                    min_size=0,
                    max_size=self.pool_size,
                    timeout=self.timeout,
                    command_timeout=self.timeout,
                )
        return self._pool

    async def _fetch(self, query: str, *args: Any) -> list[asyncpg.Record]:
        pool = await self.connections()
        rows: list[asyncpg.Record] = await pool.fetch(query, *args)
        return rows

    @reached
    async def migrate(self) -> None:
        pool = await self.connections()
        async with pool.acquire() as connection:
            await migrate(connection)

    @reached
    async def put(self, game: ArchivedGame) -> ArchivedHead:
        s = game.summary
        pool = await self.connections()
        async with pool.acquire() as connection, connection.transaction():
            written = await connection.fetchval(
                "INSERT INTO games (room_id, epoch, options, players, result, reason,"
                " started_ms, ended_ms, event_count, chain_head, meta, seats, log)"
                " VALUES ($1, $2, $3::jsonb, $4::jsonb, $5, $6, $7, $8, $9, $10, $11,"
                " $12::jsonb, $13) ON CONFLICT (room_id) DO NOTHING RETURNING true",
                game.room_id,
                game.epoch,
                json.dumps(s.options),
                json.dumps(s.players),
                s.result,
                s.reason,
                s.started_ms,
                s.ended_ms,
                len(game.events),
                game.head,
                game.meta,
                json.dumps(game.seats),
                pack_log(game.events),
            )
            if written:
                await connection.executemany(
                    "INSERT INTO game_players (room_id, seat, name, name_key, ended_ms)"
                    " VALUES ($1, $2, $3, lower($3), $4)",
                    [
                        (game.room_id, seat, name, s.ended_ms)
                        for seat, name in s.players.items()
                        if name
                    ],
                )
        held = await self.head(game.room_id)
        offered = ArchivedHead(len(game.events), game.head)
        if held != offered:
            raise ArchiveConflict(game.room_id, held or ArchivedHead(0, ""), offered)
        return held

    @reached
    async def head(self, room_id: str) -> ArchivedHead | None:
        """Read back from the kept log itself: its events counted and chained anew."""
        check_room_id(room_id)
        rows = await self._fetch("SELECT log FROM games WHERE room_id = $1", room_id)
        if not rows:
            return None
        events = unpack_log(rows[0]["log"])
        return ArchivedHead(len(events), chain_head(events))

    @reached
    async def get(self, room_id: str) -> ArchivedGame | None:
        check_room_id(room_id)
        rows = await self._fetch(
            f"SELECT room_id, epoch, meta, seats, log, chain_head, {_SUMMARY} FROM games"
            " WHERE room_id = $1",
            room_id,
        )
        if not rows:
            return None
        row = rows[0]
        return ArchivedGame(
            room_id=row["room_id"],
            epoch=row["epoch"],
            meta=bytes(row["meta"]),
            seats=json.loads(row["seats"]),
            events=unpack_log(row["log"]),
            summary=_summary(row),
        )

    @reached
    async def analysis(self, room_id: str) -> bytes | None:
        check_room_id(room_id)
        rows = await self._fetch("SELECT data FROM analyses WHERE room_id = $1", room_id)
        return bytes(rows[0]["data"]) if rows else None

    @reached
    async def put_analysis(self, room_id: str, data: bytes) -> bytes | None:
        check_room_id(room_id)
        rows = await self._fetch(
            "INSERT INTO analyses (room_id, data) SELECT room_id, $2 FROM games"
            " WHERE room_id = $1 ON CONFLICT (room_id) DO NOTHING",
            room_id,
            data,
        )
        del rows
        return await self.analysis(room_id)

    @reached
    async def records(self, room_ids: Sequence[str]) -> dict[str, tuple[bytes, dict[str, str]]]:
        for room_id in room_ids:
            check_room_id(room_id)
        rows = await self._fetch(
            "SELECT room_id, meta, seats FROM games WHERE room_id = ANY($1::text[])", list(room_ids)
        )
        return {r["room_id"]: (bytes(r["meta"]), json.loads(r["seats"])) for r in rows}

    @reached
    async def room_ids(self, *, offset: int = 0, limit: int | None = None) -> list[str]:
        rows = await self._fetch(
            "SELECT room_id FROM games ORDER BY room_id OFFSET $1 LIMIT $2", offset, limit
        )
        return [r["room_id"] for r in rows]

    @reached
    async def games_of(
        self, name: str, *, before: tuple[int, str] | None = None, limit: int = 20
    ) -> list[PlayerGame]:
        after = " AND (p.ended_ms, p.room_id) < ($3, $4)" if before is not None else ""
        rows = await self._fetch(
            f"SELECT p.room_id, p.seat, {_SUMMARY_OF_GAMES}"
            " FROM game_players p JOIN games g USING"
            f" (room_id) WHERE p.name_key = lower($1){after}"
            " ORDER BY p.ended_ms DESC, p.room_id DESC LIMIT $2",
            name,
            limit,
            *(before or ()),
        )
        return [PlayerGame(r["room_id"], r["seat"], _summary(r)) for r in rows]

    async def aclose(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()
