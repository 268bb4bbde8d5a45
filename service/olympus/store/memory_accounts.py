"""The ``Accounts`` port in memory (ports.py): postgres_accounts.py's contract, for tests and
``olympus serve --store memory``. One per prefix in a process (``shared``), as the memory
archive is; every operation runs whole under its lock."""

from __future__ import annotations

import dataclasses
import threading

from .players import Account, NameTaken, RatedGame, Rating, RatingChange, Standing
from .records import check_room_id

_SHARED: dict[str, MemoryAccounts] = {}
_SHARED_LOCK = threading.Lock()


class MemoryAccounts:
    """Accounts in this process's memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._accounts: dict[int, Account] = {}
        self._by_key: dict[str, int] = {}
        self._games: dict[int, dict[str, tuple[str, int]]] = {}  # id -> room -> (seat, ms)
        self._changes: dict[str, list[RatingChange]] = {}  # rated room -> its changes

    @classmethod
    def shared(cls, prefix: str) -> MemoryAccounts:
        with _SHARED_LOCK:
            accounts = _SHARED.get(prefix)
            if accounts is None:
                accounts = _SHARED[prefix] = cls()
            return accounts

    async def create(
        self, name: str, name_key: str, password_hash: str, at_ms: int, standing: Standing
    ) -> Account:
        with self._lock:
            if name_key in self._by_key:
                raise NameTaken(name_key)
            account = Account(
                len(self._accounts) + 1, name, name_key, password_hash, at_ms, standing
            )
            self._accounts[account.id] = account
            self._by_key[name_key] = account.id
            return account

    async def find(self, name_key: str) -> Account | None:
        with self._lock:
            found = self._by_key.get(name_key)
            return None if found is None else self._accounts[found]

    async def get(self, account_id: int) -> Account | None:
        with self._lock:
            return self._accounts.get(account_id)

    async def set_password(self, account_id: int, password_hash: str) -> None:
        with self._lock:
            account = self._accounts.get(account_id)
            if account is not None:
                self._accounts[account_id] = dataclasses.replace(
                    account, password_hash=password_hash
                )

    async def add_game(self, account_id: int, room_id: str, seat: str, created_ms: int) -> None:
        check_room_id(room_id)
        with self._lock:
            self._games.setdefault(account_id, {}).setdefault(room_id, (seat, created_ms))

    async def games(self, account_id: int, limit: int = 50) -> list[tuple[str, str]]:
        with self._lock:
            games = self._games.get(account_id, {})
            newest = sorted(games.items(), key=lambda item: (-item[1][1], item[0]))
            return [(room, seat) for room, (seat, _) in newest[:limit]]

    async def rate(self, game: RatedGame, rating: Rating) -> list[RatingChange]:
        check_room_id(game.room_id)
        with self._lock:
            if game.room_id not in self._changes:
                seated = {seat: self._accounts[a] for seat, a in game.accounts.items()}
                before = {seat: account.standing for seat, account in seated.items()}
                after = rating(seated)
                changes = []
                for seat, account_id in sorted(game.accounts.items()):
                    account = self._accounts[account_id]
                    self._accounts[account_id] = dataclasses.replace(
                        account,
                        standing=after[seat],
                        rated_games=account.rated_games + 1,
                        rated_ms=max(account.rated_ms or 0, game.at_ms),
                    )
                    changes.append(
                        RatingChange(
                            game.room_id,
                            account_id,
                            seat,
                            game.scores[seat],
                            dataclasses.replace(before[seat], volatility=0.0),
                            after[seat],
                            game.at_ms,
                        )
                    )
                self._changes[game.room_id] = changes
            return list(self._changes[game.room_id])

    async def changes(self, room_id: str) -> list[RatingChange]:
        check_room_id(room_id)
        with self._lock:
            return list(self._changes.get(room_id, []))

    async def history(self, account_id: int, limit: int = 200) -> list[RatingChange]:
        with self._lock:
            mine = [c for cs in self._changes.values() for c in cs if c.account_id == account_id]
        mine.sort(key=lambda c: (c.rated_ms, c.room_id), reverse=True)
        return mine[:limit]

    async def leaderboard(self, min_games: int, limit: int) -> list[Account]:
        with self._lock:
            rated = [a for a in self._accounts.values() if a.rated_games >= max(1, min_games)]
        rated.sort(key=lambda a: (-a.standing.rating, a.id))
        return rated[:limit]

    async def aclose(self) -> None:
        """Nothing: the accounts stay, for every other user of them."""
