"""A token bucket per connection: bursts are fine, a sustained flood is refused, then closed."""

from __future__ import annotations

import time
from collections.abc import Callable


class TokenBucket:
    """``rate`` frames per second on average, up to ``burst`` at once.

    ``clock`` is injectable so that the refill can be tested without racing the machine's
    speed (a test that sleeps cannot know how long it really slept).
    """

    __slots__ = ("burst", "clock", "rate", "stamp", "tokens")

    def __init__(
        self, rate: float, burst: int, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.clock = clock
        self.stamp = clock()

    def take(self) -> bool:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False
