"""The bot's memory (``olympus.bot.belief``): what it folds from its seat's events agrees with
the seat's own view of the true game, and the truth is always one of the worlds it may draw."""

from __future__ import annotations

import random

import pytest

from olympus.arena import deliver
from olympus.bot.belief import Belief
from olympus.bots import play_random_game
from olympus.rules import Faction, GameState, Options
from olympus.rules.evolve import evolve
from olympus.rules.observation import view

VARIANTS = [
    Options(),
    Options(open_combat=True),
    Options(random_setup=True),
    Options(chthonian_honor=-3, move_seconds=60, commit_seconds=30),
]


def comparable(data: dict, seat: Faction) -> dict:
    """A seat's view without what a sampled world leaves out or cannot know: the clocks,
    the enemy's sealed commitment (the search treats it as simultaneous)."""
    data = {**data, "deadlines": None, "options": {**data["options"]}}
    if "combat" in data:
        combat = dict(data["combat"])
        combat["commitments"] = {**combat["commitments"], seat.enemy.value: None}
        combat["committed"] = {**combat["committed"], seat.enemy.value: None}
        data["combat"] = combat
    return data


def check(belief: Belief, truth: GameState, rng: random.Random) -> None:
    seat = belief.seat
    for token, names in belief.candidates.items():
        true_name = next(u for u, t in truth.tokens.items() if t == token)
        assert true_name in names, (token, true_name, names)
    alive = {u for u in truth.positions}
    assert belief.known <= alive
    expected = comparable(view(truth, seat), seat)
    for _ in range(3):
        world = belief.sample(rng)
        assert comparable(view(world, seat), seat) == expected


@pytest.mark.parametrize("options", VARIANTS, ids=["plain", "open", "random_setup", "clocks"])
def test_the_belief_follows_the_seats_view_and_holds_the_truth(options: Options) -> None:
    for game in range(6):
        rng = random.Random(game)
        events, _, _ = play_random_game(random.Random(100 + game), options)
        state = evolve(GameState(), events[0])
        beliefs = {seat: Belief.from_view(seat, view(state, seat)) for seat in Faction}
        for event in events[1:]:
            state = deliver(state, [event], beliefs)
            if state.phase.value in ("turn", "combat"):
                for belief in beliefs.values():
                    check(belief, state, rng)


def test_a_belief_from_a_view_of_a_game_under_way_samples_worlds_of_that_view() -> None:
    rng = random.Random(5)
    for game in range(4):
        events, _, _ = play_random_game(random.Random(200 + game), VARIANTS[game])
        state = GameState()
        for event in events:
            state = evolve(state, event)
            if state.phase.value in ("turn", "combat"):
                for seat in Faction:
                    check(Belief.from_view(seat, view(state, seat)), state, rng)
