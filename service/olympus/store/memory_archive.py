"""The ``Archive`` port in memory (ports.py): one process's finished games, lost when it
stops; beside the memory store (``olympus serve --store memory``) and in the store's suite,
which holds it to the same contract as PostgreSQL's (tests/store/test_archive.py)."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from .archived import (
    ArchiveConflict,
    ArchivedGame,
    ArchivedHead,
    PlayerGame,
    chain_head,
    pack_log,
    unpack_log,
)
from .records import check_room_id

# The process's archives by prefix (``MemoryArchive.shared``), as memory.py's backends.
_SHARED: dict[str, MemoryArchive] = {}
_SHARED_LOCK = threading.Lock()


class MemoryArchive:
    """Games by room id; each log kept packed, as PostgreSQL keeps it."""

    def __init__(self) -> None:
        self._games: dict[str, tuple[ArchivedGame, bytes]] = {}
        self._analyses: dict[str, bytes] = {}
        self._lock = threading.Lock()

    @classmethod
    def shared(cls, prefix: str) -> MemoryArchive:
        with _SHARED_LOCK:
            archive = _SHARED.get(prefix)
            if archive is None:
                archive = _SHARED[prefix] = cls()
            return archive

    async def migrate(self) -> None:
        """Nothing: memory has no schema."""

    async def put(self, game: ArchivedGame) -> ArchivedHead:
        check_room_id(game.room_id)
        with self._lock:
            self._games.setdefault(game.room_id, (game, pack_log(game.events)))
        held = await self.head(game.room_id)
        offered = ArchivedHead(len(game.events), game.head)
        if held != offered:
            raise ArchiveConflict(game.room_id, held or ArchivedHead(0, ""), offered)
        return held

    async def head(self, room_id: str) -> ArchivedHead | None:
        check_room_id(room_id)
        kept = self._games.get(room_id)
        if kept is None:
            return None
        events = unpack_log(kept[1])
        return ArchivedHead(len(events), chain_head(events))

    async def get(self, room_id: str) -> ArchivedGame | None:
        check_room_id(room_id)
        kept = self._games.get(room_id)
        return None if kept is None else kept[0]

    async def analysis(self, room_id: str) -> bytes | None:
        check_room_id(room_id)
        return self._analyses.get(room_id)

    async def put_analysis(self, room_id: str, data: bytes) -> bytes | None:
        check_room_id(room_id)
        with self._lock:
            if room_id not in self._games:
                return None
            return self._analyses.setdefault(room_id, data)

    async def records(self, room_ids: Sequence[str]) -> dict[str, tuple[bytes, dict[str, str]]]:
        for room_id in room_ids:
            check_room_id(room_id)
        found = {r: self._games[r][0] for r in room_ids if r in self._games}
        return {r: (game.meta, dict(game.seats)) for r, game in found.items()}

    async def room_ids(self, *, offset: int = 0, limit: int | None = None) -> list[str]:
        ids = sorted(self._games)[offset:]
        return ids if limit is None else ids[:limit]

    async def games_of(
        self, name: str, *, before: tuple[int, str] | None = None, limit: int = 20
    ) -> list[PlayerGame]:
        key = name.lower()
        found = [
            PlayerGame(game.room_id, seat, game.summary)
            for game, _ in self._games.values()
            for seat, player in game.summary.players.items()
            if player and player.lower() == key
        ]
        found.sort(key=lambda g: (g.summary.ended_ms, g.room_id), reverse=True)
        if before is not None:
            found = [g for g in found if (g.summary.ended_ms, g.room_id) < before]
        return found[:limit]

    async def aclose(self) -> None:
        """Nothing to let go of."""
