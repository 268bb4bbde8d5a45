"""The ``SeekPool`` port in memory (ports.py): redis_seeks.py's contract and its script's rule
(seeks.py), each operation whole under one lock."""

from __future__ import annotations

import threading

from .seeks import Match, Seek, first_side, range_of, room_of


class MemorySeeks:
    """The ``SeekPool`` port in memory."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seeks: dict[str, Seek] = {}
        self._by_account: dict[int, str] = {}
        self._matches: dict[str, Match] = {}

    def _drop(self, seek_id: str) -> None:
        seek = self._seeks.pop(seek_id, None)
        if seek is not None and self._by_account.get(seek.account) == seek_id:
            del self._by_account[seek.account]

    async def add(self, seek: Seek) -> None:
        with self._lock:
            old = self._by_account.get(seek.account)
            if old is not None:
                self._drop(old)
            self._seeks[seek.id] = seek
            self._by_account[seek.account] = seek.id

    async def keep_alive(self, seek_id: str, alive_ms: int) -> bool:
        with self._lock:
            seek = self._seeks.get(seek_id)
            if seek is None:
                return False
            self._seeks[seek_id] = Seek(
                seek.id, seek.account, seek.pool, seek.rating, seek.since_ms, max(1, alive_ms)
            )
            return True

    async def cancel(self, seek_id: str) -> bool:
        with self._lock:
            held = seek_id in self._seeks
            self._drop(seek_id)
            return held

    async def match(self, seek_id: str) -> Match | None:
        with self._lock:
            return self._matches.get(seek_id)

    async def pair(self, pool: str, now_ms: int) -> list[tuple[str, str, str]]:
        with self._lock:
            waiting = sorted(
                (s for s in self._seeks.values() if s.pool == pool), key=lambda s: (s.rating, s.id)
            )
            live = []
            for seek in waiting:
                if seek.alive_ms < now_ms:
                    self._drop(seek.id)
                else:
                    live.append(seek)
            paired, i = [], 0
            while i < len(live) - 1:
                a, b = live[i], live[i + 1]
                accepted = min(range_of(now_ms - a.since_ms), range_of(now_ms - b.since_ms))
                if a.account != b.account and b.rating - a.rating <= accepted:
                    room = room_of(a.id, b.id)
                    low = first_side(room)
                    high = "chthonians" if low == "olympians" else "olympians"
                    accounts = {low: a.account, high: b.account}
                    self._matches[a.id] = Match(room, low, pool, accounts)
                    self._matches[b.id] = Match(room, high, pool, accounts)
                    self._drop(a.id)
                    self._drop(b.id)
                    paired.append((a.id, b.id, room))
                    i += 2
                else:
                    i += 1
            return paired

    async def pools(self) -> list[str]:
        with self._lock:
            return sorted({s.pool for s in self._seeks.values()})

    async def waiting(self, pool: str) -> int:
        with self._lock:
            return sum(s.pool == pool for s in self._seeks.values())
