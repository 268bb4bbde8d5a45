"""Clocks and absence (R12): deadlines live in events; a missed one has a fixed fallback.

The rules never read a clock: the service stamps each command with ``at_ms`` and the rules turn
that into ``ClockSet`` events. Any server process may then send ``Timeout`` for an expired
deadline; the room's optimistic concurrency makes it apply once.
"""

from __future__ import annotations

import random
from typing import Any

from . import commands as cmd
from . import events as ev
from .characters import FACTIONS, Faction
from .combat import allowed_maneuvers, first_to_commit, removal_candidates, retreat_regions, weakest
from .decision import Decision
from .errors import IllegalCommand
from .setup import random_placements
from .state import GameState, Maneuver, Options, Phase, StepKind


def awaited(state: GameState) -> dict[Faction, tuple[str, str]]:
    """Who must act now: side → (kind, key). A new key for a side restarts its clock."""
    if state.phase is Phase.OVER:
        return {}
    if state.phase is Phase.SETUP:  # once one side is in, the other is awaited
        return {f: ("setup", "setup") for f in FACTIONS if state.setups and f not in state.setups}
    turn = state.turn_number
    if state.pending:
        step = state.pending[0]
        round_ = state.combat.round if state.combat else 0
        return {step.faction: ("choice", f"{turn}:{round_}:{step.encode()}")}
    if state.combat is not None:
        combat, first = state.combat, first_to_commit(state)
        return {
            f: ("commit", f"{turn}:{combat.round}")
            for f in FACTIONS
            if f not in combat.commitments
            and (first is None or first is f or first in combat.commitments)
        }
    return {state.turn: ("move", str(turn))}


def _limit(options: Options, kind: str) -> int | None:
    return options.move_seconds if kind in ("move", "setup") else options.commit_seconds


def has_clocks(options: Options) -> bool:
    """A game with a time limit per move or per commit: the only one whose deadlines run."""
    return options.move_seconds is not None or options.commit_seconds is not None


def schedule(d: Decision, at_ms: int, absent_since: dict[str, int]) -> None:
    """Set the deadlines of the sides now awaited (keeping running ones) and record absences."""
    options = d.state.options
    if not has_clocks(options):
        return
    deadlines: dict[str, dict[str, Any]] = {}
    for faction, (kind, key) in awaited(d.state).items():
        seconds = _limit(options, kind)
        if seconds is None:
            continue
        running = d.state.deadlines.get(faction.value)
        if running is not None and running["key"] == key:
            deadlines[faction.value] = running
        else:
            deadlines[faction.value] = {
                "kind": kind,
                "key": key,
                "since": at_ms,
                "due": at_ms + seconds * 1000,
            }
    if deadlines != d.state.deadlines or absent_since != d.state.absent_since:
        d.emit(ev.ClockSet(deadlines=deadlines, absent_since=absent_since))


def deadlines(state: GameState) -> list[tuple[Faction, str, int]]:
    """The running deadlines: (side, kind, due in ms)."""
    return [(Faction(f), d["kind"], d["due"]) for f, d in sorted(state.deadlines.items())]


def earliest_due(state: GameState) -> int | None:
    """When the next deadline falls (ms), None if none runs; a finished game's last deadlines
    are moot. Asked after every command, so read off the state's deadlines as they are (a
    game without clocks has none), not through the sorted list of ``deadlines``."""
    if state.phase is Phase.OVER or not state.deadlines:
        return None
    return min(int(entry["due"]) for entry in state.deadlines.values())


def fallback(state: GameState, side: Faction, kind: str, seed: int) -> cmd.Command:
    """R12: a missed turn is a Liturgy (always legal); a missed commit Standard with 0 Energy
    (or the first allowed maneuver); a missed removal the weakest unit (R8); a missed retreat
    choice stays where staying is allowed, else takes the lowest-numbered region (D15); a
    missed setup is drawn as in Random Setup from the seed the service sent."""
    if kind == "setup":
        return cmd.SubmitSetup(side=side, placements=random_placements(random.Random(seed), side))
    if kind == "move":
        return cmd.Liturgy(side=side)
    if kind == "commit":
        allowed = allowed_maneuvers(state, side)
        maneuver = Maneuver.STANDARD if Maneuver.STANDARD in allowed else min(allowed)
        return cmd.Commit(side=side, maneuver=maneuver, energy=0)
    step = state.pending[0]
    if step.kind in (StepKind.REMOVE, StepKind.STRUCK):
        return cmd.RemoveUnit(side=side, unit=weakest(removal_candidates(state, step)))
    if step.kind is StepKind.RETREAT:
        return cmd.Retreat(side=side, region=retreat_regions(state, side)[0])
    return cmd.Stay(side=side)


def missed(state: GameState, side: Faction, at_ms: int) -> tuple[str, int]:
    """(kind, absent since) of ``side``'s expired deadline; else ``IllegalCommand``
    ``no_deadline`` or ``not_expired``."""
    entry = state.deadlines.get(side.value)
    if entry is None:
        raise IllegalCommand("no_deadline", "That side has no running deadline.")
    if at_ms < entry["due"]:
        raise IllegalCommand("not_expired", "The deadline has not passed yet.")
    return entry["kind"], state.absent_since.get(side.value, entry["since"])
