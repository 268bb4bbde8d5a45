"""``evolve(state, event) -> state``: fold one event; no rule is judged here, facts are applied."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Final

from . import events as ev
from .board import TARTARUS
from .characters import FACTIONS, Faction
from .state import Combat, Commitment, GameState, Options, Phase, Step

START_HONOR, OPEN_COMBAT_HONOR, START_ENERGY = 16, 10, 24

Changes = dict[str, Any]  # the fields an event changes


def _game_created(s: GameState, e: ev.GameCreated) -> Changes:
    options = Options(
        e.open_combat,
        e.random_setup,
        e.chthonian_honor,
        e.move_seconds,
        e.commit_seconds,
        e.forfeit_seconds,
    )
    honor = OPEN_COMBAT_HONOR if e.open_combat else START_HONOR
    return dict(
        options=options,
        token_seed=e.token_seed,
        phase=Phase.SETUP,
        honor={Faction.OLYMPIANS: honor, Faction.CHTHONIANS: honor + e.chthonian_honor},
        energy={f: START_ENERGY for f in FACTIONS},
    )


def _setup_submitted(s: GameState, e: ev.SetupSubmitted) -> Changes:
    return dict(setups={**s.setups, e.faction: dict(e.placements)})


def _setup_revealed(s: GameState, e: ev.SetupRevealed) -> Changes:
    positions = {u: r for placements in s.setups.values() for u, r in placements.items()}
    # first tokens in the order of the (public) starting regions, Olympians first
    tokens: dict[str, int] = {}
    for faction in FACTIONS:
        for unit, _ in sorted(s.setups[faction].items(), key=lambda item: item[1]):
            tokens[unit] = s.next_token + len(tokens)
    return dict(
        positions=positions,
        picked=frozenset(positions),
        setups={},
        tokens=tokens,
        next_token=s.next_token + len(tokens),
    )


def _turn_started(s: GameState, e: ev.TurnStarted) -> Changes:
    return dict(phase=Phase.TURN, turn=e.faction, turn_number=e.number)


def _honor_changed(s: GameState, e: ev.HonorChanged) -> Changes:
    return dict(honor={**s.honor, e.faction: s.honor[e.faction] + e.delta})


def _energy_changed(s: GameState, e: ev.EnergyChanged) -> Changes:
    return dict(energy={**s.energy, e.faction: s.energy[e.faction] + e.delta})


def _units_revealed(s: GameState, e: ev.UnitsRevealed) -> Changes:
    return dict(revealed=s.revealed | set(e.units))


def _units_hidden(s: GameState, e: ev.UnitsHidden) -> Changes:
    return dict(
        revealed=s.revealed - set(e.units),
        tokens={**s.tokens, **e.tokens},
        next_token=max(s.next_token, *(t + 1 for t in e.tokens.values())),
    )


def _units_moved(s: GameState, e: ev.UnitsMoved | ev.UnitsRetreated) -> Changes:
    positions = dict(s.positions)
    for unit in e.units:
        positions[unit] = e.destination
    # (not a fact: the occupancy index moved along, if built, for the state to be listed)
    return dict(positions=positions, _occupancy=s.index_after_move(e.units, e.destination))


def _unit_recalled(s: GameState, e: ev.UnitRecalled) -> Changes:
    return dict(
        positions={**s.positions, e.unit: TARTARUS},
        eliminated=tuple(u for u in s.eliminated if u != e.unit),
        tokens={**s.tokens, e.unit: e.token},
        next_token=max(s.next_token, e.token + 1),
    )


def _combat_started(s: GameState, e: ev.CombatStarted) -> Changes:
    return dict(phase=Phase.COMBAT, combat=Combat(e.region, e.attacker, e.origin))


def _combat_committed(s: GameState, e: ev.CombatCommitted) -> Changes:
    assert s.combat is not None
    commitments = {**s.combat.commitments, e.faction: Commitment(e.maneuver, e.energy)}
    return dict(combat=s.combat.with_commitments(commitments))


def _commitment_withdrawn(s: GameState, e: ev.CommitmentWithdrawn) -> Changes:
    assert s.combat is not None
    commitments = {f: c for f, c in s.combat.commitments.items() if f is not e.faction}
    return dict(combat=s.combat.with_commitments(commitments))


def _round_resolved(s: GameState, e: ev.CombatRoundResolved) -> Changes:
    assert s.combat is not None
    return dict(combat=s.combat.with_commitments({}))


def _choice_pending(s: GameState, e: ev.ChoicePending) -> Changes:
    return dict(pending=tuple(Step.decode(t) for t in e.steps))


def _unit_eliminated(s: GameState, e: ev.UnitEliminated) -> Changes:
    positions = dict(s.positions)
    del positions[e.unit]
    tokens = dict(s.tokens)
    tokens.pop(e.unit, None)
    unrecallable = s.unrecallable | {e.unit} if e.cause == "demeter" else s.unrecallable
    return dict(
        positions=positions,
        tokens=tokens,
        eliminated=(*s.eliminated, e.unit),
        revealed=s.revealed | {e.unit},
        unrecallable=unrecallable,
        pending=(),
    )


def _units_retreated(s: GameState, e: ev.UnitsRetreated) -> Changes:
    return {**_units_moved(s, e), "pending": ()}


def _stayed(s: GameState, e: ev.StayedInCombat) -> Changes:
    return dict(pending=())


def _round_started(s: GameState, e: ev.CombatRoundStarted) -> Changes:
    assert s.combat is not None
    return dict(combat=s.combat.with_commitments({}, e.round), pending=())


def _combat_ended(s: GameState, e: ev.CombatEnded) -> Changes:
    return dict(phase=Phase.TURN, combat=None, pending=())


def _clock_set(s: GameState, e: ev.ClockSet) -> Changes:
    return dict(deadlines=e.deadlines, absent_since=e.absent_since)


# The results that name a winning side; "draw" and "aborted" name none.
_WINNERS: Final[dict[str, Faction]] = {f.value: f for f in FACTIONS}


def _game_ended(s: GameState, e: ev.GameEnded) -> Changes:
    winner = _WINNERS.get(e.result)
    return dict(phase=Phase.OVER, result=e.result, winner=winner, pending=())


def _unchanged(s: GameState, e: ev.Event) -> Changes:
    return {}


# Each handler takes its own event type: typed as Any here, as a dict cannot say so per key.
_HANDLERS: Final[dict[type[ev.Event], Callable[[GameState, Any], Changes]]] = {
    ev.GameCreated: _game_created,
    ev.SetupSubmitted: _setup_submitted,
    ev.RandomSetupDrawn: _unchanged,
    ev.SetupRevealed: _setup_revealed,
    ev.TurnStarted: _turn_started,
    ev.HonorChanged: _honor_changed,
    ev.EnergyChanged: _energy_changed,
    ev.UnitsRevealed: _units_revealed,
    ev.UnitsHidden: _units_hidden,
    ev.UnitsMoved: _units_moved,
    ev.LiturgyPerformed: _unchanged,
    ev.Passed: _unchanged,
    ev.ThunderboltThrown: _unchanged,
    ev.UnitRecalled: _unit_recalled,
    ev.LeaderSucceeded: _unchanged,
    ev.CombatStarted: _combat_started,
    ev.CombatCommitted: _combat_committed,
    ev.CommitmentWithdrawn: _commitment_withdrawn,
    ev.CombatRoundResolved: _round_resolved,
    ev.ChoicePending: _choice_pending,
    ev.UnitEliminated: _unit_eliminated,
    ev.UnitsRetreated: _units_retreated,
    ev.StayedInCombat: _stayed,
    ev.CombatRoundStarted: _round_started,
    ev.CombatEnded: _combat_ended,
    ev.ClockSet: _clock_set,
    ev.DeadlineMissed: _unchanged,
    ev.GameEnded: _game_ended,
}
assert set(_HANDLERS) == set(ev.EVENT_TYPES.values()), "every event type needs a fold"


def evolve(state: GameState, event: ev.Event) -> GameState:
    """The state after ``event``: its facts applied, no rule judged (``decide`` did)."""
    changes = _HANDLERS[type(event)](state, event)
    changes["version"] = state.version + 1
    return state.evolved(changes)


def replay(events: Iterable[ev.Event], state: GameState | None = None) -> GameState:
    """``events`` folded in order, from ``state`` or from the empty state before a game."""
    state = GameState() if state is None else state
    for event in events:
        state = evolve(state, event)
    return state
