"""The matrix game of a sealed commitment: regret matching finds the equilibria of small games
whose answers are known."""

from __future__ import annotations

import pytest

from olympus.bot.sealed import solve


def test_matching_pennies_is_played_half_and_half() -> None:
    rows, cols = solve([[1.0, 0.0], [0.0, 1.0]], rounds=2000)
    assert rows == pytest.approx([0.5, 0.5], abs=0.05)
    assert cols == pytest.approx([0.5, 0.5], abs=0.05)


def test_a_dominated_commitment_is_left_out() -> None:
    """The second row is worse than the first whatever the column: the row player never plays
    it, and the column player answers the first row."""
    rows, cols = solve([[0.8, 0.6], [0.7, 0.5]], rounds=500)
    assert rows[0] > 0.95
    assert cols[1] > 0.95


def test_a_retreat_against_a_chase_mixes() -> None:
    """Rows: Standard, Retreat; columns: Standard, Chase. Retreat escapes a Standard but is
    caught by a Chase; a Chase is weaker against a Standard: both sides mix."""
    rows, cols = solve([[0.3, 0.6], [0.7, 0.2]], rounds=3000)
    assert 0.2 < rows[1] < 0.8
    assert 0.2 < cols[1] < 0.8
