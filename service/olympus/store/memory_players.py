"""The ``Players`` port in memory (ports.py): the Redis backend's contract (redis_players.py),
expiry by this process's monotonic clock. Every operation runs whole under one lock, as the
memory backend's do (memory.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable


class MemoryPlayers:
    """The ``Players`` port in memory."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._generations: dict[int, int] = {}
        self._expiring: dict[str, tuple[int, float]] = {}  # key -> (value, when it ends)
        self._online: dict[str, int] = {}  # name -> when seen (ms)

    def _live(self, key: str) -> tuple[int, float] | None:
        held = self._expiring.get(key)
        if held is not None and held[1] <= self.clock():
            del self._expiring[key]
            return None
        return held

    async def session(self, account_id: int, session_id: str) -> tuple[int, bool]:
        with self._lock:
            out = self._live(f"out:{account_id}:{session_id}") is not None
            return self._generations.get(account_id, 0), out

    async def end_session(self, account_id: int, session_id: str, ttl_seconds: int) -> None:
        with self._lock:
            self._expiring[f"out:{account_id}:{session_id}"] = (1, self.clock() + ttl_seconds)

    async def bump_generation(self, account_id: int) -> int:
        with self._lock:
            generation = self._generations[account_id] = self._generations.get(account_id, 0) + 1
            return generation

    async def note_online(self, name: str, at_ms: int) -> None:
        with self._lock:
            self._online[name] = at_ms

    async def online(self, since_ms: int, limit: int) -> tuple[int, list[str]]:
        with self._lock:
            self._online = {n: t for n, t in self._online.items() if t >= since_ms}
            latest = sorted(self._online, key=lambda n: (self._online[n], n), reverse=True)
            return len(latest), latest[:limit]

    async def attempt(self, key: str, window_seconds: int) -> tuple[int, int]:
        with self._lock:
            now = self.clock()
            count, ends = self._live(f"attempts:{key}") or (0, now + window_seconds)
            self._expiring[f"attempts:{key}"] = (count + 1, ends)
            return count + 1, max(0, round((ends - now) * 1000))
