"""The arena's yardsticks outside the search's family play legal games to the end, in every
variant, from their seat's knowledge only; the sensible player beats the safe one."""

from __future__ import annotations

import pytest
from test_belief import VARIANTS

from olympus.arena import play_match
from olympus.bot import make_player
from olympus.rules import Faction, Options

OLY, CHT = Faction.OLYMPIANS, Faction.CHTHONIANS


@pytest.mark.parametrize("options", VARIANTS, ids=["plain", "open", "random_setup", "clocks"])
@pytest.mark.parametrize(("olympians", "chthonians"), [("sensible", "safe"), ("safe", "sensible")])
def test_yardsticks_finish_legal_games(options: Options, olympians: str, chthonians: str) -> None:
    players = {OLY: make_player(olympians, OLY, 1), CHT: make_player(chthonians, CHT, 2)}
    result = play_match(players, options, seed=3, max_commands=2000)
    assert result.result in ("olympians", "chthonians", "draw")


def test_the_sensible_player_beats_the_safe_one_on_both_sides() -> None:
    wins = 0
    for seed in range(10):
        for seat in (OLY, CHT):
            players = {
                seat: make_player("sensible", seat, seed),
                seat.enemy: make_player("safe", seat.enemy, seed),
            }
            wins += (
                play_match(players, Options(), seed=seed, max_commands=2000).result == seat.value
            )
    assert wins >= 14, wins
