"""The coach: a finished game's commands judged by the search, each from its mover's view.

``analyse`` walks a game's log (the unredacted events, in order). It keeps the true state and,
beside it, one ``Belief`` per seat fed exactly as the computer player's is: each event as
``observe_event`` writes it for that seat, nothing else. At each command it finds who played
what (the legal action of a seat whose events are the log's next ones) and, when the mover had
a choice, asks the search from the mover's information set at that moment:

- ``before``: the mover's chance with the move the search prefers (its mean reward);
- ``after``: the mover's chance with the move played, from the same information set;
- ``drop``: how much the played move lost against the preferred one (never below 0), and a
  mark: ``mistake`` from ``MISTAKE``, ``blunder`` from ``BLUNDER``.

``hint`` is the same search for one seat at the end of a log under way: the move it would play.

Everything is a function of the events, the budget and a seed (the room's): a seat's
estimates are a function of what that seat was sent and of its own options alone
(tests/bot/test_coach_blind.py checks it). The seed of a decision is the seed, the seat and
the number of that seat's decisions before it, all facts the seat knows.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from olympus.rules import (
    Faction,
    GameState,
    IllegalCommand,
    LegalAction,
    Phase,
    evolve,
    execute,
    legal_actions,
)
from olympus.rules import commands as cmd
from olympus.rules import events as ev
from olympus.rules.characters import FACTIONS
from olympus.rules.observation import observe_event

from .belief import Belief
from .sealed import decide
from .search import COMMIT_ENERGIES, Budget, Key, Result, wire_key

Wire = dict[str, Any]
MISTAKE = 0.10  # the mover's chance fell this much (10 points) or more: a mistake
BLUNDER = 0.20  # 20 points or more: a blunder
# Per command: normal's playout depth with fewer iterations and no time cap, so that the result
# does not depend on the machine (a 250-command game takes some 20 s of one core).
ANALYSIS_BUDGET = Budget(iterations=60, seconds=None, depth=8)
HINT_BUDGET = Budget(iterations=150, seconds=None, depth=8)  # normal's, untimed
VERSION = 1  # of the analysis's format and method: kept with each analysis
# Events that no seat's command makes: the room's creation, the Random Setup, the clocks.
_SYSTEM = (ev.GameCreated, ev.RandomSetupDrawn, ev.ClockSet)
# The event that tells which kind of command made a batch (the first one of these in it).
_KIND = {
    ev.UnitsMoved: "move",
    ev.LiturgyPerformed: "liturgy",
    ev.Passed: "pass",
    ev.ThunderboltThrown: "thunderbolt",
    ev.UnitRecalled: "recall",
    ev.CombatCommitted: "commit",
    ev.CommitmentWithdrawn: "commit",
    ev.UnitsRetreated: "retreat",
    ev.StayedInCombat: "stay",
    ev.UnitEliminated: "remove_unit",
}


@dataclass(frozen=True, slots=True)
class Estimate:
    """The search's judgement of one decision, from the mover's information set."""

    preferred: Wire
    before: float  # the mover's chance with the preferred move
    after: float  # with the move played
    iterations: int

    @property
    def drop(self) -> float:
        return max(0.0, self.before - self.after)


def mark(drop: float) -> str | None:
    if drop >= BLUNDER:
        return "blunder"
    if drop >= MISTAKE:
        return "mistake"
    return None


def decision_rng(seed: str, seat: Faction, decisions: int) -> random.Random:
    return random.Random(f"{seed}:{seat.value}:{decisions}")


def _preferred(result: Result) -> Key:
    """The search's move: the most visited (a sealed root: the solution's likeliest)."""
    played = [k for k, v in result.visits.items() if v > 0 and k in result.values]
    if not played:
        return result.choice
    return max(played, key=lambda k: (result.visits[k], result.values[k]))


def _nearest(key: Key, offered: dict[Key, Wire]) -> Key:
    """The key the search judges for a played commitment: its own, or (Energy outside the
    search's steps 0, 2, 4, 6, 10) the same maneuver with the largest step below it."""
    wire = offered[key]
    if wire["type"] != "commit" or wire["energy"] in COMMIT_ENERGIES:
        return key
    step = max(e for e in COMMIT_ENERGIES if e <= wire["energy"])
    for other, candidate in offered.items():
        same = {**wire, "energy": step}
        if candidate == same:
            return other
    return key


def estimate(
    belief: Belief, offered: dict[Key, Wire], played: Key, budget: Budget, rng: random.Random
) -> Estimate:
    """The preferred move and the chances with it and with ``played``, from ``belief``.

    The first search picks the preferred move. When the played move is another, a second
    search judges the two alone and gives both chances: the first search's mean of the move it
    picked is the largest of many noisy means (it overstates), the second's is not picked."""
    result = decide(belief, offered, budget, rng, _no_clock)
    best = _preferred(result)
    judged = _nearest(played, offered)
    iterations = result.iterations
    values = result.values
    if judged != best:
        pair = {best: offered[best], judged: offered[judged]}
        second = decide(belief, pair, budget, rng, _no_clock)
        iterations += second.iterations
        if judged in second.values and best in second.values:
            values = second.values
    before = values.get(best, 0.5)
    after = before if judged == best else values.get(judged, before)
    return Estimate(offered[best], before, after, iterations)


def _no_clock() -> float:
    return 0.0


# --- walking a log -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Played:
    """One command found in the log: who played it, what, and its events' span."""

    seat: Faction
    action: LegalAction | None  # None: a setup, or a missed deadline's fallback
    count: int  # events of the log it made
    offered: list[LegalAction]


class Walk:
    """The true state and each seat's belief, folded event by event from a log."""

    def __init__(self) -> None:
        self.state = GameState()
        self.beliefs = {seat: Belief(seat, GameState()) for seat in FACTIONS}
        self.decisions = dict.fromkeys(FACTIONS, 0)

    def fold(self, event: ev.Event) -> None:
        after = evolve(self.state, event)
        for seat, belief in self.beliefs.items():
            seen = observe_event(event, seat, self.state, after)
            if seen is not None:
                belief.observe(seen)
        self.state = after

    def belief(self, seat: Faction) -> Belief:
        """What the search reads for ``seat``'s decision (the negative control of the tests
        overrides it)."""
        return self.beliefs[seat]

    def next_command(self, events: Sequence[ev.Event], at: int) -> Played | None:
        """The command whose events start the log at ``at``; None for an event no command of
        a seat made (the room's creation, a Random Setup, a clock)."""
        first = events[at]
        if isinstance(first, _SYSTEM):
            return None
        if isinstance(first, (ev.SetupSubmitted, ev.DeadlineMissed)):
            # a seat's setup, or its missed deadline's fallback: no choice to judge (a setup
            # drawn by the Random Setup is the system's: its events match no command here)
            if isinstance(first, ev.SetupSubmitted):
                placements = dict(first.placements)
                command: cmd.Command = cmd.SubmitSetup(side=first.faction, placements=placements)
            else:
                command = cmd.Timeout(side=first.faction, at_ms=_due(self.state, first.faction))
            count = _matched(self.state, command, events, at)
            return Played(first.faction, None, count, []) if count else None
        kind, faction = _kind(events, at)
        seats = sorted(FACTIONS, key=lambda f: f is not faction)
        for seat in seats:
            offered = legal_actions(self.state, seat)
            likely = sorted(offered, key=lambda a: _unlikely(a, kind, events, at))
            for action in likely:
                count = _matched(self.state, action.command, events, at)
                if count:
                    return Played(seat, action, count, offered)
        return None


def _due(state: GameState, seat: Faction) -> int:
    deadline = state.deadlines.get(seat.value)
    return int(deadline["due"]) if deadline else 0


def _kind(events: Sequence[ev.Event], at: int) -> tuple[str | None, Faction | None]:
    for event in events[at : at + 6]:
        kind = _KIND.get(type(event))
        if kind is not None:
            return kind, getattr(event, "faction", None)
    return None, None


def _unlikely(action: LegalAction, kind: str | None, events: Sequence[ev.Event], at: int) -> int:
    """0 for the actions likeliest to have made the events at ``at`` (tried first)."""
    if action.type != kind:
        return 2
    if kind == "move":
        moved = next(e for e in events[at : at + 6] if isinstance(e, ev.UnitsMoved))
        wire = action.wire
        return (
            0 if set(wire["units"]) == set(moved.units) and wire["to"] == moved.destination else 1
        )
    return 0


def _matched(state: GameState, command: cmd.Command, events: Sequence[ev.Event], at: int) -> int:
    """How many events of the log from ``at`` ``command`` makes in ``state`` (clocks aside);
    0 when they are not the log's."""
    try:
        made, _ = execute(state, command)
    except (IllegalCommand, ValueError):
        return 0
    wanted = [e for e in made if not isinstance(e, ev.ClockSet)]
    count = 0
    for event in wanted:
        while at + count < len(events) and isinstance(events[at + count], ev.ClockSet):
            count += 1
        if at + count >= len(events) or events[at + count] != event:
            return 0
        count += 1
    return count


def analyse(
    events: Sequence[ev.Event],
    seed: str,
    budget: Budget = ANALYSIS_BUDGET,
    walk: Walk | None = None,
) -> dict[str, Any]:
    """The analysis of a game's log (``docs/bots.md``, "The coach"): one entry per command a
    seat chose among several, in order; JSON-able."""
    walk = walk or Walk()
    moves: list[dict[str, Any]] = []
    at = 0
    commands = 0
    while at < len(events):
        played = walk.next_command(events, at)
        if played is None:
            walk.fold(events[at])
            at += 1
            continue
        commands += 1
        if played.action is not None and len(played.offered) > 1:
            moves.append(_judge(walk, played, at, seed, budget, commands))
        for event in events[at : at + played.count]:
            walk.fold(event)
        at += played.count
    return {
        "version": VERSION,
        "thresholds": {"mistake": MISTAKE, "blunder": BLUNDER},
        "iterations": budget.iterations,
        "commands": commands,
        "moves": moves,
    }


def _judge(
    walk: Walk, played: Played, at: int, seed: str, budget: Budget, number: int
) -> dict[str, Any]:
    seat, action = played.seat, played.action
    assert action is not None
    belief = walk.belief(seat)
    offered = {wire_key(belief.state, seat, seat, a.wire): a.wire for a in played.offered}
    key = wire_key(belief.state, seat, seat, action.wire)
    rng = decision_rng(seed, seat, walk.decisions[seat])
    walk.decisions[seat] += 1
    judged = estimate(belief, offered, key, budget, rng)
    olympians = seat is Faction.OLYMPIANS
    state = walk.state
    return {
        "command": number,
        "first": at + 1,  # the log's numbers (from 1) of its first and last events
        "last": at + played.count,
        "seat": seat.value,
        "turn": state.turn_number,
        "phase": state.phase.value,
        "played": action.wire,
        "preferred": judged.preferred,
        "before": round(judged.before, 4),
        "after": round(judged.after, 4),
        "olympians_before": round(judged.before if olympians else 1 - judged.before, 4),
        "olympians_after": round(judged.after if olympians else 1 - judged.after, 4),
        "drop": round(judged.drop, 4),
        "mark": mark(judged.drop),
    }


def hint(
    events: Sequence[ev.Event],
    seat: Faction,
    seed: str,
    budget: Budget = HINT_BUDGET,
    walk: Walk | None = None,
) -> dict[str, Any] | None:
    """The move the search would play for ``seat`` at the end of ``events`` (a log under way),
    from the seat's view; None when the seat has nothing to choose now (a setup included)."""
    walk = walk or Walk()
    decisions = 0
    at = 0
    while at < len(events):
        played = walk.next_command(events, at)
        count = 1 if played is None else played.count
        if played is not None and played.seat is seat and played.action is not None:
            decisions += 1
        for event in events[at : at + count]:
            walk.fold(event)
        at += count
    if walk.state.phase is Phase.OVER:
        return None
    offered_actions = legal_actions(walk.state, seat)
    if not offered_actions:
        return None
    belief = walk.belief(seat)
    offered = {wire_key(belief.state, seat, seat, a.wire): a.wire for a in offered_actions}
    if len(offered) == 1:
        only = next(iter(offered.values()))
        return {"command": only, "chance": None, "forced": True}
    rng = decision_rng(f"{seed}:hint", seat, decisions)
    result = decide(belief, offered, budget, rng, _no_clock)
    best = _preferred(result)
    chance = result.values.get(best)
    return {
        "command": offered[best],
        "chance": None if chance is None else round(chance, 4),
        "forced": False,
    }
