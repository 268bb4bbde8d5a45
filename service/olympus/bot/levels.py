"""The computer's levels: the same search with different budgets.

Iterations make a level's strength independent of the machine (the arena plays with them
alone); the time cap keeps a slow box responsive (about 0.2 s, 1 s and 3 s per decision) and
the room's clock caps it further (``player.SeatBot``). Easy also plays less sharply: it draws
its move in proportion to the visits instead of taking the most visited.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .search import Budget


@dataclass(frozen=True, slots=True)
class Level:
    name: str
    budget: Budget
    noisy: bool = False

    def untimed(self) -> Level:
        """The level without its time cap: its iterations whatever they take."""
        return replace(self, budget=replace(self.budget, seconds=None))

    @property
    def label(self) -> str:
        return f"Computer ({self.name})"


LEVELS: dict[str, Level] = {
    "easy": Level("easy", Budget(iterations=30, seconds=0.2, depth=6), noisy=True),
    "normal": Level("normal", Budget(iterations=150, seconds=1.0, depth=8)),
    "hard": Level("hard", Budget(iterations=600, seconds=3.0, depth=10)),
}
