"""Hermes' further steps (R3, D1), priced by the rules: ``further_steps`` lists the next steps
of a walk of any length, each at what ``execute`` charges for the whole command.

- Per number of further steps: every next step offered after a walk of that many steps is
  listed at the side's Honor and Energy changes in the events of executing it, and the steps
  offered are exactly the neighbours ``decide`` accepts as the next one.
- The paths of one further step ``legal_actions`` lists are ``further_steps``' answers.
- Refusals: the codes ``decide`` gives the same command.
- Hidden information (R7): states the Olympians cannot tell apart (the same ``view``) give
  them the same answer.
"""

from __future__ import annotations

import random
from dataclasses import replace
from functools import cache

import pytest

from olympus.bots import play_random_game
from olympus.rules import (
    BOARD,
    BY_NAME,
    Faction,
    GameState,
    IllegalCommand,
    LegalAction,
    Options,
    Phase,
    execute,
    further_steps,
    legal_actions,
)
from olympus.rules import commands as cmd
from olympus.rules import events as ev
from olympus.rules.observation import view
from olympus.scenario import build

OLYMPIANS = Faction.OLYMPIANS
LEADERS = ("Hades", "Persephone")
MAX_STEPS = 6


def charged(state: GameState, command: cmd.Command) -> tuple[int, int]:
    """The side's (Honor change, Energy spent) in the events of executing ``command``."""
    events, _ = execute(state, command)
    side = command.side
    honor = sum(e.delta for e in events if isinstance(e, ev.HonorChanged) and e.faction is side)
    energy = -sum(e.delta for e in events if isinstance(e, ev.EnergyChanged) and e.faction is side)
    return honor, energy


def with_steps(command: cmd.Move, steps: list[int]) -> cmd.Move:
    return command.model_copy(update={"steps": steps})


# Positions made by hand, Hermes in the Olympians' turn: Styx crossings both ways, backward
# and forward steps, enemies (hidden and revealed) and comrades to meet, a short Energy stock,
# Open Combat.
GIVEN = [
    {"units": {"Hermes": 19, "Zeus": 35, "Hades": 1, "Cronus": 10, "Nyx": 24}, "turn": "olympians"},
    {
        "units": {"Hermes": 17, "Zeus": 35, "Ares": 10, "Hades": 0, "Charon": 23, "Hecate": 2},
        "turn": "olympians",
        "energy": {"olympians": 3},
        "revealed": ["Charon", "Hermes"],
    },
    {
        "units": {"Hermes": 9, "Zeus": 13, "Hades": 29, "Cerberus": 3, "Moirae": 15},
        "turn": "olympians",
        "options": {"open_combat": True},
        "honor": {"olympians": 3},
    },
]


def walk_starts(state: GameState) -> list[LegalAction]:
    """Hermes' listed moves without further steps in ``state`` (none unless it is the
    Olympians' turn to move)."""
    return [
        a
        for a in legal_actions(state, OLYMPIANS)
        if isinstance(a.command, cmd.Move) and a.command.units == ["Hermes"] and not a.command.steps
    ]


@cache
def positions() -> tuple[GameState, ...]:
    """The hand-made positions, and those of a few random games where Hermes may walk."""
    states = [build(given, f"walk {n}")[0] for n, given in enumerate(GIVEN)]

    def keep(before: GameState, *_: object) -> None:
        turn = before.phase is Phase.TURN and before.turn is OLYMPIANS and not before.pending
        if turn and "Hermes" in before.positions:
            states.append(before)

    for seed in range(4):
        rng = random.Random(seed + 31)
        play_random_game(rng, Options(seed % 2 == 1, False, 0), 200, observe=keep)
    return tuple(states[:: max(1, len(states) // 40)] if len(states) > 60 else states)


def walks(length: int) -> list[tuple[GameState, cmd.Move]]:
    """Walks of ``length`` further steps, drawn at random through ``further_steps``' own
    answers from each position's walking starts (at most three per position)."""
    found: list[tuple[GameState, cmd.Move]] = []
    rng = random.Random(length)
    for state in positions():
        starts = [a.command for a in walk_starts(state)]
        rng.shuffle(starts)
        drawn = 0
        for command in starts:
            assert isinstance(command, cmd.Move)
            walk = command
            for _ in range(length):
                offered = further_steps(state, walk)
                if not offered:
                    break
                chosen = rng.choice(offered).command
                assert isinstance(chosen, cmd.Move)
                walk = chosen
            if len(walk.steps) == length:
                found.append((state, walk))
                drawn += 1
                if drawn == 3:
                    break
    return found


@pytest.mark.parametrize("length", range(MAX_STEPS))
def test_each_next_step_costs_what_execute_charges(length: int) -> None:
    """After a walk of ``length`` further steps, each next step offered is the walk with that
    step added, listed at what executing it charges (Honor, and Energy: the Styx), and the
    steps offered are exactly the neighbours ``decide`` accepts next."""
    checked = crossings = backward = 0
    for state, walk in walks(length):
        offered = further_steps(state, walk)
        accepted = set()
        last = walk.steps[-1] if walk.steps else walk.to
        for step in sorted(BOARD.neighbours(last)):
            try:
                execute(state, with_steps(walk, [*walk.steps, step]))
            except IllegalCommand:
                continue
            accepted.add(step)
        assert {a.command.steps[-1] for a in offered} == accepted, (walk, state)
        before = charged(state, walk) if length else None
        for action in offered:
            command = action.command
            assert isinstance(command, cmd.Move)
            assert command.steps[:-1] == walk.steps and command.units == walk.units
            assert (action.honor, action.energy) == charged(state, command), command
            if before is not None:
                step_energy = action.energy - before[1]
                crossings += step_energy > 0
                backward += action.honor - before[0] < 0
            checked += 1
    assert checked >= 20, checked
    if length:
        assert crossings and backward, (crossings, backward)


def test_the_listed_paths_of_one_step_are_further_steps_answers() -> None:
    """``legal_actions``' paths of one further step are, move by move, what ``further_steps``
    answers for the move without steps: the same commands at the same costs."""
    compared = 0
    for state in positions():
        listed = [a for a in legal_actions(state, OLYMPIANS) if a.wire.get("steps")]
        for start in walk_starts(state):
            command = start.command
            assert isinstance(command, cmd.Move)
            ours = [a for a in listed if {**a.wire, "steps": []} == start.wire]
            answered = further_steps(state, command)
            assert [(a.wire, a.honor, a.energy) for a in ours] == [
                (a.wire, a.honor, a.energy) for a in answered
            ]
            compared += len(answered)
    assert compared > 50


def test_a_walk_that_cannot_go_on_has_no_next_step() -> None:
    """No next step after an attack, after a step onto a comrade, or where each neighbour is
    refused; the refusals are ``decide``'s own codes."""
    state, _ = build(
        {
            "units": {"Hermes": 19, "Ares": 11, "Zeus": 35, "Hades": 1, "Cronus": 18},
            "turn": "olympians",
        },
        "stops",
    )

    def move(**fields: object) -> cmd.Move:
        return cmd.Move(side=OLYMPIANS, units=["Hermes"], **fields)

    assert further_steps(state, move(to=18)) == []  # he attacks Cronus
    assert further_steps(state, move(to=12, steps=[11])) == []  # he meets Ares
    assert [a.command.steps for a in further_steps(state, move(to=12))] == [
        [5],
        [6],
        [11],
        [13],
        [19],
        [20],
    ]
    refusals = {
        "no_extra_steps": cmd.Move(side=OLYMPIANS, units=["Ares"], to=10),
        "not_adjacent": move(to=12, steps=[27]),
        "steps_after_stop": move(to=18, steps=[17]),
        "not_your_unit": cmd.Move(side=OLYMPIANS, units=["Cronus"], to=17),
    }
    for code, command in refusals.items():
        with pytest.raises(IllegalCommand) as refused:
            further_steps(state, command)
        assert refused.value.code == code
        with pytest.raises(IllegalCommand) as decided:
            execute(state, with_steps(command, [*command.steps, 5]))
        assert decided.value.code == code
    theirs = replace(state, turn=Faction.CHTHONIANS)
    with pytest.raises(IllegalCommand) as refused:
        further_steps(theirs, move(to=12))
    assert refused.value.code == "not_your_turn"


def test_a_stop_before_the_last_step_is_refused_even_if_the_path_comes_back() -> None:
    """A walk that meets an enemy stops there: steps after it are refused, also when the
    path returns to that very region as its last step."""
    state, _ = build(
        {"units": {"Hermes": 19, "Zeus": 35, "Hades": 1, "Cronus": 18}, "turn": "olympians"},
        "back",
    )
    command = cmd.Move(side=OLYMPIANS, units=["Hermes"], to=12, steps=[11, 18, 11, 18])
    with pytest.raises(IllegalCommand) as refused:
        execute(state, command)
    assert refused.value.code == "steps_after_stop"


def indistinguishable(state: GameState, rng: random.Random) -> GameState:
    """A state the Olympians cannot tell from ``state``: the hidden Chthonian units on the
    board swapped among themselves and with Chthonians not picked (who stands under which
    token), and another secret seed. The leaders stay who they are: Hades is always picked,
    and a position with Persephone elsewhere may be one the game has ended in (R11)."""
    hidden = [
        u
        for u in state.positions
        if BY_NAME[u].faction is Faction.CHTHONIANS and u not in state.revealed and u not in LEADERS
    ]
    spare = [
        c.name
        for c in BY_NAME.values()
        if c.faction is Faction.CHTHONIANS
        and c.name not in state.picked
        and c.name not in state.eliminated
        and c.name not in LEADERS
    ]
    names = hidden + spare
    rng.shuffle(names)
    renamed = dict(zip(hidden, names[: len(hidden)], strict=True))
    positions = {renamed.get(u, u): r for u, r in state.positions.items()}
    tokens = {renamed.get(u, u): t for u, t in state.tokens.items()}
    picked = frozenset(renamed.get(u, u) for u in state.picked)
    return replace(
        state,
        positions=positions,
        tokens=tokens,
        picked=picked,
        setups={},
        token_seed=rng.randrange(2**62),
    )


def test_the_answer_depends_only_on_what_the_side_knows() -> None:
    """States with the same Olympian ``view`` (hidden enemies renamed, another secret seed)
    give the same next steps at the same costs, after walks of every length."""
    rng = random.Random(5)
    compared = differed = 0
    for length in range(4):
        for state, walk in walks(length):
            other = indistinguishable(state, rng)
            assert view(other, OLYMPIANS) == view(state, OLYMPIANS)
            differed += other.positions != state.positions
            ours = [(a.wire, a.honor, a.energy) for a in further_steps(state, walk)]
            assert [(a.wire, a.honor, a.energy) for a in further_steps(other, walk)] == ours
            compared += 1
    assert compared > 40 and differed > 20, (compared, differed)
