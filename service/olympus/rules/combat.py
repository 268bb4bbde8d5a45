"""Combat (R8) and retreats (R9): strengths, limits, the resolution of a round and its steps."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final

from . import events as ev
from .board import BOARD
from .characters import BY_NAME, FACTIONS, ORDER, Faction
from .decision import Decision
from .errors import IllegalCommand
from .honor import penalty
from .movement import STACK_LIMIT, check_reveals
from .powers import POWERS, Action, MoveContext, powers_of
from .state import MANEUVERS, Combat, Commitment, GameState, Maneuver, Step, StepKind
from .turns import end_turn

ENERGY_PER_UNIT: Final = 6
FREE_ENERGY: Final = 4  # committing more costs 1 Honor
ALL_OUT_HONOR: Final = 2
RETREAT_HONOR: Final = 2
CHASE_MODIFIER: Final = -3
ALL_MANEUVERS: Final = frozenset(MANEUVERS)
ALL_OUT: Final = frozenset({Maneuver.ALL_OUT_ATTACK, Maneuver.ALL_OUT_DEFENSE})


def current(state: GameState) -> Combat:
    """The combat going on; raises ``IllegalCommand`` ``not_in_combat`` if there is none."""
    if state.combat is None:
        raise IllegalCommand("not_in_combat", "There is no combat going on.")
    return state.combat


def combatants(state: GameState, faction: Faction) -> list[str]:
    """``faction``'s units in the combat's region, in R1 order."""
    return state.units_in(current(state).region, faction)


# --- strength -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Strength:
    """A side's power in a combat round term by term (R8), as the rules add it up: what each
    unit counts after Hypnos and Aphrodite, the powers' bonuses, what multiplies the Energy
    and what a Chase adds. Every term is public (all combatants are revealed, R8, and only
    revealed neighbours count), so it may be shown to everyone.

    ``__init__`` is spelled out as the events' are (events.py: why): both sides' are made for
    every combat position."""

    units: tuple[tuple[str, int], ...]  # (unit, nominal strength after the adjustments)
    adjustments: tuple[tuple[str, str, int], ...]  # (power, unit, change of its nominal strength)
    bonuses: tuple[tuple[str, int, bool], ...]  # (power, bonus, from a neighbouring region)
    energy_factor: int
    factor_powers: tuple[str, ...]  # whose powers multiply the Energy
    chase: int  # what a Chase adds
    chase_power: str | None  # whose power sets it (None: the rule's −3)

    def __init__(
        self,
        units: tuple[tuple[str, int], ...],
        adjustments: tuple[tuple[str, str, int], ...],
        bonuses: tuple[tuple[str, int, bool], ...],
        energy_factor: int,
        factor_powers: tuple[str, ...],
        chase: int,
        chase_power: str | None,
    ) -> None:
        object.__setattr__(self, "units", units)
        object.__setattr__(self, "adjustments", adjustments)
        object.__setattr__(self, "bonuses", bonuses)
        object.__setattr__(self, "energy_factor", energy_factor)
        object.__setattr__(self, "factor_powers", factor_powers)
        object.__setattr__(self, "chase", chase)
        object.__setattr__(self, "chase_power", chase_power)

    @property
    def base(self) -> int:
        """Base strength (R8): the units' nominal strengths after adjustments, plus bonuses."""
        return sum(v for _, v in self.units) + sum(b for _, b, _ in self.bonuses)

    def power(self, maneuver: Maneuver, energy: int) -> int:
        """Base + Energy (× powers), Chase modifier, doubled for the all-out maneuvers (R8).

        A Retreat that turns into a fight counts as Standard: it has no modifier of its own.
        Of a maneuver and an amount, not a ``Commitment``: the commitment form asks it of every
        maneuver with every amount (a row at a time: ``powers``).
        """
        return self._power(self.base, maneuver, energy)

    def powers(self, maneuver: Maneuver, most: int) -> list[int]:
        """``power`` with 0, 1, … ``most`` Energy (a row of the commitment form), the base
        added up once for the row."""
        base = self.base
        return [self._power(base, maneuver, energy) for energy in range(most + 1)]

    def _power(self, base: int, maneuver: Maneuver, energy: int) -> int:
        power_ = base + energy * self.energy_factor
        if maneuver is Maneuver.CHASE:
            power_ += self.chase
        if maneuver in ALL_OUT:
            power_ *= 2
        return power_

    def to_dict(self, commitment: Commitment | None = None) -> dict[str, Any]:
        """The terms as JSON-able data (protocol.md, "Combat strength"); with a commitment,
        the round's maneuver, Energy and resulting power too."""
        data: dict[str, Any] = {
            "units": [{"unit": u, "strength": v} for u, v in self.units],
            "adjustments": [{"power": p, "unit": u, "delta": d} for p, u, d in self.adjustments],
            "bonuses": [{"power": p, "value": b, "adjacent": a} for p, b, a in self.bonuses],
            "base": self.base,
            "energy_factor": self.energy_factor,
            "factor_powers": list(self.factor_powers),
            "chase": self.chase,
            "chase_power": self.chase_power,
        }
        if commitment is not None:
            data |= {
                "maneuver": commitment.maneuver.value,
                "energy": commitment.energy,
                "power": self.power(commitment.maneuver, commitment.energy),
            }
        return data


def strengths(state: GameState) -> dict[Faction, Strength]:
    """R8: each side's strength in the combat, term by term (see ``Strength``)."""
    region = current(state).region
    units = state.units_in(region)
    nominal = {u: BY_NAME[u].strength for u in units}
    adjustments: list[tuple[str, str, int]] = []
    present = powers_of(units)
    for power in sorted(present, key=lambda p: p.nominal_priority):
        adjusted = power.adjust_nominal(state, region, nominal)
        adjustments += [
            (power.unit, u, adjusted[u] - v) for u, v in nominal.items() if adjusted[u] != v
        ]
        nominal = adjusted
    neighbours = powers_of(
        u
        for u in state.revealed
        if u in state.positions and state.positions[u] in BOARD.neighbours(region)
    )
    result = {}
    for faction in FACTIONS:
        own = powers_of(state.units_in(region, faction))
        bonuses = [
            (p.unit, b, False) for p in present if (b := p.strength_bonus(state, region, faction))
        ]
        bonuses += [
            (p.unit, b, True) for p in neighbours if (b := p.adjacent_bonus(state, region, faction))
        ]
        factors = [(p.unit, f) for p in own if (f := p.energy_factor(state, region, faction)) != 1]
        chases = [
            (m, p.unit) for p in own if (m := p.chase_modifier(state, region, faction)) is not None
        ]
        chase, chase_power = max(chases) if chases else (CHASE_MODIFIER, None)
        result[faction] = Strength(
            units=tuple((u, v) for u, v in nominal.items() if BY_NAME[u].faction is faction),
            adjustments=tuple(a for a in adjustments if BY_NAME[a[1]].faction is faction),
            bonuses=tuple(bonuses),
            energy_factor=math.prod(f for _, f in factors),
            factor_powers=tuple(p for p, _ in factors),
            chase=chase,
            chase_power=chase_power,
        )
    return result


def strength_terms(state: GameState) -> dict[str, Any] | None:
    """While a combat's commitments are being made: each side's strength term by term
    (``Strength.to_dict``) and, for each maneuver it may use, its power with each amount of
    Energy it may commit (``powers``: maneuver → [power with 0, 1, … Energy]), for the
    commitment form (protocol.md, "Combat strength"). None otherwise. Public facts only."""
    if state.combat is None or state.pending:
        return None
    state.occupancy  # noqa: B018 -- build the index: the terms ask a few dozen questions of it
    terms = {}
    for faction, strength in strengths(state).items():
        most = energy_limit(state, faction)
        allowed = allowed_maneuvers(state, faction)
        terms[_NAMES[faction]] = strength.to_dict() | {
            "powers": {name: strength.powers(m, most) for m, name in _NAMED if m in allowed}
        }
    return terms


# Each maneuver with its name, and each side's name, read once: an enum's ``value`` is a
# property looked up by name, and every combat position reads a dozen.
_NAMED: Final = tuple((m, m.value) for m in MANEUVERS)
_NAMES: Final = {f: f.value for f in FACTIONS}


def removal_outcomes(state: GameState, faction: Faction) -> dict[str, Any] | None:
    """While ``faction`` chooses which of its units to remove (in a combat, R8) or to lose to a
    thunderbolt (R10): what each choice leads to, computed by playing it, so that the choice
    says what follows beyond its label. For each candidate:

    - ``strength``: both sides' strengths in the combat round that follows, or None when the
      combat ends (or there is none);
    - ``eliminated``: every unit the choice eliminates, the chosen one first (Thanatos takes
      the others in his region with him);
    - ``leader``: when the side's leader falls, its successor's name, or None (no successor);
      absent otherwise;
    - ``result``: the game's result when the choice ends it (the last Chthonian leader, Honor),
      else None.

    Made of what ``faction`` may know (R7): its own units, and units already revealed."""
    if not state.pending:
        return None
    step = state.pending[0]
    if step.faction is not faction or step.kind not in (StepKind.REMOVE, StepKind.STRUCK):
        return None
    outcomes: dict[str, Any] = {}
    for unit in removal_candidates(state, step):
        d = Decision(state)
        choose_removal(d, faction, unit)
        after = d.state
        outcome: dict[str, Any] = {
            "strength": (
                {f.value: s.to_dict() for f, s in strengths(after).items()}
                if after.combat is not None and not d.over
                else None
            ),
            "eliminated": [
                e.unit
                for e in d.events
                if isinstance(e, ev.UnitEliminated)
                and (BY_NAME[e.unit].faction is faction or e.unit in state.revealed)
            ],
            "result": after.result if d.over else None,
        }
        for e in d.events:
            if isinstance(e, ev.LeaderSucceeded) and e.faction is faction:
                outcome["leader"] = e.leader
        outcomes[unit] = outcome
    return outcomes


def base_strengths(state: GameState) -> dict[Faction, int]:
    """R8: nominal strengths after Hypnos and Aphrodite, plus the powers' bonuses."""
    return {f: s.base for f, s in strengths(state).items()}


# --- commitments --------------------------------------------------------------------------------


def energy_limit(state: GameState, faction: Faction) -> int:
    """R8: 6 per own unit in the combat, after Moirae and Nyx, never above the stock."""
    region = current(state).region
    limit = ENERGY_PER_UNIT * state.count_in(region, faction)
    for power in powers_of(state.units_in(region)):
        limit = power.energy_limit(state, region, faction, limit)
    return max(0, min(limit, state.energy[faction]))


def allowed_maneuvers(state: GameState, faction: Faction) -> frozenset[Maneuver]:
    """The maneuvers ``faction`` may commit in this combat (R8: all, but Cerberus alone must
    Chase and the Erinyes alone may not Retreat or All-out Defend)."""
    region = current(state).region
    allowed = ALL_MANEUVERS
    for power in powers_of(state.units_in(region, faction)):
        allowed = power.allowed_maneuvers(state, region, faction, allowed)
    return allowed


def first_to_commit(state: GameState) -> Faction | None:
    """Which side must commit first in this round, if any (R8: Open Combat and Athena, D12):
    with Athena seeing, her opponent in Open Combat, else nobody; in Open Combat the attacker
    in round 1, the defender after."""
    combat = current(state)
    seer = seeing_side(state)
    if seer is not None:
        return seer.enemy if state.options.open_combat else None
    if state.options.open_combat:
        return combat.attacker if combat.round == 1 else combat.defender
    return None


def seeing_side(state: GameState) -> Faction | None:
    """The side that sees the other's commitment before committing in round 1 (Athena)."""
    combat = current(state)
    if combat.round != 1:
        return None
    for unit in state.units_in(combat.region):
        power = POWERS.get(unit)
        if power is not None and power.sees_opponent_commitment(state, combat.region):
            return BY_NAME[unit].faction
    return None


def sees_commitment(state: GameState, faction: Faction) -> bool:
    """Whether ``faction`` may see the opponent's sealed commitment now (R8)."""
    if state.combat is None:
        return False
    return first_to_commit(state) is faction.enemy or seeing_side(state) is faction


def commitment_honor(state: GameState, faction: Faction, commitment: Commitment) -> int:
    """The Honor a commitment costs when revealed, a positive number of points (R8): the
    All-out penalty and the penalty for more than 4 Energy, added up (D4), after the powers."""
    prices = commitment_prices(state, faction)
    return commitment_price(prices, commitment.maneuver, commitment.energy)


# What any commitment of a side costs in Honor in one state (R8), after the powers: the
# penalty of an all-out maneuver and that of Energy beyond the free amount. A value, so that
# ``legal_actions`` can price every maneuver and amount from it (``commitment_price``), and
# recognise a combat position whose commitments it has listed before. A plain tuple: a
# NamedTuple's constructor stays interpreted, compiled (docs/performance.md).
CommitmentPrices = tuple[int, int]


def commitment_price(prices: CommitmentPrices, maneuver: Maneuver, energy: int) -> int:
    """The Honor (a positive number of points) a commitment of ``maneuver`` and ``energy``
    costs at ``prices``."""
    all_out, beyond_free = prices
    return (all_out if maneuver in ALL_OUT else 0) + (beyond_free if energy > FREE_ENERGY else 0)


def commitment_prices(state: GameState, faction: Faction) -> CommitmentPrices:
    """``faction``'s ``CommitmentPrices`` in this combat: (All-out penalty, penalty for more
    than 4 Energy), each after the powers of its combatants (Apollo, Dionysus, the Moirae)."""
    action = Action(faction, tuple(combatants(state, faction)), "combat")
    return penalty(state, action, "all_out", ALL_OUT_HONOR), penalty(state, action, "energy", 1)


def check_turn_to_commit(state: GameState, faction: Faction) -> None:
    """Raise ``IllegalCommand`` unless ``faction`` may commit now, whatever it commits: a
    combat (``not_in_combat``) without a choice pending (``choice_pending``), once a round
    (``already_committed``), in Open Combat's and Athena's order (R8, D12:
    ``wait_for_opponent``). ``legal_actions`` asks this, then lists what
    ``allowed_maneuvers`` and ``energy_limit`` allow."""
    combat = current(state)
    if state.pending:
        raise IllegalCommand("choice_pending", "A choice must be made before the next round.")
    if faction in combat.commitments:
        raise IllegalCommand("already_committed", "You have already committed for this round.")
    first = first_to_commit(state)
    if first is not None and first is not faction and first not in combat.commitments:
        raise IllegalCommand("wait_for_opponent", "Your opponent commits first in this round.")


def check_commitment(state: GameState, faction: Faction, maneuver: Maneuver, energy: int) -> None:
    """``check_turn_to_commit``, then raise ``IllegalCommand`` ``maneuver_not_allowed`` or
    ``energy_limit`` unless the side may commit ``maneuver`` with ``energy`` (R8)."""
    check_turn_to_commit(state, faction)
    if maneuver not in allowed_maneuvers(state, faction):
        raise IllegalCommand("maneuver_not_allowed", f"Your units cannot use {maneuver.value}.")
    limit = energy_limit(state, faction)
    if energy > limit:
        raise IllegalCommand("energy_limit", f"You may commit at most {limit} Energy this round.")


def commit(
    d: Decision, faction: Faction, maneuver: Maneuver, energy: int, reveal: list[str]
) -> None:
    """A sealed commitment (R8), revealing ``reveal`` for their power first (Aphrodite next to
    the combat: the enemy may then commit again); the round is resolved once both sides are
    in. Raises ``IllegalCommand`` as ``check_commitment`` does, or ``cannot_reveal`` and the
    codes of ``movement.own_units`` for a unit that may not be revealed."""
    check_commitment(d.state, faction, maneuver, energy)
    state = d.state
    for unit in check_reveals(
        state, faction, reveal, lambda p: p.may_reveal_in_commit(state, faction)
    ):
        d.emit(ev.UnitsRevealed(units=(unit,)))
        if faction.enemy in current(d.state).commitments:
            d.emit(ev.CommitmentWithdrawn(faction=faction.enemy))
    d.emit(ev.CombatCommitted(faction, current(d.state).round, maneuver, energy))
    if len(current(d.state).commitments) == 2:
        resolve_round(d)


# --- resolution ---------------------------------------------------------------------------------


def _retreat_succeeds_against_chase(state: GameState, retreating: Faction) -> bool:
    units = combatants(state, retreating)
    if not any(p.retreat_unstoppable(state, units) for p in powers_of(units)):
        return False
    chasers = powers_of(combatants(state, retreating.enemy))
    return not any(p.stops_unstoppable_retreat(state) for p in chasers)


def plan_round(
    state: GameState, maneuvers: dict[Faction, Maneuver], power: dict[Faction, int]
) -> tuple[Faction | None, list[tuple[StepKind, Faction]]]:
    """The winner (None when nobody fights) and the steps of a round, per R8's overview (the
    rulebook's "Maneuver Overview"); ties go to the original attacker; an All-out Defense that
    wins keeps everyone alive, even against an All-out Attack (D5)."""
    combat = current(state)
    a, d = combat.attacker, combat.defender
    retreating = [f for f in (a, d) if maneuvers[f] is Maneuver.RETREAT]
    if len(retreating) == 2:
        return None, [(StepKind.RETREAT, d), (StepKind.RETREAT, a)]
    winner = a if power[a] >= power[d] else d  # ties go to the original attacker
    loser = winner.enemy
    if retreating:
        r = retreating[0]
        if maneuvers[r.enemy] is not Maneuver.CHASE or _retreat_succeeds_against_chase(state, r):
            return None, [(StepKind.RETREAT, r)]
        if winner is r:
            return winner, [(StepKind.LEAVE_OR_STRIKE, r)]
        return winner, [(StepKind.REMOVE, r), (StepKind.LEAVE_OR_STAY, r)]
    if maneuvers[a] is maneuvers[d] is Maneuver.ALL_OUT_ATTACK:
        return winner, [(StepKind.ANNIHILATE, a), (StepKind.ANNIHILATE, d)]
    steps: list[tuple[StepKind, Faction]] = []
    if maneuvers[winner] is Maneuver.ALL_OUT_DEFENSE:
        pass  # the all-out defender won: nobody dies, a new round follows
    elif maneuvers[loser] is Maneuver.ALL_OUT_ATTACK:
        steps.append((StepKind.ANNIHILATE, loser))
    else:
        steps.append((StepKind.REMOVE, loser))
    if (
        maneuvers[winner] is Maneuver.ALL_OUT_ATTACK
        and maneuvers[loser] is not Maneuver.ALL_OUT_DEFENSE
    ):
        steps.append((StepKind.ANNIHILATE, winner))
    return winner, steps


def resolve_round(d: Decision) -> None:
    """Both commitments are in: reveal them, pay their costs, fight, then settle the steps."""
    state = d.state
    combat = current(state)
    commitments = dict(combat.commitments)
    maneuvers = {f: c.maneuver for f, c in commitments.items()}
    for f in FACTIONS:  # R8: a Retreat with no legal region works as Standard
        if maneuvers[f] is Maneuver.RETREAT and not retreat_regions(state, f):
            maneuvers[f] = Maneuver.STANDARD
    strength = strengths(state)
    power = {f: strength[f].power(c.maneuver, c.energy) for f, c in commitments.items()}
    winner, plan = plan_round(state, maneuvers, power)
    o, c = commitments[Faction.OLYMPIANS], commitments[Faction.CHTHONIANS]
    d.emit(
        ev.CombatRoundResolved(
            round=combat.round,
            olympian_maneuver=o.maneuver,
            olympian_energy=o.energy,
            chthonian_maneuver=c.maneuver,
            chthonian_energy=c.energy,
            olympian_power=power[Faction.OLYMPIANS],
            chthonian_power=power[Faction.CHTHONIANS],
            winner=winner,
            breakdown={f.value: strength[f].to_dict(commitments[f]) for f in FACTIONS},
        )
    )
    for f in (combat.attacker, combat.defender):  # committed Energy is always spent
        if commitments[f].energy:
            d.emit(ev.EnergyChanged(f, -commitments[f].energy, "combat"))
    for p in powers_of(state.units_in(combat.region)):
        p.round_resolved(d, o.energy)
    for f in (combat.attacker, combat.defender):
        points = commitment_honor(state, f, commitments[f])
        if points:
            d.emit(ev.HonorChanged(f, -points, "combat"))
    if d.check_end():
        return
    steps = [Step(kind, faction, combat.region) for kind, faction in plan]
    run_steps(d, steps)


# --- steps: removals, retreats, annihilation ------------------------------------------------------


# Causes of elimination that count as "in combat" (Thanatos).
COMBAT_CAUSES: Final = frozenset({StepKind.REMOVE.value, "all_out_attack"})


def eliminate(d: Decision, units: list[str], cause: str) -> None:
    """Eliminate ``units`` at once, then their powers' effects (Thanatos, a leader's
    succession), then the game-end check (D14)."""
    regions = {u: d.state.positions[u] for u in units}
    for unit in units:
        d.emit(ev.UnitEliminated(unit=unit, cause=cause))
    for unit in units:
        for power in powers_of([unit]):
            power.on_eliminated(d, regions[unit], cause)
    d.check_end()


def removal_candidates(state: GameState, step: Step) -> list[str]:
    """The units the side of ``step`` may remove (R8), or lose to a thunderbolt: never
    Cerberus (R10)."""
    units = state.units_in(step.region, step.faction)
    if step.kind is StepKind.STRUCK:
        return [
            u
            for u in units
            if not (u in POWERS and POWERS[u].thunderbolt_immune(state, step.region))
        ]
    return units


def weakest(units: list[str]) -> str:
    """R8: the fallback choice of a missed deadline: lowest nominal strength, then R1 order."""
    return min(units, key=lambda u: (BY_NAME[u].strength, ORDER[u]))


def retreat_regions(state: GameState, faction: Faction) -> list[int]:
    """R9: where ``faction``'s units in the combat may retreat now."""
    combat = current(state)
    region = combat.region
    units = state.units_in(region, faction)
    if not units:
        return []
    present = powers_of(units)
    neighbours = BOARD.neighbours(region)
    if combat.origin is None or any(p.retreats_any_direction(state, units) for p in present):
        candidates = set(neighbours)
    elif faction is combat.attacker:
        candidates = {combat.origin} | (BOARD.neighbours(combat.origin) & neighbours)
    else:
        candidates = set(neighbours) - {combat.origin} - BOARD.neighbours(combat.origin)
    across = any(p.retreats_across_styx(state, units) for p in present)
    return sorted(
        r
        for r in candidates
        if not state.count_in(r, faction.enemy)
        and state.count_in(r, faction) + len(units) <= STACK_LIMIT
        and (across or not BOARD.crosses_styx(region, r))
    )


def retreat(d: Decision, faction: Faction, destination: int) -> None:
    """``faction``'s units in the combat leave for ``destination`` (R9) and pay 2 Honor (R8)
    after the powers; then the game-end check."""
    units = tuple(combatants(d.state, faction))
    points = penalty(d.state, Action(faction, units, "retreat"), "retreat", RETREAT_HONOR)
    d.emit(ev.UnitsRetreated(faction=faction, units=units, destination=destination))
    if points:
        d.emit(ev.HonorChanged(faction, -points, "retreat"))
    d.check_end()


def run_steps(d: Decision, steps: list[Step]) -> None:
    """Settle the steps that need no choice; stop at the first that does (``ChoicePending``),
    or finish the round. A retreat waits for its region even when only one is possible (D10),
    and a thunderbolt's victim for its choice whenever the region holds several units (D17)."""
    while steps and not d.over:
        step = steps[0]
        units = d.state.units_in(step.region, step.faction)
        if not units:
            steps.pop(0)
            continue
        if step.kind is StepKind.WITHDRAW:
            assert step.to is not None, "a withdrawal names where the units go back to"
            if d.state.count_in(step.region, step.faction.enemy):
                d.emit(ev.UnitsRetreated(step.faction, tuple(units), step.to))
            steps.pop(0)
            continue
        if step.kind is StepKind.ANNIHILATE:
            eliminate(d, units, "all_out_attack")
            steps.pop(0)
            continue
        if step.kind in (StepKind.REMOVE, StepKind.STRUCK):
            candidates = removal_candidates(d.state, step)
            # a thunderbolt's victim is chosen whenever the region holds several units, so that
            # whether a choice is asked never tells who is there (Cerberus, R7)
            choosers = units if step.kind is StepKind.STRUCK else candidates
            if candidates and len(choosers) > 1:
                break
            if candidates:
                eliminate(d, candidates[:1], step.kind.value)
            steps.pop(0)
            continue
        if retreat_regions(d.state, step.faction):
            break
        if step.kind is StepKind.LEAVE_OR_STRIKE:  # nowhere to go: stay and strike
            steps[0] = Step(StepKind.REMOVE, step.faction.enemy, step.region)
        else:  # nowhere to go: the side stays, and pays nothing
            steps.pop(0)
    if d.over:
        return
    if steps:
        d.emit(ev.ChoicePending(steps=tuple(s.encode() for s in steps)))
        return
    finish_steps(d)


def finish_steps(d: Decision) -> None:
    """After the last step: the next round (R8), the end of the combat, or the end of the turn
    (a thunderbolt's)."""
    combat = d.state.combat
    if combat is None:
        end_turn(d)
        return
    region = combat.region
    if all(d.state.count_in(region, f) for f in FACTIONS):
        d.emit(ev.CombatRoundStarted(round=combat.round + 1))
        return
    d.emit(ev.CombatEnded(region=region))
    end_turn(d)


def awaited(state: GameState, faction: Faction, kinds: tuple[StepKind, ...]) -> Step:
    """The pending step ``faction`` answers now, if it is of ``kinds``; else
    ``IllegalCommand``: ``no_choice_pending``, ``not_your_choice`` or ``wrong_choice``."""
    if not state.pending:
        raise IllegalCommand("no_choice_pending", "No choice is awaited now.")
    step = state.pending[0]
    if step.faction is not faction:
        raise IllegalCommand("not_your_choice", "Your opponent has a choice to make.")
    if step.kind not in kinds:
        raise IllegalCommand("wrong_choice", f"The awaited choice is: {step.kind.value}.")
    return step


def choose_removal(d: Decision, faction: Faction, unit: str) -> None:
    """The unit the side removes (R8) or loses to a thunderbolt (R10); then the steps go on.
    Raises ``IllegalCommand`` as ``awaited`` does, or ``invalid_choice``."""
    step = awaited(d.state, faction, (StepKind.REMOVE, StepKind.STRUCK))
    if unit not in removal_candidates(d.state, step):
        raise IllegalCommand("invalid_choice", f"{unit} cannot be the unit removed.")
    rest = list(d.state.pending[1:])
    eliminate(d, [unit], step.kind.value)
    run_steps(d, rest)


def choose_retreat(d: Decision, faction: Faction, region: int) -> None:
    """The side leaves the combat for ``region`` (R9); then the steps go on. Raises
    ``IllegalCommand`` as ``awaited`` does, or ``invalid_retreat``."""
    awaited(d.state, faction, (StepKind.RETREAT, StepKind.LEAVE_OR_STAY, StepKind.LEAVE_OR_STRIKE))
    if region not in retreat_regions(d.state, faction):
        raise IllegalCommand("invalid_retreat", f"Your units cannot retreat to region {region}.")
    rest = list(d.state.pending[1:])
    retreat(d, faction, region)
    run_steps(d, rest)


def choose_stay(d: Decision, faction: Faction) -> None:
    """The side stays where it may leave (R8): after losing to a Chase it fights on; after
    winning against one, the chaser removes a unit. Raises ``IllegalCommand`` as ``awaited``
    does."""
    step = awaited(d.state, faction, (StepKind.LEAVE_OR_STAY, StepKind.LEAVE_OR_STRIKE))
    rest = list(d.state.pending[1:])
    d.emit(ev.StayedInCombat(faction=faction))
    if step.kind is StepKind.LEAVE_OR_STRIKE:
        rest.insert(0, Step(StepKind.REMOVE, faction.enemy, step.region))
    run_steps(d, rest)


def meet(d: Decision, move: MoveContext) -> None:
    """A move ended where enemies stand (R8): meetings first (Cronus, Demeter, a sneak attack),
    then the game-end check (a leader in the Palace wins without a fight, D13), then the
    combat, every unit in it revealed."""
    region = move.destination
    for unit in d.state.units_in(region):
        if unit in d.state.positions and unit in POWERS and not d.over and not d.state.pending:
            POWERS[unit].on_meeting(d, region, move)
    if d.check_end() or d.state.pending:
        return
    if not all(d.state.count_in(region, f) for f in FACTIONS):
        end_turn(d)
        return
    origin = None if move.flight else move.origin
    d.emit(ev.CombatStarted(region=region, attacker=move.faction, origin=origin))
    hidden = tuple(u for u in d.state.units_in(region) if u not in d.state.revealed)
    if hidden:
        d.emit(ev.UnitsRevealed(units=hidden))
