"""The ``Accounts`` port on PostgreSQL (ports.py), in the archive's database and on its pool
(postgres_archive.py): tables ``accounts``, ``rated_games``, ``rating_changes`` and
``account_games`` (sql/0002_players.sql).

A game is rated in one transaction: its ``rated_games`` row first (the room's id is the key,
so a second try finds it and changes nothing), then both accounts locked in the order of
their ids (two games rated at once never wait on each other in a circle), the new standings
computed from the locked ones, written with their ``rating_changes``.
"""

from __future__ import annotations

from collections.abc import Mapping

import asyncpg

from .players import Account, NameTaken, RatedGame, Rating, RatingChange, Standing
from .postgres_archive import PostgresArchive, reached
from .records import check_room_id

_ACCOUNT = (
    "id, name, name_key, password_hash, created_ms, rating, deviation, volatility,"
    " rated_games, rated_ms"
)
_CHANGE = (
    "room_id, account_id, seat, score, rating_before, deviation_before, rating_after,"
    " deviation_after, volatility_after, rated_ms"
)


def _account(row: asyncpg.Record) -> Account:
    return Account(
        id=row["id"],
        name=row["name"],
        name_key=row["name_key"],
        password_hash=row["password_hash"],
        created_ms=row["created_ms"],
        standing=Standing(row["rating"], row["deviation"], row["volatility"]),
        rated_games=row["rated_games"],
        rated_ms=row["rated_ms"],
    )


def _change(row: asyncpg.Record) -> RatingChange:
    return RatingChange(
        room_id=row["room_id"],
        account_id=row["account_id"],
        seat=row["seat"],
        score=row["score"],
        # the volatility before is the one after the game before: the graph needs none
        before=Standing(row["rating_before"], row["deviation_before"], 0.0),
        after=Standing(row["rating_after"], row["deviation_after"], row["volatility_after"]),
        rated_ms=row["rated_ms"],
    )


class PostgresAccounts:
    """Accounts in ``archive``'s database."""

    def __init__(self, archive: PostgresArchive) -> None:
        self.archive = archive

    async def _fetch(self, query: str, *args: object) -> list[asyncpg.Record]:
        pool = await self.archive.connections()
        rows: list[asyncpg.Record] = await pool.fetch(query, *args)
        return rows

    @reached
    async def create(
        self, name: str, name_key: str, password_hash: str, at_ms: int, standing: Standing
    ) -> Account:
        try:
            rows = await self._fetch(
                "INSERT INTO accounts (name, name_key, password_hash, created_ms, rating,"
                f" deviation, volatility) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING {_ACCOUNT}",
                name,
                name_key,
                password_hash,
                at_ms,
                standing.rating,
                standing.deviation,
                standing.volatility,
            )
        except asyncpg.UniqueViolationError:
            raise NameTaken(name_key) from None
        return _account(rows[0])

    @reached
    async def find(self, name_key: str) -> Account | None:
        rows = await self._fetch(f"SELECT {_ACCOUNT} FROM accounts WHERE name_key = $1", name_key)
        return _account(rows[0]) if rows else None

    @reached
    async def get(self, account_id: int) -> Account | None:
        rows = await self._fetch(f"SELECT {_ACCOUNT} FROM accounts WHERE id = $1", account_id)
        return _account(rows[0]) if rows else None

    @reached
    async def set_password(self, account_id: int, password_hash: str) -> None:
        await self._fetch(
            "UPDATE accounts SET password_hash = $2 WHERE id = $1", account_id, password_hash
        )

    @reached
    async def add_game(self, account_id: int, room_id: str, seat: str, created_ms: int) -> None:
        check_room_id(room_id)
        await self._fetch(
            "INSERT INTO account_games (account_id, room_id, seat, created_ms)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            account_id,
            room_id,
            seat,
            created_ms,
        )

    @reached
    async def games(self, account_id: int, limit: int = 50) -> list[tuple[str, str]]:
        rows = await self._fetch(
            "SELECT room_id, seat FROM account_games WHERE account_id = $1"
            " ORDER BY created_ms DESC, room_id LIMIT $2",
            account_id,
            limit,
        )
        return [(r["room_id"], r["seat"]) for r in rows]

    @reached
    async def rate(self, game: RatedGame, rating: Rating) -> list[RatingChange]:
        check_room_id(game.room_id)
        pool = await self.archive.connections()
        async with pool.acquire() as connection, connection.transaction():
            first = await connection.fetchval(
                "INSERT INTO rated_games (room_id, result, rated_ms) VALUES ($1, $2, $3)"
                " ON CONFLICT DO NOTHING RETURNING true",
                game.room_id,
                game.result,
                game.at_ms,
            )
            if first:
                await self._rate(connection, game, rating)
        return await self.changes(game.room_id)

    async def _rate(self, connection: asyncpg.Connection, game: RatedGame, rating: Rating) -> None:
        rows = await connection.fetch(
            f"SELECT {_ACCOUNT} FROM accounts WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE",
            sorted(set(game.accounts.values())),
        )
        held = {row["id"]: _account(row) for row in rows}
        seated = {seat: held[account] for seat, account in game.accounts.items()}
        before: Mapping[str, Standing] = {seat: a.standing for seat, a in seated.items()}
        after = rating(seated)
        for seat, account in game.accounts.items():
            new = after[seat]
            await connection.execute(
                "UPDATE accounts SET rating = $2, deviation = $3, volatility = $4,"
                " rated_games = rated_games + 1, rated_ms = GREATEST(rated_ms, $5) WHERE id = $1",
                account,
                new.rating,
                new.deviation,
                new.volatility,
                game.at_ms,
            )
            await connection.execute(
                f"INSERT INTO rating_changes ({_CHANGE})"
                " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                game.room_id,
                account,
                seat,
                game.scores[seat],
                before[seat].rating,
                before[seat].deviation,
                new.rating,
                new.deviation,
                new.volatility,
                game.at_ms,
            )

    @reached
    async def changes(self, room_id: str) -> list[RatingChange]:
        check_room_id(room_id)
        rows = await self._fetch(
            f"SELECT {_CHANGE} FROM rating_changes WHERE room_id = $1 ORDER BY seat", room_id
        )
        return [_change(r) for r in rows]

    @reached
    async def history(self, account_id: int, limit: int = 200) -> list[RatingChange]:
        rows = await self._fetch(
            f"SELECT {_CHANGE} FROM rating_changes WHERE account_id = $1"
            " ORDER BY rated_ms DESC, room_id DESC LIMIT $2",
            account_id,
            limit,
        )
        return [_change(r) for r in rows]

    @reached
    async def leaderboard(self, min_games: int, limit: int) -> list[Account]:
        rows = await self._fetch(
            f"SELECT {_ACCOUNT} FROM accounts WHERE rated_games >= $1 AND rated_games > 0"
            " ORDER BY rating DESC, id LIMIT $2",
            min_games,
            limit,
        )
        return [_account(r) for r in rows]

    async def aclose(self) -> None:
        """Nothing: the pool is the archive's, closed with it."""
