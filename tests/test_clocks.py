"""R12: deadlines are events, missed ones fall back, a long absence forfeits."""

import random

import pytest

from olympus import bots
from olympus.rules import (
    Faction,
    IllegalCommand,
    Options,
    Phase,
    create,
    execute,
    reads_time,
    replay,
)
from olympus.rules import commands as c
from olympus.rules.clocks import deadlines, earliest_due
from olympus.rules.setup import random_placements

OLY, CHT = Faction.OLYMPIANS, Faction.CHTHONIANS


def started(options: Options, at: int = 0):
    state = replay(create(options))
    rng = random.Random(7)
    for side in (OLY, CHT):
        _, state = execute(
            state, c.SubmitSetup(side=side, placements=random_placements(rng, side), at_ms=at)
        )
    return state


def test_deadline_set_when_turn_starts_and_missed_turn_is_a_liturgy():
    state = started(Options(move_seconds=60, commit_seconds=30))
    assert deadlines(state) == [(CHT, "move", 60_000)]
    with pytest.raises(IllegalCommand) as early:
        execute(state, c.Timeout(side=CHT, at_ms=59_999))
    assert early.value.code == "not_expired"
    with pytest.raises(IllegalCommand) as nobody:
        execute(state, c.Timeout(side=OLY, at_ms=99_999))
    assert nobody.value.code == "no_deadline"
    events, after = execute(state, c.Timeout(side=CHT, at_ms=60_000))
    kinds = [e.TYPE for e in events]
    assert kinds[:2] == ["deadline_missed", "liturgy_performed"]
    assert after.energy[CHT] == state.energy[CHT] + 6 and after.honor[CHT] == state.honor[CHT] - 2
    assert after.turn is OLY and deadlines(after) == [(OLY, "move", 120_000)]
    assert after.absent_since == {"chthonians": 0}
    # the deadline fired once: the same timeout again has nothing to fire
    with pytest.raises(IllegalCommand):
        execute(after, c.Timeout(side=CHT, at_ms=60_000))
    assert replay(events, state) == after


def test_acting_clears_absence_and_long_absence_forfeits():
    state = started(Options(move_seconds=10, forfeit_seconds=25))
    _, state = execute(state, c.Timeout(side=CHT, at_ms=10_000))  # CHT absent since 0
    _, state = execute(state, c.Liturgy(side=OLY, at_ms=11_000))
    assert deadlines(state) == [(CHT, "move", 21_000)]
    _, missed_twice = execute(state, c.Timeout(side=CHT, at_ms=21_000))
    assert missed_twice.phase is Phase.TURN and missed_twice.absent_since == {"chthonians": 0}
    # had CHT acted instead, its absence would be forgotten
    _, present = execute(state, c.Liturgy(side=CHT, at_ms=20_000))
    assert present.absent_since == {}
    _, state = execute(missed_twice, c.Liturgy(side=OLY, at_ms=22_000))
    events, state = execute(state, c.Timeout(side=CHT, at_ms=32_000))  # absent 32 s ≥ 25 s
    assert state.phase is Phase.OVER and state.result == "olympians"
    assert any(e.TYPE == "game_ended" and e.reason == "forfeit" for e in events)


def test_no_clock_no_deadline():
    state = started(Options())
    assert deadlines(state) == []


def test_a_missed_setup_is_drawn_once_the_opponent_is_in():
    state = replay(create(Options(move_seconds=30)))
    placements = random_placements(random.Random(1), OLY)
    _, state = execute(state, c.SubmitSetup(side=OLY, placements=placements, at_ms=5_000))
    assert deadlines(state) == [(CHT, "setup", 35_000)]
    _, drawn = execute(state, c.Timeout(side=CHT, at_ms=35_000, seed=9))
    _, again = execute(state, c.Timeout(side=CHT, at_ms=35_000, seed=9))
    assert drawn == again and drawn.phase is Phase.TURN  # the seed decides the draw
    expected = random_placements(random.Random(9), CHT)
    assert {u: drawn.positions[u] for u in expected} == expected
    assert drawn.absent_since == {"chthonians": 5_000}
    assert deadlines(drawn) == [(CHT, "move", 65_000)]


def played(rng, options, token_seed, commands=300):
    """Each position of a random game and the command played there (its setup, then a bot's
    choices), with that command stamped at ``1_000 * n`` ms, which is what is played on."""
    state = replay(create(options, token_seed=token_seed))
    setup = list(bots.setup_commands(rng, options))
    for n in range(commands):
        if setup:
            command = setup.pop(0)
        elif (action := bots.choose(rng, state)) is not None:
            command = action.command
        else:
            return
        stamped = command.model_copy(update={"at_ms": 1_000 * n})
        yield state, command, stamped
        state = execute(state, stamped)[1]


@pytest.mark.parametrize("clocked", [False, True])
def test_only_what_reads_the_time_is_stamped(clocked):
    """``reads_time``: the service stamps a command with the time (``at_ms``) only where the
    rules read it. Wherever it says they do not, deciding with the time gives the same events
    and state as without: every command of random games in every variant, clocked or not."""
    rng = random.Random(3 + clocked)
    seconds = 60 if clocked else None
    for game in range(8):
        options = Options(game % 2 == 1, game % 4 >= 2, rng.randint(-5, 5), seconds, seconds)
        for state, command, stamped in played(rng, options, game):
            assert reads_time(state, command) is clocked
            if not clocked:
                assert execute(state, stamped) == execute(state, command)
    assert reads_time(started(Options()), c.Timeout(side=OLY)), "a timeout reads it in any game"


def test_the_earliest_deadline_is_the_first_of_those_running():
    """R12: ``earliest_due`` (when the service fires the next missed turn) is the earliest of
    the running ``deadlines``, at every position of clocked random games; none without clocks,
    none once the game is over."""
    rng = random.Random(5)
    seen = 0
    for game in range(6):
        seconds = 60 if game % 3 else None
        options = Options(game % 2 == 1, False, 0, seconds, seconds)
        for state, _, _ in played(rng, options, game):
            running = [due for _, _, due in deadlines(state)]
            if state.phase is Phase.OVER or not running:
                assert earliest_due(state) is None
            else:
                assert earliest_due(state) == min(running)
                seen += 1
    assert seen > 100
