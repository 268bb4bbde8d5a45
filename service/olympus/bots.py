"""A random bot that plays only what ``legal_actions`` offers.

It exists for three users: the property tests (thousands of random games must never break an
invariant), the rules benchmark (realistic positions to time) and the service's load benchmark
(a "simple bot from legal_actions"). It trusts ``legal_actions`` completely, so any legal action
that ``execute`` refuses is reported as an ``EngineBug``: the two must never disagree.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping

from .rules import (
    Event,
    Faction,
    GameState,
    IllegalCommand,
    LegalAction,
    Options,
    Phase,
    create,
    execute,
    legal_actions,
    random_placements,
    replay,
)
from .rules import commands as cmd
from .rules.characters import FACTIONS, LEADER

# Relative weight of each command type (its ``type`` tag) when several are legal. Liturgy and
# Pass are rare so that random games move units, fight and end (a Liturgy every few turns would
# feed Energy forever); a type absent here weighs 1.
TYPE_WEIGHTS: Mapping[str, float] = {"move": 20.0, "liturgy": 1.0, "pass": 1.0}
# Within a type, an action weighs HONOR_BIAS ** (its Honor change): a backward move (−2) is 9×
# rarer than a forward one. Without it random games are retreats that end in lost Honor long
# before the armies meet, and combat (R8, R9) would hardly ever be exercised.
HONOR_BIAS = 3.0

DEFAULT_OPTIONS = Options()

# Called after every accepted command: the state before it, the action, its events, the state after.
Observer = Callable[[GameState, LegalAction, list[Event], GameState], None]


class EngineBug(AssertionError):
    """``legal_actions`` offered a command that ``execute`` refused, or a game got stuck."""


def random_setup(rng: random.Random, faction: Faction) -> cmd.SubmitSetup:
    """A legal sealed setup for ``faction`` (R2).

    Drawn like the Random Setup variant's, which keeps the leader next to its base; a player's
    own setup may put it anywhere in the realm, so half the time it swaps places with another
    unit, and games where the leader starts far forward get played too.
    """
    placements = random_placements(rng, faction)
    if rng.random() < 0.5:
        leader, other = LEADER[faction], rng.choice(sorted(set(placements) - {LEADER[faction]}))
        placements[leader], placements[other] = placements[other], placements[leader]
    return cmd.SubmitSetup(side=faction, placements=placements)


def setup_commands(rng: random.Random, options: Options) -> list[cmd.Command]:
    """The commands that take a new game out of its setup, in a random submission order."""
    if options.random_setup:
        return [cmd.DrawRandomSetup(seed=rng.randrange(2**63))]
    factions = list(FACTIONS)
    rng.shuffle(factions)
    return [random_setup(rng, f) for f in factions]


def pick_action(rng: random.Random, actions: list[LegalAction]) -> LegalAction:
    """A random action: first a command type by ``TYPE_WEIGHTS``, then within it by Honor.

    Choosing the type first keeps the odds independent of how many variants a type has (a
    position may offer a hundred moves and commitments but only one Liturgy). The type is read
    from ``type``: asking every action for its ``command`` (or a move for its ``wire``) would
    build them all.
    """
    by_type: dict[str, list[LegalAction]] = {}
    for action in actions:
        by_type.setdefault(action.type, []).append(action)
    kinds = list(by_type)
    weights = [TYPE_WEIGHTS.get(k, 1.0) for k in kinds]
    candidates = by_type[rng.choices(kinds, weights)[0]]
    return rng.choices(candidates, [HONOR_BIAS**a.honor for a in candidates])[0]


def choose(rng: random.Random, state: GameState) -> LegalAction | None:
    """The bot's next action for whichever seat may act (at random when both may, in combat)."""
    seats = [(f, acts) for f in FACTIONS if (acts := legal_actions(state, f))]
    if not seats:
        return None
    _, actions = rng.choice(seats)
    return pick_action(rng, actions)


def apply(state: GameState, action: LegalAction) -> tuple[list[Event], GameState]:
    """``execute`` a legal action; a refusal is an engine bug, never a bot mistake."""
    try:
        return execute(state, action.command)
    except IllegalCommand as error:
        raise EngineBug(
            f"legal action refused at version {state.version}: {action.command!r} -> {error!r}"
        ) from error


def play_random_game(
    rng: random.Random,
    options: Options = DEFAULT_OPTIONS,
    max_commands: int = 2000,
    observe: Observer | None = None,
) -> tuple[list[Event], GameState, list[cmd.Command]]:
    """Play one game of random legal commands: (events, final state, commands in order).

    Stops when the game is over or after ``max_commands`` commands (setup included); a game
    that is not over but offers no seat any action is stuck, which is an engine bug.
    """
    events: list[Event] = list(create(options, token_seed=rng.randrange(2**63)))
    state = replay(events)
    commands: list[cmd.Command] = []
    for command in setup_commands(rng, options):
        new, state = execute(state, command)
        events += new
        commands.append(command)
    while state.phase is not Phase.OVER and len(commands) < max_commands:
        action = choose(rng, state)
        if action is None:
            raise EngineBug(f"no seat has a legal action at version {state.version}: {state!r}")
        new, after = apply(state, action)
        if observe is not None:
            observe(state, action, new, after)
        events += new
        commands.append(action.command)
        state = after
    return events, state, commands
