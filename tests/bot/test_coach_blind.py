"""The coach is a seat's, not an oracle's (R7): the analysis of a seat's moves and its hints
are functions of what that seat was sent.

The two games of test_bot_blind.py differ only in what the Olympians cannot see (the
Chthonians' sealed setup and their sealed commitment in the first combat). The analysis of
the Olympians' commands and the hint for the Olympians at each of their decisions, the last
one right after the Chthonians' differing sealed commitment, are identical in both. A coach
that searches the true state instead (the negative control) gives itself away.
"""

from __future__ import annotations

from typing import Any

import pytest
from test_bot_blind import BOT, COMMIT_A, COMMIT_B, LEVEL, SETUP_A, SETUP_B, Recorder, play

from olympus.bot import SeatBot
from olympus.bot.analysis import Walk, analyse, hint
from olympus.bot.belief import Belief
from olympus.bot.search import Budget
from olympus.rules import GameState, legal_actions, replay
from olympus.rules import events as ev

BUDGET = Budget(iterations=16, seconds=None, depth=4)
SEED = "room-seed"


class OracleWalk(Walk):
    """The negative control: each decision searched in the true state (the whole game)."""

    def belief(self, seat: Any) -> Belief:
        belief = self.beliefs[seat]
        truth: GameState = self.state
        belief.sample = lambda rng: truth  # type: ignore[method-assign]
        return belief


def games() -> tuple[list[ev.Event], list[ev.Event]]:
    """The two games' logs, with the first bot seed whose game reaches the sealed commitment."""
    for seed in range(1, 40):
        first: list[ev.Event] = []
        bot = Recorder(SeatBot(BOT, LEVEL, seed))
        play(SETUP_A, COMMIT_A, bot, first)
        if bot.committed_after_a_sealed_commitment:
            second: list[ev.Event] = []
            other = Recorder(SeatBot(BOT, LEVEL, seed))
            play(SETUP_B, COMMIT_B, other, second)
            assert other.committed_after_a_sealed_commitment
            return first, second
    raise AssertionError("no game reached a sealed commitment")


@pytest.fixture(scope="module")
def logs() -> tuple[list[ev.Event], list[ev.Event]]:
    return games()


def seat_moves(log: list[ev.Event], walk: type[Walk]) -> list[dict[str, Any]]:
    moves = analyse(log, SEED, BUDGET, walk())["moves"]
    return [m for m in moves if m["seat"] == BOT.value]


def decision_points(log: list[ev.Event]) -> list[int]:
    """The lengths of the log's prefixes after which the bot's seat has something to do."""
    points = []
    for length in range(1, len(log) + 1):
        if legal_actions(replay(log[:length]), BOT) and (
            length == len(log) or legal_actions(replay(log[: length + 1]), BOT) == []
        ):
            points.append(length)
    return points


def assert_blind_coach(walk: type[Walk], logs: tuple[list[ev.Event], list[ev.Event]]) -> None:
    first, second = logs
    assert len(first) == len(second)
    a, b = seat_moves(first, walk), seat_moves(second, walk)
    assert len(a) >= 3, "the game gives the coach something to judge"
    for x, y in zip(a, b, strict=True):
        assert x == y, f"analysis differs: {x!r} != {y!r}"
    points = decision_points(first)
    assert points[-1] == len(first), "the last hint is the sealed commitment after the enemy's"
    for length in points:
        mine = hint(first[:length], BOT, SEED, BUDGET, walk())
        theirs = hint(second[:length], BOT, SEED, BUDGET, walk())
        assert mine is not None
        assert mine == theirs, f"hint differs after {length} events: {mine!r} != {theirs!r}"


def test_the_analysis_and_hints_of_a_seat_do_not_depend_on_what_it_cannot_see(logs) -> None:
    assert_blind_coach(Walk, logs)


def test_the_check_fails_for_a_coach_that_searches_the_true_state(logs) -> None:
    with pytest.raises(AssertionError, match="differs"):
        assert_blind_coach(OracleWalk, logs)
