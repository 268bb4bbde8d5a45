"""Rated games change their players' ratings once, at their end, whatever process dies when.

A game's end queues its room (``Backend.rating_queue``, due at once) before the room is listed
finished, in every game when the backend keeps accounts. Every process runs a ``Rater``; each
pass takes the rooms due, claims each for ``rating_lease_seconds`` and rates it:

1. **read**: the room's meta, seats and last ``GameEnded``: a room not rated, or not won, lost
   or drawn by two accounts (an aborted game), leaves the queue unrated;
2. **rated**: ``Accounts.rate`` changes both ratings in one transaction keyed by the room:
   a second try, by this process or any other, changes nothing;
3. **done**: the room leaves the queue.

Killed at any step (``kill -9`` in the middle of the transaction included), the room stays
queued and the next pass after the lease rates it, once. Loss by absence (R12) is a loss.
Each game is a rating period of its own for both players (ratings/glicko2.py); before it, a
player's deviation widens by the time since the player's last rated game, one rating period
per ``IDLE_DAYS_PER_PERIOD`` days (``glicko2.idle``): a rating not played for long is less
certain, and the first games after a break move it further.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping

import msgpack

from olympus.ratings import glicko2
from olympus.rules import Faction
from olympus.store import (
    Account,
    Backend,
    RatedGame,
    RatingChange,
    RoomNotFound,
    Standing,
    StoreUnavailable,
)

from .archiver import last_end
from .lobby import seat_accounts
from .metrics import Counter, ServiceMetrics
from .settings import Settings

log = logging.getLogger("olympus.server.rater")

# Called after each step of a room's rating ("read", "rating" inside the transaction, "rated",
# "done") with the room: what tests kill the process at.
StepHook = Callable[[str, str], None]


# One rating period of widening per this many days without a rated game: from a deviation of
# 50, a month away widens it to 54, a year to 90, three years to 140 (at volatility 0.06).
IDLE_DAYS_PER_PERIOD = 7.0
DAY_MS = 86_400_000


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def scores(result: str) -> dict[str, float] | None:
    """Each seat's score (1 a win, 0.5 a draw, 0 a loss) of a game's ``result``; None for a
    game without one (aborted)."""
    if result == "draw":
        return {f.value: 0.5 for f in Faction}
    if result in (f.value for f in Faction):
        return {f.value: 1.0 if f.value == result else 0.0 for f in Faction}
    return None


def idle_periods(last_rated_ms: int | None, at_ms: int) -> float:
    """The rating periods (and fraction of one) between a player's last rated game
    (``last_rated_ms``, None before any) and this one's rating at ``at_ms``: 0 for a player
    never rated (a new player's deviation is a new player's) or for clocks out of order."""
    if last_rated_ms is None:
        return 0.0
    return max(0, at_ms - last_rated_ms) / (IDLE_DAYS_PER_PERIOD * DAY_MS)


def glicko(
    scored: Mapping[str, float], at_ms: int
) -> Callable[[Mapping[str, Account]], dict[str, Standing]]:
    """The ``Rating`` of one game rated at ``at_ms``: each seat's standing widened by its
    time without rated games (``idle_periods``), then a Glicko-2 period of one game against
    the other's standing so widened."""

    def rate(before: Mapping[str, Account]) -> dict[str, Standing]:
        widened = {}
        for seat, account in before.items():
            s = account.standing
            rating = glicko2.Rating(s.rating, s.deviation, s.volatility)
            widened[seat] = glicko2.idle(rating, idle_periods(account.rated_ms, at_ms))
        after = {}
        for seat, rating in widened.items():
            opponent = widened[Faction(seat).enemy.value]
            new = glicko2.rate(rating, [glicko2.Outcome(opponent, scored[seat])])
            after[seat] = Standing(new.r, new.rd, new.sigma)
        return after

    return rate


class Rater:
    """Rates this deployment's finished rated games (see the module)."""

    def __init__(
        self,
        backend: Backend,
        settings: Settings,
        metrics: ServiceMetrics,
        on_step: StepHook | None = None,
    ) -> None:
        accounts = backend.accounts
        assert accounts is not None, "a rater needs the accounts"
        self.accounts = accounts
        self.backend = backend
        self.queue = backend.rating_queue
        self.settings = settings
        self.on_step = on_step
        self.rated = metrics.registry.add(
            Counter("olympus_rated_games_total", "Rated games whose ratings this process changed.")
        )

    async def queue_finished(self, room_id: str) -> None:
        """Queue a room whose game has just ended (every game: the pass tells rated ones)."""
        await self.queue.set_due(room_id, _now_ms())

    async def run(self) -> None:
        """Pass after pass, every ``rating_poll_seconds``, until cancelled."""
        while True:
            try:
                await self.pass_once()
            except StoreUnavailable as error:
                log.warning("rating waits: %s", error)
            except Exception:
                log.exception("a rating pass failed")
            await asyncio.sleep(self.settings.rating_poll_seconds)

    async def pass_once(self) -> int:
        """Rate the rooms due now; return how many were rated by this pass."""
        now = _now_ms()
        lease = now + int(self.settings.rating_lease_seconds * 1000)
        done = 0
        for room_id in await self.queue.overdue(now, limit=100):
            await self.queue.set_due(room_id, lease)  # others pass it by for a while
            try:
                done += bool(await self.rate(room_id))
            except StoreUnavailable:
                await self.queue.set_due(room_id, now)  # due again at once
                raise
        return done

    async def rate(self, room_id: str) -> list[RatingChange]:
        """Rate one room (see the module): its changes, or none for a game not rated."""
        game = await self.read(room_id)
        self._step("read", room_id)
        changes: list[RatingChange] = []
        if game is not None:
            rating = glicko(game.scores, game.at_ms)

            def rate(before: Mapping[str, Account]) -> dict[str, Standing]:
                self._step("rating", room_id)  # inside the transaction
                return rating(before)

            changes = await self.accounts.rate(game, rate)
            self.rated.inc()
            self._step("rated", room_id)
        await self.queue.set_due(room_id, None)
        self._step("done", room_id)
        return changes

    async def read(self, room_id: str) -> RatedGame | None:
        """The room as a rated game, or None: not rated, without two accounts, or without a
        result."""
        try:
            meta = msgpack.unpackb(await self.backend.events.room_meta(room_id))
            if not meta["options"].get("rated"):
                return None
            accounts = seat_accounts(await self.backend.seats.fields(room_id))
            stored = await self.backend.events.read(room_id, 0)
        except RoomNotFound:
            return None
        ended = last_end([s.data for s in stored])
        scored = None if ended is None else scores(ended.result)
        if ended is None or scored is None or len(accounts) != 2:
            return None
        if len(set(accounts.values())) != 2:  # one account on both sides: nothing to rate
            return None
        # its end: the last event's time as its writer gave it (now, where the log keeps none)
        ended_ms = stored[-1].at_ms or _now_ms()
        return RatedGame(room_id, accounts, scored, ended.result, ended_ms)

    def _step(self, step: str, room_id: str) -> None:
        if self.on_step is not None:
            self.on_step(step, room_id)
