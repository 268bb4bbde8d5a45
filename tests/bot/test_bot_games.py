"""Bots finish legal games against each other, from random setups, in every variant; the
search is deterministic given its seed; at a sealed commitment it plays a mixed strategy."""

from __future__ import annotations

import pytest
from test_belief import VARIANTS

from olympus.arena import play_match
from olympus.bot import GreedyBot, SeatBot
from olympus.bot.levels import Level
from olympus.bot.search import Budget
from olympus.rules import Faction, Options

TINY = Level("tiny", Budget(iterations=6, seconds=None, depth=3))
OLY, CHT = Faction.OLYMPIANS, Faction.CHTHONIANS


@pytest.mark.parametrize("options", VARIANTS, ids=["plain", "open", "random_setup", "clocks"])
@pytest.mark.parametrize("searcher", [OLY, CHT])
def test_bots_finish_legal_games_in_every_variant(options: Options, searcher: Faction) -> None:
    players = {searcher: SeatBot(searcher, TINY, 1), searcher.enemy: GreedyBot(searcher.enemy, 2)}
    result = play_match(players, options, seed=7, max_commands=2000)
    assert result.result in ("olympians", "chthonians", "draw")
    assert result.seats[searcher].decisions > 0


def test_two_searching_bots_play_to_the_end() -> None:
    players = {OLY: SeatBot(OLY, TINY, 3), CHT: SeatBot(CHT, TINY, 4)}
    assert play_match(players, Options(), seed=11, max_commands=2000).result != "unfinished"


def commands_of(seed: int) -> list[dict]:
    played: list[dict] = []

    class Recording(SeatBot):
        def act(self, legal, now_ms=None):  # type: ignore[no-untyped-def]
            wire = super().act(legal, now_ms)
            played.append(wire)
            return wire

    players = {OLY: Recording(OLY, TINY, seed), CHT: GreedyBot(CHT, 5)}
    play_match(players, Options(), seed=13, max_commands=300)
    return played


def test_the_search_is_deterministic_given_its_seed() -> None:
    assert commands_of(1) == commands_of(1)
    assert commands_of(1) != commands_of(2)


def test_setups_vary() -> None:
    setups = set()
    for seed in range(5):
        bot = SeatBot(CHT, TINY, seed)
        wire = bot.act({"actions": [], "setup": {"count": 9}})
        setups.add(tuple(sorted(wire["placements"].items())))
    assert len(setups) == 5


def test_a_bot_spends_at_most_half_the_time_its_clock_leaves() -> None:
    """R12: with 4 s left on its deadline, a hard bot (3 s cap) thinks at most 2 s."""
    bot = SeatBot(OLY, "hard", 1)
    bot.start(None)
    assert bot.belief is not None
    bot.belief.state = bot.belief.state.evolved(
        {"deadlines": {"olympians": {"kind": "move", "key": "k", "since": 0, "due": 10_000}}}
    )
    assert bot.budget(now_ms=6_000).seconds == 2.0
    assert bot.budget(now_ms=None).seconds == 3.0
    assert bot.budget(now_ms=9_990).seconds == 0.05
