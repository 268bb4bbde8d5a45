"""``legal_actions(state, seat)``: every legal command in a position, with its Honor and Energy
cost.

In a turn (R3): every move a side may make (R3–R6, with the powers' forms of it and Hermes'
walks of one further step), the Liturgy, passing, and the leaders' powers (R10); in a combat,
the commitments a side may make now (R8); while a choice is pending, its answers (the unit to
remove, R8 and R10; the retreat region, R9; staying). Each action comes with what it costs at
once, judged as ``decide`` judges the command (tests/test_legal.py checks the moves' costs
against executing them). The client warns before a loss of Honor from these figures (as
Yucata does) and bots pick from them. Setup is the one exception: its placements are too many
to list (``setup_options`` says what they are made of, ``random_placements`` draws one).

Each action is a ``LegalAction``, carried and keyed as ``listing.py`` encodes it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from itertools import combinations
from typing import Final

from mypy_extensions import mypyc_attr

from . import combat
from . import commands as cmd
from . import events as ev
from .board import BOARD
from .characters import CHARACTERS, Faction
from .decide import (
    LITURGY_ENERGY,
    begin_steps,
    check_turn,
    liturgy_honor,
    make_move,
    may_pass,
    next_step,
    takes_extra_steps,
    walk,
)
from .decision import Decision
from .errors import IllegalCommand
from .honor import penalty
from .listing import (
    LegalAction,
    ListedActions,
    Listing,
    MoveFields,
    held_commitments,
    hold_commitments,
    listed_walk,
    units_key,
)
from .listing import listed_key as listed_key  # (the service imports these two from here)
from .listing import listed_move as listed_move
from .movement import MovePlan, Movers, Refusal, revealed
from .powers import POWERS, Action, MoveContext, Power, powers_of
from .state import GameState, Maneuver, Phase, StepKind

# Powers contribute their own "instead of moving" actions (thunderbolt, recall: R10).
POWER_ACTIONS: Final[list[Callable[[GameState, Faction], list[LegalAction]]]] = []

# Destinations from each region, in the order they are listed: of a step, of a flight.
_STEPS: Final = tuple(tuple(sorted(BOARD.neighbours(r))) for r in range(len(BOARD.regions)))
_FLIGHTS: Final = tuple(
    tuple(to for to in range(len(BOARD.regions)) if to != r) for r in range(len(BOARD.regions))
)

Form = tuple[tuple[str, ...], bool]  # a move's (units revealed for their power, use_power)
_PLAIN: Final[tuple[Form, ...]] = (((), False),)  # the only form of most moves
_USE: Final[tuple[Form, ...]] = (((), False), ((), True))  # without, with the movers' power

_COMMIT_GIVEN: Final[tuple[str, ...]] = ("maneuver", "energy", "reveal")  # a commitment's fields


# --- moves (R3–R6) ---------------------------------------------------------------------------


def _revealers(state: GameState, side: Faction) -> list[tuple[str, Power]]:
    """Hidden units that might be revealed for a move (R3): the same for every candidate move."""
    hidden = [u for u in state.units_of(side) if u not in state.revealed]
    return [(p.unit, p) for p in powers_of(hidden, "may_reveal_for_move")]


def _groups(state: GameState, side: Faction) -> list[tuple[tuple[str, ...], bool]]:
    """Every (units, fly) group that may try to move (R3), in the order its moves are listed:
    by region, every combination of the units there by size, then each flier alone, flying."""
    positions = state.positions
    origins: dict[int, list[str]] = {}
    for unit in state.units_of(side):
        region = positions[unit]
        here = origins.get(region)
        if here is None:
            origins[region] = [unit]
        else:
            here.append(unit)
    groups: list[tuple[tuple[str, ...], bool]] = []
    for units in origins.values():
        for unit in units:  # one alone: no combinations object to make
            groups.append(((unit,), False))
        for size in range(2, len(units) + 1):
            for group in combinations(units, size):
                groups.append((group, False))
        for unit in units:
            if unit in _FLIERS:
                groups.append(((unit,), True))
    return groups


_FLIERS: Final = frozenset(c.name for c in CHARACTERS if c.flier)


@mypyc_attr(acyclic=True, free_list_len=1)  # one per group (Movers: why)
class _Group:
    """What listing a group's moves asks of the group alone, once for all its destinations."""

    __slots__ = ("chargers", "fly", "group_key", "movers", "users", "walks")

    def __init__(self, state: GameState, side: Faction, units: tuple[str, ...], fly: bool) -> None:
        # a group of ``_groups``: own units on the board, R1-ordered, together (no check needed)
        self.movers = Movers(state, side, units, state.positions[units[0]])
        self.group_key = units_key(units)  # its units' part of its moves' keys (listing.py)
        self.fly = fly
        # the movers' optional powers (use_power); Hermes alone, walking: paths of further steps
        powers = self.movers.powers
        self.users = powers.uses_power_on_move
        # the movers whose power changes their side's Honor or Energy as they move (listed)
        self.chargers = powers_of(units, "move_charges")
        self.walks = not fly and len(units) == 1 and bool(powers.takes_extra_steps)

    @property
    def destinations(self) -> tuple[int, ...]:
        return _destinations(self.movers.origin, self.fly)


def _destinations(origin: int, fly: bool) -> tuple[int, ...]:
    """Where a group from ``origin`` may try to go: each neighbour, or by flight everywhere."""
    return _FLIGHTS[origin] if fly else _STEPS[origin]


def _moves(listing: Listing, state: GameState, side: Faction) -> None:
    revealers = _revealers(state, side)
    for units, fly in _groups(state, side):
        group = _Group(state, side, units, fly)
        for to in group.destinations:
            _destination_moves(listing, state, group, to, revealers)


def _destination_moves(
    listing: Listing,
    state: GameState,
    group: _Group,
    to: int,
    revealers: list[tuple[str, Power]],
    outcomes: bool = True,
) -> None:
    """Add the legal moves of ``group`` to ``to`` in every form, each judged as ``decide``
    judges it (``Movers.verdict``): with or without revealing a unit for its power, with or
    without the movers' optional power; and Hermes' paths of one further step. With
    ``outcomes``, a move whose meeting eliminates units at once carries it (``_meeting``);
    a playout's draw has no use for it."""
    movers, fly = group.movers, group.fly
    move = movers.move(to, fly)
    forms = _forms(state, move, revealers, group.users) if revealers or group.users else _PLAIN
    for reveal, use_power in forms:
        variant = move
        if reveal or use_power:
            variant = movers.move(to, fly, revealed(reveal), use_power)
        plan = movers.verdict(variant, reveal)
        if isinstance(plan, Refusal):
            continue
        honor, energy = plan.honor, plan.energy
        for power in group.chargers:  # what the movers' powers charge, as they charge it
            power_honor, power_energy = power.move_charges(state, variant)
            honor, energy = honor + power_honor, energy - power_energy
        meets = outcomes and state.count_in(to, variant.faction.enemy) > 0
        outcome = _meeting(state, plan) if meets else None
        if outcome is None:
            listing.move(variant, group.group_key, reveal, (), honor, energy)
        else:
            action = listed_move(variant, group.group_key, reveal, (), honor, energy)
            action.outcome = outcome
            listing.extend([action])
        if group.walks and not state.occupied(to):
            _extra_steps(listing, state, plan, group.group_key, reveal)


def _meeting(state: GameState, plan: MovePlan) -> tuple[tuple[str, ...], str | None] | None:
    """What meeting the enemy at a move's destination does at once (R8: Cronus meeting Zeus,
    Demeter meeting Persephone, a sneak attack on a lone Olympian), played by ``make_move``:
    the units it eliminates and the game's result if it ends it. None when it eliminates
    nobody at once, when no power there acts on a meeting, or when an enemy unit there is
    hidden: what a meeting does depends on who is met, which the side may not know (R7)."""
    move = plan.move
    enemies = state.units_in(move.destination, move.faction.enemy)
    if any(u not in state.revealed for u in enemies):
        return None
    if not powers_of((*move.units, *enemies), "on_meeting"):
        return None
    d = Decision(state)
    make_move(d, plan)
    eliminated = tuple(e.unit for e in d.events if isinstance(e, ev.UnitEliminated))
    if not eliminated and not d.over:
        return None
    return eliminated, (d.state.result if d.over else None)


def _forms(
    state: GameState,
    move: MoveContext,
    revealers: list[tuple[str, Power]],
    users: tuple[Power, ...],
) -> tuple[Form, ...]:
    """The (reveal, use_power) forms of ``move`` worth judging, in the order they are listed:
    with or without each hidden unit whose power may be revealed for it (none first), each
    without and then with the movers' optional power if they have one to use here. Most
    candidates have one form, or two: their tuples are made once (``_PLAIN``, ``_USE``)."""
    use = False
    for user in users:
        if user.uses_power_on_move(state, move):
            use = True
            break
    forms: list[Form] | None = None  # (none made for most candidates)
    for unit, power in revealers:
        if power.may_reveal_for_move(state, move):
            if forms is None:
                forms = list(_USE if use else _PLAIN)
            forms.append(((unit,), False))
            if use:
                forms.append(((unit,), True))
    if forms is None:
        return _USE if use else _PLAIN
    return tuple(forms)


def _extra_steps(
    listing: Listing,
    state: GameState,
    plan: MovePlan,
    group_key: int,
    reveal: tuple[str, ...],
) -> None:
    """Hermes' paths of one further step (R3, D1) after the first step ``plan`` to an empty
    region, as ``further_steps`` finds them: the first step made once by ``decide``'s own
    ``make_move`` and ``begin_steps``, each further step judged and priced by ``_next_steps``.
    Longer paths are legal too, not listed: ``further_steps`` answers for them."""
    if not takes_extra_steps(state, plan.move):
        return
    units = list(plan.move.units)
    d = Decision(state)
    if make_move(d, plan):
        return  # he stopped (the game is over): no further step
    begin_steps(d, units)
    for step, honor, energy in _next_steps(d, units, plan):
        listing.move(plan.move, group_key, reveal, (step,), honor, energy)


def _next_steps(d: Decision, units: list[str], plan: MovePlan) -> list[tuple[int, int, int]]:
    """The next steps of a walk made in ``d`` up to ``plan``, its last step (``decide.walk``,
    or its first step and ``begin_steps``): (region, Honor, Energy) of each legal one, by
    region, with what the whole walk then costs its side: the Honor and Energy changes of the
    events made (all of them: whatever their reason), and the step's own, judged by
    ``decide``'s ``next_step`` and ``Movers.verdict`` as ``decide`` judges it and not made.
    What ``make_move`` would charge for it is its plan's Honor (R4) and Styx Energy (R5); the
    rest of making it (a meeting, the end of the turn) charges this side nothing at once.
    Empty where the walk stopped (he met a comrade). ``tests/test_legal.py`` checks the
    figures against the events of executing each path."""
    side = plan.move.faction
    honor = sum(e.delta for e in d.events if isinstance(e, ev.HonorChanged) and e.faction is side)
    energy = -sum(
        e.delta for e in d.events if isinstance(e, ev.EnergyChanged) and e.faction is side
    )
    try:
        walker = next_step(d, units, plan)
    except IllegalCommand:
        return []  # he stopped
    steps: list[tuple[int, int, int]] = []
    for step in _STEPS[plan.move.destination]:
        further = walker.verdict(walker.move(step))
        if isinstance(further, Refusal):
            continue
        steps.append((step, honor + further.honor, energy + further.energy))
    return steps


def further_steps(state: GameState, command: cmd.Move) -> list[LegalAction]:
    """Hermes' next steps after ``command``, a walk so far (its move and its ``steps``, R3,
    D1): each legal next step as ``command`` with that step added, at what the whole command
    then costs its side at once (``LegalAction.honor`` and ``energy``, as ``legal_actions``
    lists the paths of one further step: what ``execute`` charges for it), by region. Empty
    where the walk cannot go on: it ended in a meeting, a comrade or the game's end, or no
    neighbour may be entered. Raises ``IllegalCommand`` as ``decide`` refuses ``command``
    where the turn is not ``command.side``'s (``decide.check_turn``) or for the walk
    (``decide.walk``: ``no_extra_steps`` for a move whose movers take no further steps).

    The walk is made by ``decide``'s own ``walk`` (``make_move`` per step) and the next
    steps judged by ``_next_steps``, as the listing's paths of one further step are: one
    judgment and one charge of each rule. The answer is made of what the side knows (R7):
    its own units, positions, revealed units and Energy, the number of enemy units in each
    region (their tokens), the board, the Honor and the options: nothing in it depends on
    who a hidden enemy unit is, or on the secret seed (the re-hiding of the origin draws
    tokens from it, and charges nothing). ``tests/test_legal.py`` checks that states a side
    cannot tell apart give it the same answer."""
    side = check_turn(state, command.side)
    d = Decision(state)
    plan = walk(d, side, command, going_on=True)
    if plan is None:
        return []  # he met the enemy, or the game ended
    units = list(command.units)
    actions: list[LegalAction] = []
    for step, honor, energy in _next_steps(d, units, plan):
        fields: MoveFields = (
            tuple(units),
            command.to,
            command.fly,
            tuple(command.reveal),
            command.use_power,
            (*command.steps, step),
        )
        actions.append(listed_walk(side, fields, honor, energy))
    return actions


# --- commitments (R8) ------------------------------------------------------------------------


def _commitments(state: GameState, side: Faction) -> list[LegalAction]:
    """Every commitment ``side`` may make now (R8): each allowed maneuver with each amount of
    Energy up to its limit, revealing nobody or one unit that may be revealed with it
    (Aphrodite), each with its Honor cost (D4). Empty when it may not commit now. The same
    objects for positions made of the same (``held_commitments``)."""
    try:
        combat.check_turn_to_commit(state, side)
    except IllegalCommand:
        return []
    limit = combat.energy_limit(state, side)
    reveals = tuple(
        (u,)
        for u in state.units_of(side)
        if u not in state.revealed and u in POWERS and POWERS[u].may_reveal_in_commit(state, side)
    )
    maneuvers = tuple(sorted(combat.allowed_maneuvers(state, side)))
    prices = combat.commitment_prices(state, side)
    made_of = (side, maneuvers, limit, reveals, prices)
    listed = held_commitments(made_of)
    if listed is None:
        commitments = _list_commitments(side, maneuvers, limit, ((), *reveals), prices)
        listed = hold_commitments(made_of, tuple(commitments))
    return list(listed)


def _list_commitments(
    side: Faction,
    maneuvers: tuple[Maneuver, ...],
    limit: int,
    reveals: tuple[tuple[str, ...], ...],
    prices: combat.CommitmentPrices,
) -> Iterator[LegalAction]:
    for maneuver in maneuvers:
        name = maneuver.value
        for energy in range(limit + 1):
            honor = -combat.commitment_price(prices, maneuver, energy)
            for reveal in reveals:
                wire = {
                    "type": "commit",
                    "maneuver": name,
                    "energy": energy,
                    "reveal": list(reveal),
                }
                yield LegalAction(cmd.Commit, side, honor, energy, wire, _COMMIT_GIVEN)


# --- choices and the turn's other actions ----------------------------------------------------


def _choices(state: GameState, side: Faction) -> list[LegalAction]:
    """The answers to the pending choice, if it is ``side``'s: the unit to remove (R8; a
    thunderbolt's victim, R10), or a retreat region (R9, with its Honor cost) and, where the
    step allows it, staying."""
    step = state.pending[0]
    if step.faction is not side:
        return []
    if step.kind in (StepKind.REMOVE, StepKind.STRUCK):
        return [
            LegalAction(cmd.RemoveUnit, side, 0, 0, {"type": "remove_unit", "unit": u}, ("unit",))
            for u in combat.removal_candidates(state, step)
        ]
    units = combat.combatants(state, side)
    points = penalty(
        state, Action(side, tuple(units), "retreat"), "retreat", combat.RETREAT_HONOR
    )
    actions = [
        LegalAction(cmd.Retreat, side, -points, 0, {"type": "retreat", "region": r}, ("region",))
        for r in combat.retreat_regions(state, side)
    ]
    if step.kind is not StepKind.RETREAT:
        actions.append(LegalAction(cmd.Stay, side, 0, 0, {"type": "stay"}))
    return actions


def _instead_of_moving(state: GameState, side: Faction) -> list[LegalAction]:
    """A turn's actions other than moves: the Liturgy (``decide.liturgy_honor``), passing
    (R3), the leaders' powers (R10)."""
    points = liturgy_honor(state, side)
    actions = [LegalAction(cmd.Liturgy, side, -points, -LITURGY_ENERGY, {"type": "liturgy"})]
    if may_pass(state, side):
        actions.append(LegalAction(cmd.Pass, side, 0, 0, {"type": "pass"}))
    for contribute in POWER_ACTIONS:
        actions.extend(contribute(state, side))
    return actions


# --- what a side may do ----------------------------------------------------------------------


def _acts_in_turn(state: GameState, side: Faction) -> bool:
    """Whether ``side`` chooses a turn's action now (a move, the Liturgy…)."""
    return not state.pending and state.phase is Phase.TURN and side is state.turn


def lists_nothing(state: GameState, side: Faction) -> bool:
    """Whether ``legal_actions(state, side)`` is empty, known without listing anything: the
    game is over or in its setup, a choice or the turn is the other side's: ``legal_actions``
    asks it first. False in a combat: a side that has committed is only known by trying."""
    if state.phase in (Phase.OVER, Phase.SETUP):
        return True
    if state.pending:
        return state.pending[0].faction is not side
    return state.phase is not Phase.COMBAT and not _acts_in_turn(state, side)


def legal_actions(state: GameState, side: Faction) -> list[LegalAction]:
    """Every command ``side`` may give in ``state``, with its costs, in a fixed order: a
    pending choice's answers; or a combat's commitments; or the turn's moves (by origin
    region, group and destination), then the Liturgy, passing and the leaders' powers. Empty
    when ``side`` has nothing to do now (``waiting_reason`` says why) or in the setup. Each is
    a command ``decide`` accepts in ``state``."""
    listing = ListedActions()
    list_legal(listing, state, side)
    return listing.actions


def list_legal(listing: Listing, state: GameState, side: Faction) -> None:
    """``legal_actions(state, side)`` into ``listing``, in the same order."""
    if lists_nothing(state, side):
        return
    state.occupancy  # noqa: B018 -- the index, built once: listing asks hundreds of questions
    if state.pending:
        listing.extend(_choices(state, side))
    elif state.phase is Phase.COMBAT:
        listing.extend(_commitments(state, side))
    else:
        _moves(listing, state, side)
        listing.extend(_instead_of_moving(state, side))


def waiting_reason(state: GameState, side: Faction) -> str:
    """Why ``side`` has nothing to do, when ``legal_actions`` lists nothing for it (and it has
    no setup to submit, ``setup_options``): said with the empty list, so that a client can tell
    "nothing to do now" from "options still coming". One of ``game_over``, ``random_setup``,
    ``opponent_setup``, ``opponent_choice``, ``committed``, ``opponent_commits_first``,
    ``opponent_turn``. Made of public facts only (R7): the phase, whose turn or choice it is,
    which sides have committed (their ``combat_committed`` events reach everyone)."""
    if state.phase is Phase.OVER:
        return "game_over"
    if state.phase is Phase.SETUP:
        return "random_setup" if state.options.random_setup else "opponent_setup"
    if state.pending:
        return "opponent_choice"
    if state.phase is Phase.COMBAT:
        committed = state.combat is not None and side in state.combat.commitments
        return "committed" if committed else "opponent_commits_first"
    return "opponent_turn"


def random_legal_action(state: GameState, side: Faction, rng: random.Random) -> LegalAction | None:
    """One of ``legal_actions(state, side)`` at random, for playouts: None when there is none.

    In a turn it does not list every move: it draws (group, destination) candidates at random,
    without repeats, and judges only those it draws until one has a legal move, then returns
    one of that destination's moves at random; each action other than a move (the Liturgy,
    passing, a leader's power) is a candidate of its own. So every legal action can come, by
    the same judging as ``legal_actions`` (tests/test_legal.py checks both), though not all
    equally often: a destination with several forms of a move is one candidate. Elsewhere
    (combat, choices) the lists are short and it draws from the whole list.
    """
    if state.pending or state.phase is not Phase.TURN:
        actions = legal_actions(state, side)
        return rng.choice(actions) if actions else None
    if not _acts_in_turn(state, side):
        return None
    state.occupancy  # noqa: B018 -- the same index as for listing
    others = _instead_of_moving(state, side)
    groups = _groups(state, side)
    slots = [
        (g, to)
        for g, (units, fly) in enumerate(groups)
        for to in _destinations(state.positions[units[0]], fly)
    ]
    judged: dict[int, _Group] = {}
    revealers = _revealers(state, side)
    remaining = len(slots) + len(others)
    while remaining:
        k = rng.randrange(remaining)
        remaining -= 1
        if k >= len(slots):
            return others[k - len(slots)]
        g, to = slots[k]
        slots[k] = slots[-1]
        slots.pop()
        group = judged.get(g)
        if group is None:
            group = judged[g] = _Group(state, side, *groups[g])
        listing = ListedActions()
        _destination_moves(listing, state, group, to, revealers, outcomes=False)
        if listing.actions:
            return rng.choice(listing.actions)
    return None
