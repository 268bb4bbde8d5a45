"""Glicko-2 (olympus/ratings/glicko2.py) against the worked example of Glickman's paper, and
the properties a rating must have."""

from __future__ import annotations

import pytest

from olympus.ratings import DEFAULT, Outcome, Rating, idle, rate


def test_glickmans_worked_example() -> None:
    """The paper's player (1500, RD 200, σ 0.06, τ 0.5) beats a 1400 (RD 30), loses to a 1550
    (RD 100) and to a 1700 (RD 300): 1464.06, RD 151.52, σ 0.05999."""
    player = Rating(1500, 200, 0.06)
    games = [
        Outcome(Rating(1400, 30), 1),
        Outcome(Rating(1550, 100), 0),
        Outcome(Rating(1700, 300), 0),
    ]
    after = rate(player, games, tau=0.5)
    assert after.r == pytest.approx(1464.06, abs=0.01)
    assert after.rd == pytest.approx(151.52, abs=0.01)
    assert after.sigma == pytest.approx(0.05999, abs=0.00001)


def test_a_period_without_games_widens_the_deviation_only() -> None:
    player = Rating(1620, 80, 0.06)
    after = rate(player, [])
    assert after.r == player.r and after.sigma == player.sigma
    assert after.rd == pytest.approx((80**2 + (0.06 * 173.7178) ** 2) ** 0.5)


def test_time_without_games_widens_as_periods_without_games_do() -> None:
    """``idle``: one period is the paper's step 6 alone; fractions add up; no time changes
    nothing; the deviation never passes a new player's; negative time is refused."""
    player = Rating(1620, 80, 0.06)
    one, step6 = idle(player, 1), rate(player, [])
    assert (one.r, one.sigma) == (step6.r, step6.sigma) and one.rd == pytest.approx(step6.rd)
    for rd in (60.0, 80.0, 123.4):  # exactly, whatever the deviation
        assert idle(Rating(1620, rd, 0.06), 0) == Rating(1620, rd, 0.06)
    assert idle(idle(player, 0.25), 2.75).rd == pytest.approx(idle(player, 3).rd)
    assert idle(player, 0.5).rd < idle(player, 1).rd
    assert idle(player, 1e6) == Rating(1620, DEFAULT.rd, 0.06)
    with pytest.raises(ValueError, match="not negative"):
        idle(player, -1)


def test_a_win_raises_a_loss_lowers_and_a_draw_between_equals_keeps() -> None:
    me, them = Rating(1500, 120), Rating(1500, 120)
    assert rate(me, [Outcome(them, 1)]).r > 1500 > rate(me, [Outcome(them, 0)]).r
    assert rate(me, [Outcome(them, 0.5)]).r == pytest.approx(1500)
    # A game narrows the deviation; an upset moves the rating more than the expected result.
    assert rate(DEFAULT, [Outcome(them, 1)]).rd < DEFAULT.rd
    strong = Rating(1900, 60)
    upset = rate(me, [Outcome(strong, 1)]).r - 1500
    expected = rate(Rating(1900, 120), [Outcome(me, 1)]).r - 1900
    assert upset > expected > 0


@pytest.mark.parametrize("score", [-0.1, 1.5])
def test_a_score_is_a_result(score: float) -> None:
    with pytest.raises(ValueError, match="score"):
        rate(DEFAULT, [Outcome(DEFAULT, score)])


def test_the_computers_levels_are_rated_from_the_arenas_table() -> None:
    """The kept table is the arena's report anchored at the common-sense yardstick, and the
    levels are in order."""
    import json
    from pathlib import Path

    from olympus.ratings.levels import anchored, level_ratings

    report = json.loads((Path(__file__).parents[1] / "docs" / "arena-yardsticks.json").read_text())
    assert level_ratings() == anchored(report["elo"])
    ratings = level_ratings()
    assert ratings["easy"] < ratings["normal"] < ratings["hard"]
    assert anchored({"sensible": 100.0, "easy": 0.0, "normal": 200.0, "hard": 300.0}) == {
        "easy": 1400,
        "normal": 1600,
        "hard": 1700,
    }
