"""The computer as a seat: it starts from its seat's ``view``, folds its seat's events and
answers each ``legal`` message with a command, exactly as a client does over the websocket.

``SeatBot`` searches (ISMCTS, ``search.py``) at a level; ``GreedyBot`` plays the one-ply best
by the evaluation in one sampled world; ``RandomBot`` is today's random bot (``olympus.bots``)
behind the same three calls. Each is deterministic given its seed and its inputs: the seed of
a decision is the bot's seed and the number of decisions made before it. A time cap that
stops a search before its iterations are done is the one thing that depends on the machine.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from olympus.bots import pick_action
from olympus.rules import (
    Faction,
    GameState,
    IllegalCommand,
    execute,
    legal_actions,
    parse_command,
    random_placements,
)
from olympus.rules.characters import LEADER

from .belief import Belief
from .evaluation import value
from .levels import LEVELS, Level
from .policy import commitment, removal
from .sealed import decide
from .search import Budget, wire_key

Message = dict[str, Any]
MIN_SECONDS = 0.05
SECOND_LEADER = "Persephone"


class Player(Protocol):
    """What plays a seat: its first view, then its events and ``legal`` messages."""

    def start(self, view: Message | None) -> None: ...

    def observe(self, event: Message) -> None: ...

    def act(self, legal: Message, now_ms: int | None = None) -> Message: ...


@dataclass(frozen=True, slots=True)
class Offer:
    """One entry of a ``legal`` message, with the ``type`` and ``honor`` the random bot reads."""

    command: Message
    honor: int
    energy: int

    @property
    def type(self) -> str:
        return str(self.command["type"])


def offers(legal: Message) -> list[Offer]:
    return [Offer(a["command"], a["honor"], a["energy"]) for a in legal["actions"]]


def setup_command(rng: random.Random, seat: Faction) -> Message:
    """A sealed setup (R2): 9 of the 12, the leader in or next to its base, the others spread
    over the realm at random, so that no two games start alike. The Chthonians keep Persephone:
    she is their second leader (R10), and without her Hades is the one unit the Olympians need
    to eliminate (R11)."""
    placements = random_placements(rng, seat)
    if seat is Faction.CHTHONIANS and SECOND_LEADER not in placements:
        left = rng.choice(sorted(u for u in placements if u != LEADER[seat]))
        placements[SECOND_LEADER] = placements.pop(left)
    return {"type": "submit_setup", "placements": placements}


class _Seat:
    """What every bot keeps: its seat, its seed, its memory and how many decisions it made."""

    def __init__(self, seat: Faction, seed: int) -> None:
        self.seat = seat
        self.seed = seed
        self.decisions = 0
        self.belief: Belief | None = None

    def start(self, view: Message | None) -> None:
        """Begin from the seat's ``view``, or (None) before the game's first event."""
        self.belief = (
            Belief(self.seat, GameState()) if view is None else Belief.from_view(self.seat, view)
        )

    def observe(self, event: Message) -> None:
        assert self.belief is not None, "start() first"
        self.belief.observe(event)

    def _rng(self) -> random.Random:
        self.decisions += 1
        return random.Random(f"{self.seed}:{self.decisions}")

    def act(self, legal: Message, now_ms: int | None = None) -> Message:
        rng = self._rng()
        if legal.get("setup"):
            return setup_command(rng, self.seat)
        choices = offers(legal)
        if len(choices) == 1:
            return choices[0].command
        return self.choose(choices, rng, now_ms)

    def choose(self, choices: list[Offer], rng: random.Random, now_ms: int | None) -> Message:
        raise NotImplementedError


class RandomBot(_Seat):
    """Today's random bot (``olympus.bots.pick_action``) as a seat."""

    def choose(self, choices: list[Offer], rng: random.Random, now_ms: int | None) -> Message:
        return pick_action(rng, choices).command  # type: ignore[arg-type]


class GreedyBot(_Seat):
    """One ply: each offered action played in one sampled world and the result evaluated;
    commitments and removals as the playout policy makes them."""

    def choose(self, choices: list[Offer], rng: random.Random, now_ms: int | None) -> Message:
        assert self.belief is not None
        state = self.belief.sample(rng)
        kind = choices[0].type
        if kind in ("commit", "remove_unit"):
            listed = legal_actions(state, self.seat)
            if listed:
                if kind == "remove_unit":
                    return removal(listed).wire
                return commitment(state, self.seat, listed, rng).wire
        best, best_value = choices[0].command, -1.0
        for choice in choices:
            try:
                _, after = execute(state, _command(self.seat, choice.command))
            except IllegalCommand:
                continue
            score = value(after, self.seat) + 1e-6 * rng.random()
            if score > best_value:
                best, best_value = choice.command, score
        return best


class SeatBot(_Seat):
    """The search bot of a level."""

    def __init__(
        self,
        seat: Faction,
        level: Level | str,
        seed: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(seat, seed)
        self.level = LEVELS[level] if isinstance(level, str) else level
        self.clock = clock
        self.iterations = 0  # run so far, for the arena's decisions per second

    def budget(self, now_ms: int | None) -> Budget:
        """The level's budget, its time cap within half the time the room's clock leaves."""
        budget = self.level.budget
        assert self.belief is not None
        deadline = self.belief.state.deadlines.get(self.seat.value)
        if now_ms is None or deadline is None or budget.seconds is None:
            return budget
        left = (deadline["due"] - now_ms) / 1000 / 2
        return Budget(budget.iterations, max(MIN_SECONDS, min(budget.seconds, left)), budget.depth)

    def choose(self, choices: list[Offer], rng: random.Random, now_ms: int | None) -> Message:
        assert self.belief is not None
        state = self.belief.state
        offered = {wire_key(state, self.seat, self.seat, c.command): c.command for c in choices}
        result = decide(self.belief, offered, self.budget(now_ms), rng, self.clock)
        self.iterations += result.iterations
        choice = result.choice
        if self.level.noisy and any(result.visits.values()):
            keys = sorted(result.visits, key=repr)
            choice = rng.choices(keys, [result.visits[k] for k in keys])[0]
        return offered[choice]


def _command(seat: Faction, wire: Message) -> Any:
    return parse_command({**wire, "side": seat.value})
