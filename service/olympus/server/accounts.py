"""Players' accounts (api.md, "Players"): sign up, sign in and out, sessions, password change,
the seats an account holds, and what is public of a player.

Accounts live beside the archive (store: ``Accounts``), sessions' generations and attempt
counters in the live store (``Players``). A backend without an archive has no accounts: every
use case here then answers ``503 accounts_unavailable``.

Sign-in attempts are limited per name and per address (``LIMITS``) before any hash is run;
a name that has no account is checked against a decoy hash (passwords.py), so that neither
the answer nor its time tells whether the name exists (a profile tells no more than that).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

from olympus.ratings.glicko2 import DEFAULT
from olympus.store import (
    Account,
    Accounts,
    Backend,
    NameTaken,
    RatingChange,
    Standing,
    StoreUnavailable,
)

from . import sessions
from .lobby import LobbyError
from .names import check_name
from .passwords import MAX_LENGTH, MIN_LENGTH, Passwords
from .sessions import SessionClaim
from .tokens import SeatClaim

log = logging.getLogger(__name__)

# (attempts, window in seconds) per kind of key: sign-ins per name and per address, sign-ups
# per address.
LIMITS = {"name": (10, 300), "address": (30, 300), "signup": (10, 3600)}
# A rating's deviation above this is shown as provisional ("1500?"), as lichess does.
PROVISIONAL_DEVIATION = 110.0
SEEN_SECONDS = 30


class Limited(LobbyError):
    """Too many attempts: ``429`` with ``Retry-After`` (``retry_after`` seconds)."""

    def __init__(self, retry_after: int) -> None:
        super().__init__(429, "too_many_attempts", "Too many attempts: wait a little and retry.")
        self.retry_after = retry_after


def name_key(name: str) -> str:
    """A name as names are compared: case-folded, its runs of spaces made one (at most 64
    characters: the longest a request may send)."""
    return " ".join(name.split()).casefold()[:64]


def public(account: Account) -> dict[str, Any]:
    """What anyone may see of a player: the name and the rating (api.md)."""
    s = account.standing
    return {
        "name": account.name,
        "rating": round(s.rating),
        "deviation": round(s.deviation),
        "provisional": s.deviation > PROVISIONAL_DEVIATION,
        "rated_games": account.rated_games,
    }


@dataclass(frozen=True, slots=True)
class SignedIn:
    """A request's player: the account and the session of its cookie."""

    account: Account
    claim: SessionClaim


def _password(password: str) -> str:
    if not MIN_LENGTH <= len(password) <= MAX_LENGTH:
        raise LobbyError(
            422, "bad_password", f"A password has {MIN_LENGTH} to {MAX_LENGTH} characters."
        )
    return password


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class AccountService:
    """The use cases of accounts, over the store's ``Accounts`` and ``Players``."""

    def __init__(self, backend: Backend, secret: bytes, passwords: Passwords) -> None:
        self.backend = backend
        self.secret = secret
        self.passwords = passwords
        self._seen: dict[int, int] = {}  # account -> when this process last noted it online

    @property
    def enabled(self) -> bool:
        return self.backend.accounts is not None

    def _accounts(self) -> Accounts:
        accounts = self.backend.accounts
        if accounts is None:
            raise LobbyError(
                503, "accounts_unavailable", "This server keeps no accounts (it has no archive)."
            )
        return accounts

    async def _limit(self, kind: str, key: str) -> None:
        most, window = LIMITS[kind]
        count, left_ms = await self.backend.players.attempt(f"{kind}:{key}", window)
        if count > most:
            raise Limited(max(1, -(-left_ms // 1000)))

    async def _session(self, account: Account) -> SignedIn:
        generation, _ = await self.backend.players.session(account.id, "-")
        return SignedIn(account, sessions.new_claim(account.id, generation))

    async def seat_name(self, name: str | None, account: Account | None) -> str | None:
        """The display name a request to take a seat gives (``name``, checked by
        names.check_name: ``422 bad_name`` / ``reserved_name``), None for none. A guest's may
        not be a name an account has (names compared as accounts' are): ``409 account_name``,
        so that nobody plays under a rated player's name unsigned; a signed-in player plays
        under the account's name whatever ``name`` says (lobby.py)."""
        checked = check_name(name)
        if checked is not None and account is None and await self._account_has(checked):
            raise LobbyError(
                409,
                "account_name",
                "That name belongs to a player's account: sign in to play under it, "
                "or choose another.",
            )
        return checked

    async def guest_name(self, name: str) -> str | None:
        """A guest's name carried into a rematch (lobby.py): None (no name) if an account
        has it by now, else the name."""
        return None if await self._account_has(name) else name

    async def _account_has(self, name: str) -> bool:
        """Whether an account has ``name`` (as names are compared). False where this server
        keeps no accounts, or while the archive's PostgreSQL does not answer: a guest's game
        does not wait for it (docs/operations.md, "PostgreSQL down")."""
        accounts = self.backend.accounts
        if accounts is None:
            return False
        try:
            return await accounts.find(name_key(name)) is not None
        except StoreUnavailable as error:
            log.warning("guest name not checked", extra={"error": repr(error)})
            return False

    async def sign_up(self, name: str, password: str, address: str) -> SignedIn:
        """A new account, signed in (a new session); ``409 name_taken``, ``422 bad_name`` /
        ``reserved_name`` / ``bad_password``, ``429`` past the sign-up limit."""
        accounts = self._accounts()
        checked = check_name(name)
        assert checked is not None
        _password(password)
        await self._limit("signup", address)
        hashed = await self.passwords.hash(password)
        standing = Standing(DEFAULT.r, DEFAULT.rd, DEFAULT.sigma)
        try:
            account = await accounts.create(checked, name_key(checked), hashed, _now_ms(), standing)
        except NameTaken:
            raise LobbyError(409, "name_taken", "That name belongs to a player already.") from None
        return await self._session(account)

    async def sign_in(self, name: str, password: str, address: str) -> SignedIn:
        """A new session; ``401 bad_credentials`` whether the name or the password is wrong,
        ``429`` past a limit (per name and per address, counted before the hash)."""
        accounts = self._accounts()
        key = name_key(name)
        await self._limit("address", address)
        await self._limit("name", key)
        account = await accounts.find(key) if len(password) <= MAX_LENGTH else None
        if account is None:
            await self.passwords.verify_unknown(password[:MAX_LENGTH])
        elif await self.passwords.verify(account.password_hash, password):
            return await self._session(account)
        raise LobbyError(401, "bad_credentials", "The name or the password is wrong.")

    async def current(self, cookie: str | None) -> SignedIn | None:
        """The player of a session cookie; None for none; ``401 session_ended`` for one signed
        out, of an older generation, or forged."""
        if not cookie:
            return None
        claim = sessions.verify(self.secret, cookie)
        ended = LobbyError(401, "session_ended", "You are signed out: sign in again.")
        if claim is None:
            raise ended
        generation, out = await self.backend.players.session(claim.account_id, claim.session_id)
        if out or generation != claim.generation:
            raise ended
        account = await self._accounts().get(claim.account_id)
        if account is None:
            raise ended
        return SignedIn(account, claim)

    async def seen(self, account: Account) -> None:
        """Note the player online (at most once every ``SEEN_SECONDS`` by this process)."""
        now = _now_ms()
        if now - self._seen.get(account.id, 0) < SEEN_SECONDS * 1000:
            return
        if len(self._seen) > 10_000:
            self._seen.clear()
        self._seen[account.id] = now
        await self.backend.players.note_online(account.name, now)

    async def sign_out(self, player: SignedIn, everywhere: bool) -> None:
        if everywhere:
            await self.backend.players.bump_generation(player.account.id)
        else:
            claim = player.claim
            await self.backend.players.end_session(
                claim.account_id, claim.session_id, sessions.MAX_AGE
            )

    async def change_password(self, player: SignedIn, old: str, new: str) -> SignedIn:
        """The new password's hash kept, every session ended, a new one for this browser;
        ``403 bad_credentials`` if ``old`` is not the password."""
        _password(new)
        await self._limit("name", player.account.name_key)
        if not await self.passwords.verify(player.account.password_hash, old[:MAX_LENGTH]):
            raise LobbyError(403, "bad_credentials", "The current password is wrong.")
        await self._accounts().set_password(player.account.id, await self.passwords.hash(new))
        await self.backend.players.bump_generation(player.account.id)
        account = await self._accounts().get(player.account.id)
        if account is None:
            raise LobbyError(401, "session_ended", "You are signed out: sign in again.")
        return await self._session(account)

    async def find(self, name: str) -> Account:
        """The account of ``name``; ``404 player_not_found``."""
        account = await self._accounts().find(name_key(name))
        if account is None:
            raise LobbyError(404, "player_not_found", "There is no player of that name.")
        assert isinstance(account, Account)
        return account

    async def games(self, account: Account, limit: int = 50) -> list[tuple[str, str]]:
        """The account's rooms and seats, newest first."""
        games: list[tuple[str, str]] = await self._accounts().games(account.id, limit)
        return games

    async def history(self, account: Account) -> list[RatingChange]:
        """The account's rating changes, newest first."""
        changes: list[RatingChange] = await self._accounts().history(account.id)
        return changes

    async def changes(self, room_id: str) -> list[RatingChange]:
        changes: list[RatingChange] = await self._accounts().changes(room_id)
        return changes

    async def leaderboard(self, min_games: int, limit: int) -> list[Account]:
        best: list[Account] = await self._accounts().leaderboard(min_games, limit)
        return best

    async def bind(self, account: Account, claim: SeatClaim) -> bool:
        """Bind the seat of a valid seat token to ``account`` (a guest's game kept on sign-up),
        unless it is bound to another account: whether it is the account's now."""
        seats = self.backend.seats
        field = f"account:{claim.seat}"
        held = await seats.set_once(claim.room, field, str(account.id))
        if held != str(account.id):
            return False
        await self._accounts().add_game(account.id, claim.room, claim.seat, _now_ms())
        return True
