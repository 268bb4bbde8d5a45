"""The ratings' pure part (server/rater.py): a result's scores, and one game's Glicko-2 change
for both players, as the paper's formulas give it."""

from __future__ import annotations

import pytest

from olympus.ratings import glicko2
from olympus.server.rater import glicko, scores
from olympus.store import Standing


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
    after = glicko({"olympians": 0.0, "chthonians": 1.0})(before)
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
