"""Quick pairing ("Play now", api.md): signed-in players seek an opponent in a pool (a clock
and variants, rated or casual) and are paired by rating across every process.

The pool lives in the store (``SeekPool``; the rule: store/seeks.py). A seek is paired as soon
as it is made if someone fits, else by the pass every process makes every
``PASS_SECONDS`` (ranges widen with the wait). A seek lives while its player waits for it:
each wait (a long poll, ``WAIT_SECONDS``) keeps it alive a little longer than it lasts, and a
wait whose client goes away cancels it; a seek nobody waits for dies within ``ALIVE_GRACE``
of its last wait and is never paired.

A pair's room is named by the pair (seeks.py), so the process that paired it makes it, and a
waiter who finds its match without the room makes it too (after a process died in between):
making it twice makes it once. Every process is told of each pair on the control channel, so
the two waiters, wherever they are, answer within a fraction of a second.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from olympus.store import Account, Backend, Match, RoomExists, Seek, StoreUnavailable

from .lobby import CreateRoom, Lobby, LobbyError, Seated

log = logging.getLogger("olympus.server.pairing")

PASS_SECONDS = 0.5
WAIT_SECONDS = 5.0
LOOK_SECONDS = 2.0  # a waiter asks the store for its match this often besides being told
ALIVE_GRACE = 3.0  # a seek outlives its last wait by this much
MADE_WAIT = 2.0  # a waiter whose room is not there makes it after this long
GIVE_UP = 15.0  # and is told to try again if it is still not there
# The clocks of "Play now" (R12): seconds per move, per commitment, absence before forfeit.
CLOCKS: dict[str, tuple[int | None, int | None, int | None]] = {
    "live": (120, 60, 600),
    "day": (86400, 86400, 3 * 86400),
    "none": (None, None, None),
}


class SeekRequest(BaseModel):
    """The body of ``POST /seeks``."""

    model_config = ConfigDict(extra="forbid", strict=True)
    clock: Literal["live", "day", "none"] = "live"
    open_combat: bool = False
    random_setup: bool = False
    rated: bool = True

    def pool(self) -> str:
        variants = f"{int(self.open_combat)}{int(self.random_setup)}"
        return f"{self.clock}.{variants}.{'rated' if self.rated else 'casual'}"


def room_request(pool: str) -> CreateRoom:
    """The options of the rooms of ``pool`` (``SeekRequest.pool``'s name)."""
    clock, variants, kind = pool.split(".")
    move, commit, forfeit = CLOCKS[clock]
    return CreateRoom(
        open_combat=variants[0] == "1",
        random_setup=variants[1] == "1",
        move_seconds=move,
        commit_seconds=commit,
        forfeit_seconds=forfeit,
        rated=kind == "rated",
    )


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class Pairing:
    """This process's part of quick pairing (see the module)."""

    def __init__(
        self,
        backend: Backend,
        lobby: Lobby,
        broadcast: Callable[[dict[str, Any]], Awaitable[None]],
        begin: Callable[[str], Awaitable[None]],
    ) -> None:
        """``broadcast`` tells every process (fanout.py); ``begin(room)`` starts a new room's
        game (a Random Setup drawn)."""
        self.seeks = backend.seeks
        self.accounts = backend.accounts
        self.lobby = lobby
        self.broadcast = broadcast
        self.begin = begin
        self._waiting: dict[str, asyncio.Event] = {}

    async def seek(self, account: Account, request: SeekRequest) -> str:
        """A new seek of ``account`` (its earlier one cancelled), paired at once if someone
        fits: the seek's id."""
        now = _now_ms()
        seek_id = secrets.token_urlsafe(16)
        alive = now + int((WAIT_SECONDS + ALIVE_GRACE) * 1000)
        rating = account.standing.rating
        await self.seeks.add(Seek(seek_id, account.id, request.pool(), rating, now, alive))
        await self.pair(request.pool())
        return seek_id

    async def wait(
        self, account: Account, seek_id: str, gone: Callable[[], Awaitable[bool]]
    ) -> Seated | None:
        """Wait up to ``WAIT_SECONDS`` for the seek's match: the account's seat in its room,
        or None (still waiting; the seek kept alive). ``gone()`` tells whether the waiting
        client went away (the seek is then cancelled). ``404 seek_gone`` for a seek that is
        no longer waiting (cancelled, or dead).

        The store is asked at the start (the seek kept alive for the whole wait), when the
        control channel says the seek was paired, every ``LOOK_SECONDS`` besides (a message
        lost with a pub/sub connection) and at the end: a thousand waiters cost the store a
        few hundred calls a second, not thousands (docs/performance.md, "Players")."""
        deadline = time.monotonic() + WAIT_SECONDS
        event = self._waiting.setdefault(seek_id, asyncio.Event())
        try:
            match = await self.seeks.match(seek_id)
            if match is None:
                alive = _now_ms() + int((WAIT_SECONDS + ALIVE_GRACE) * 1000)
                if not await self.seeks.keep_alive(seek_id, alive):
                    match = await self.seeks.match(seek_id)  # paired in between?
                    if match is None:
                        raise LobbyError(404, "seek_gone", "This seek is no longer waiting.")
            look = time.monotonic() + LOOK_SECONDS
            while match is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    match = await self.seeks.match(seek_id)
                    if match is None:
                        return None
                    break
                if await gone():
                    await self.seeks.cancel(seek_id)
                    return None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), min(left, 0.5))
                if event.is_set() or time.monotonic() >= look:
                    event.clear()
                    look = time.monotonic() + LOOK_SECONDS
                    match = await self.seeks.match(seek_id)
            return await self._seated(account, match)
        finally:
            self._waiting.pop(seek_id, None)

    async def cancel(self, seek_id: str) -> bool:
        return await self.seeks.cancel(seek_id)

    async def pair(self, pool: str) -> int:
        """Pair ``pool`` now; make the new pairs' rooms; tell every process. How many pairs."""
        pairs = await self.seeks.pair(pool, _now_ms())
        for low, _, _ in pairs:
            match = await self.seeks.match(low)
            if match is not None:
                await self._make(match)
        if pairs:
            await self.broadcast({"kind": "paired", "seeks": [s for p in pairs for s in p[:2]]})
        return len(pairs)

    async def pass_once(self) -> int:
        return sum([await self.pair(pool) for pool in await self.seeks.pools()])

    async def run(self) -> None:
        """A pass every ``PASS_SECONDS``, until cancelled."""
        while True:
            await asyncio.sleep(PASS_SECONDS)
            try:
                await self.pass_once()
            except Exception:
                log.exception("a pairing pass failed")

    def on_control(self, message: dict[str, Any]) -> None:
        if message.get("kind") == "paired":
            for seek_id in message.get("seeks", ()):
                event = self._waiting.get(seek_id)
                if event is not None:
                    event.set()

    async def _make(self, match: Match) -> None:
        """The match's room, made unless it is made already."""
        players = {}
        for seat, account_id in match.accounts.items():
            account = await self.accounts.get(account_id) if self.accounts else None
            if account is None:
                raise LobbyError(404, "player_not_found", "A paired player has no account.")
            players[seat] = account
        try:
            await self.lobby.open_paired(match.room, room_request(match.pool), players)
        except RoomExists:
            return
        await self.begin(match.room)

    async def _seated(self, account: Account, match: Match) -> Seated:
        """The account's seat of its match's room, once the room is made: by its pairer, or,
        after ``MADE_WAIT``, by this call (another waiter may be making it at the same time:
        it is made once, and both wait for its seats). ``StoreUnavailable`` if it is still
        not there after ``GIVE_UP``."""
        if match.accounts.get(match.seat) != account.id:
            raise LobbyError(403, "not_your_seek", "This seek is another player's.")
        began = time.monotonic()
        made = False
        while not await self.lobby.seats_full(match.room):
            waited = time.monotonic() - began
            if not made and waited > MADE_WAIT:  # its pairer died before making it
                await self._make(match)
                made = True
                continue
            if waited > GIVE_UP:
                raise StoreUnavailable(f"the paired room {match.room} is not made")
            await asyncio.sleep(0.05)
        return await self.lobby.reissue(match.room, match.seat)
