"""The ratings' pure part (server/rater.py): a result's scores, and one game's Glicko-2 change
for both players, as the paper's formulas give it, after each player's time without rated
games has widened the deviation."""

from __future__ import annotations

import pytest

from olympus.ratings import glicko2
from olympus.server.rater import DAY_MS, IDLE_DAYS_PER_PERIOD, glicko, idle_periods, scores
from olympus.store import Account, Standing

NOW = 1_800_000_000_000  # when the game is rated (ms)


def account(standing: Standing, rated_ms: int | None) -> Account:
    return Account(1, "Ann", "ann", "h", 0, standing, rated_games=3, rated_ms=rated_ms)


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ("olympians", {"olympians": 1.0, "chthonians": 0.0}),
        ("chthonians", {"olympians": 0.0, "chthonians": 1.0}),  # a resignation, a forfeit (R12)
        ("draw", {"olympians": 0.5, "chthonians": 0.5}),
        ("aborted", None),  # no result: nothing to rate
    ],
)
def test_a_results_scores(result: str, expected: dict[str, float] | None) -> None:
    assert scores(result) == expected


def test_one_game_rates_both_players_against_each_others_standing_before() -> None:
    before = {
        "olympians": Standing(1600.0, 80.0, 0.06),
        "chthonians": Standing(1450.0, 200.0, 0.05),
    }
    held = {seat: account(s, NOW) for seat, s in before.items()}  # both just played
    after = glicko({"olympians": 0.0, "chthonians": 1.0}, NOW)(held)
    for seat, other, score in (("olympians", "chthonians", 0.0), ("chthonians", "olympians", 1.0)):
        own, theirs = before[seat], before[other]
        expected = glicko2.rate(
            glicko2.Rating(own.rating, own.deviation, own.volatility),
            [
                glicko2.Outcome(
                    glicko2.Rating(theirs.rating, theirs.deviation, theirs.volatility), score
                )
            ],
        )
        assert after[seat] == Standing(expected.r, expected.rd, expected.sigma)
    assert after["olympians"].rating < 1600 and after["chthonians"].rating > 1450
    # the upset moves the less certain rating further
    assert 1600 - after["olympians"].rating < after["chthonians"].rating - 1450


def test_time_without_rated_games_widens_the_deviation_before_the_game() -> None:
    """A year away: the returning player's deviation widens (one period per
    ``IDLE_DAYS_PER_PERIOD`` days, the paper's step 6) before the game, so a win moves the
    rating further than the same win after no break; the opponent meets the widened rating.
    Never rated, or rated later than now (clocks out of order): no widening."""
    year = 365 * DAY_MS
    assert idle_periods(NOW - year, NOW) == pytest.approx(365 / IDLE_DAYS_PER_PERIOD)
    assert idle_periods(None, NOW) == 0 and idle_periods(NOW + 5_000, NOW) == 0
    me, them = Standing(1600.0, 60.0, 0.06), Standing(1600.0, 60.0, 0.06)
    scored = {"olympians": 1.0, "chthonians": 0.0}
    fresh = glicko(scored, NOW)({"olympians": account(me, NOW), "chthonians": account(them, NOW)})
    back = glicko(scored, NOW)(
        {"olympians": account(me, NOW - year), "chthonians": account(them, NOW)}
    )
    widened = glicko2.idle(glicko2.Rating(1600.0, 60.0, 0.06), 365 / IDLE_DAYS_PER_PERIOD)
    assert widened.rd > 90
    expected = glicko2.rate(widened, [glicko2.Outcome(glicko2.Rating(1600.0, 60.0, 0.06), 1.0)])
    assert back["olympians"] == Standing(expected.r, expected.rd, expected.sigma)
    assert back["olympians"].rating - 1600 > fresh["olympians"].rating - 1600 > 0
    # the opponent's loss is judged against the less certain rating: it costs less
    assert 1600 - fresh["chthonians"].rating > 1600 - back["chthonians"].rating > 0
    new = Standing(1500.0, 350.0, 0.06)
    first = glicko(scored, NOW)({"olympians": account(new, None), "chthonians": account(new, None)})
    plain = glicko2.rate(glicko2.Rating(1500, 350, 0.06), [glicko2.Outcome(glicko2.Rating(), 1.0)])
    assert first["olympians"] == Standing(plain.r, plain.rd, plain.sigma)
