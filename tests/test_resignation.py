"""Resignation and abort (rules/resignation.py): the service's ways to end a game early.

A resignation ends the game at once in any phase, for either side, the enemy winning; an
abort ends it with no result while not both sides have made their first move, and is refused
with ``abort_too_late`` after. Positions come from random games, replayed command by command,
so that every phase is met; what "made its first move" means is counted from the commands
themselves (an oracle apart from ``may_abort``).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from functools import cache

import pytest

from olympus.bot.player import RandomBot
from olympus.bots import play_random_game
from olympus.rules import (
    ABORTED,
    Faction,
    GameState,
    IllegalCommand,
    Options,
    Phase,
    create,
    decode,
    encode,
    evolve,
    execute,
    legal_actions,
    may_abort,
    may_resign,
    parse_command,
    random_legal_action,
    replay,
)
from olympus.rules import commands as cmd
from olympus.rules import events as ev
from olympus.rules.clocks import earliest_due
from olympus.rules.observation import observe_event, view
from olympus.rules.setup import random_placements

OLY, CHT = Faction.OLYMPIANS, Faction.CHTHONIANS
SIDES = (OLY, CHT)
GAMES = 10
# A side's turn action (R3, R10): what makes its first move.
TURN_ACTIONS = frozenset({"move", "liturgy", "pass", "thunderbolt", "recall"})


@cache
def positions() -> tuple[tuple[GameState, frozenset[Faction]], ...]:
    """Each position of ``GAMES`` random games (from before the first setup to the end), with
    the sides that have given a turn action before it."""
    found: list[tuple[GameState, frozenset[Faction]]] = []
    for seed in range(GAMES):
        rng = random.Random(seed + 31 * 10**6)
        options = Options(seed % 2 == 1, seed % 3 == 0, rng.randint(-5, 5))
        events, final, commands = play_random_game(rng, options, 400)
        state = replay(events[:1])
        moved: set[Faction] = set()
        for command in commands:
            found.append((state, frozenset(moved)))
            _, state = execute(state, command)
            if command.type in TURN_ACTIONS and command.side is not None:
                moved.add(command.side)
        assert state == final
        found.append((state, frozenset(moved)))
    return tuple(found)


def jsonable(value: object) -> object:
    """``value`` as it comes over the wire (tuples as lists, enums as strings)."""
    return json.loads(json.dumps(value))


def kind(state: GameState) -> str:
    """Where the game is, as the resignation tests cover it."""
    if state.pending:
        return "choice"
    if state.phase is Phase.TURN:
        return f"turn of {state.turn.value}"
    return state.phase.value


def playing() -> Iterator[GameState]:
    return (s for s, _ in positions() if s.phase is not Phase.OVER)


def test_the_random_games_meet_every_phase() -> None:
    """The positions below cover what they claim to (else the other tests prove little)."""
    kinds = {kind(s) for s in playing()}
    assert kinds == {"setup", "turn of olympians", "turn of chthonians", "combat", "choice"}
    assert any(s.phase is Phase.OVER for s, _ in positions())


@pytest.mark.parametrize("side", SIDES, ids=lambda f: f.value)
def test_a_side_resigns_in_any_phase_and_its_enemy_wins(side: Faction) -> None:
    seen: set[str] = set()
    for state in playing():
        if kind(state) in seen and state.version % 7:
            continue  # every phase, and a sample of the rest
        seen.add(kind(state))
        assert may_resign(state)
        events, after = execute(state, cmd.Resign(side=side))
        assert events == [ev.GameEnded(result=side.enemy.value, reason="resignation")]
        assert after.phase is Phase.OVER and after.result == side.enemy.value
        assert after.winner is side.enemy and after.pending == ()
        assert replay(events, state) == after
        assert legal_actions(after, side) == [] and legal_actions(after, side.enemy) == []
    assert len(seen) == 5


def test_abort_is_allowed_until_both_sides_made_their_first_move() -> None:
    allowed = too_late = 0
    for state, moved in positions():
        if state.phase is Phase.OVER:
            assert not may_abort(state)
            continue
        expected = len(moved) < 2
        assert may_abort(state) is expected, (kind(state), state.turn_number, moved)
        for side in SIDES:
            if expected:
                events, after = execute(state, cmd.Abort(side=side))
                assert events == [ev.GameEnded(result=ABORTED, reason="abort")]
                assert after.phase is Phase.OVER and after.result == ABORTED
                assert after.winner is None
                assert replay(events, state) == after
                allowed += 1
            else:
                with pytest.raises(IllegalCommand) as late:
                    execute(state, cmd.Abort(side=side))
                assert late.value.code == "abort_too_late" and late.value.sentence
                too_late += 1
    assert allowed and too_late


def test_abort_step_by_step_from_the_setup_to_the_third_turn() -> None:
    """The boundary, by hand: both setups, turn 1 (the Chthonians), turn 2 (the Olympians)
    until their action, then turn 3."""
    rng = random.Random(5)
    state = replay(create(Options()))
    assert may_abort(state)
    for side in SIDES:
        _, state = execute(
            state, cmd.SubmitSetup(side=side, placements=random_placements(rng, side))
        )
        assert may_abort(state)
    assert (state.phase, state.turn, state.turn_number) == (Phase.TURN, CHT, 1)
    _, state = execute(state, cmd.Liturgy(side=CHT))
    assert (state.turn, state.turn_number) == (OLY, 2) and may_abort(state)
    _, state = execute(state, cmd.Liturgy(side=OLY))
    assert state.turn_number == 3 and not may_abort(state)
    with pytest.raises(IllegalCommand) as late:
        execute(state, cmd.Abort(side=CHT))
    assert late.value.code == "abort_too_late"


def test_the_second_sides_first_action_ends_the_abort_even_in_its_combat() -> None:
    """A combat or a choice in turn 2 follows the Olympians' action: too late; in turn 1 the
    Olympians have not moved yet: still allowed."""
    cases = {(s.turn_number, kind(s)): may_abort(s) for s in playing() if s.turn_number in (1, 2)}
    for (turn, where), allowed in cases.items():
        if where in ("combat", "choice"):
            assert allowed is (turn == 1), (turn, where)
    assert any(k[1] in ("combat", "choice") for k in cases)


@pytest.mark.parametrize("command", [cmd.Resign, cmd.Abort], ids=["resign", "abort"])
def test_a_finished_game_refuses_both_with_game_over(command: type[cmd.Command]) -> None:
    state = replay(create(Options()))
    ends = [
        execute(state, cmd.Resign(side=OLY))[1],
        execute(state, cmd.Abort(side=CHT))[1],
        *(s for s, _ in positions() if s.phase is Phase.OVER),
    ]
    for over in ends:
        for side in SIDES:
            with pytest.raises(IllegalCommand) as refused:
                execute(over, command(side=side))
            assert refused.value.code == "game_over"


def test_a_command_without_a_side_is_refused() -> None:
    state = replay(create(Options()))
    for command in (cmd.Resign(), cmd.Abort()):
        with pytest.raises(IllegalCommand) as refused:
            execute(state, command)
        assert refused.value.code == "no_side"


def test_neither_is_ever_listed() -> None:
    rng = random.Random(3)
    for state in playing():
        for side in SIDES:
            assert all(a.type not in ("resign", "abort") for a in legal_actions(state, side))
            drawn = random_legal_action(state, side, rng)
            assert drawn is None or drawn.type not in ("resign", "abort")


def test_resigning_stops_the_clocks() -> None:
    rng = random.Random(2)
    state = replay(create(Options(move_seconds=60, commit_seconds=30)))
    for side in SIDES:
        placements = random_placements(rng, side)
        _, state = execute(state, cmd.SubmitSetup(side=side, placements=placements, at_ms=0))
    assert earliest_due(state) == 60_000
    events, after = execute(state, cmd.Resign(side=CHT, at_ms=1_000))
    assert [e.TYPE for e in events] == ["game_ended", "clock_set"]
    assert after.deadlines == {} and earliest_due(after) is None and after.result == "olympians"


def test_the_end_round_trips_and_shows_in_every_view() -> None:
    state = replay(create(Options()))
    for command in (cmd.Resign(side=OLY), cmd.Abort(side=OLY)):
        events, after = execute(state, command)
        assert [decode(encode(e)) for e in events] == events
        for seat in (OLY, CHT, None):
            assert view(after, seat)["result"] == after.result


def test_the_wire_form_is_the_type_alone() -> None:
    assert parse_command({"type": "resign", "side": "olympians"}) == cmd.Resign(side=OLY)
    assert parse_command({"type": "abort", "side": "chthonians"}) == cmd.Abort(side=CHT)
    with pytest.raises(ValueError):
        parse_command({"type": "resign", "side": "olympians", "winner": "olympians"})


@pytest.mark.parametrize("command", [cmd.Resign, cmd.Abort], ids=["resign", "abort"])
def test_the_computers_memory_folds_either_end(command: type[cmd.Command]) -> None:
    """The bots worker's seat memory (bot/belief.py) takes the end as its seat receives it."""
    rng = random.Random(8)
    state = replay(events := create(Options()))
    log = list(events)
    for side in SIDES:
        placements = random_placements(rng, side)
        new, state = execute(state, cmd.SubmitSetup(side=side, placements=placements))
        log += new
    new, final = execute(state, command(side=CHT))
    log += new
    for seat in SIDES:
        bot = RandomBot(seat, 1)
        bot.start(None)
        folded = GameState()
        for event in log:
            after = evolve(folded, event)
            seen = observe_event(event, seat, folded, after)
            if seen is not None:
                bot.observe(jsonable(seen))
            folded = after
        assert bot.belief is not None
        assert bot.belief.state.phase is Phase.OVER
        assert (bot.belief.state.result, bot.belief.state.winner) == (final.result, final.winner)
