"""The playout policy: cheap, not uniform. A playout draws a few legal actions and plays the
one that looks best at a glance: keep Honor (R4), go forward, bring a Chthonian leader nearer
the Palace, attack where it pays, call a Liturgy when Energy runs low. In combat (R8) it reads
both sides' strength: it commits the Standard maneuver with the least Energy that beats what the
enemy can add without losing Honor, retreats when it cannot and a retreat is open, and keeps
its Energy when the round is lost anyway; now and then it commits at random, without losing
Honor. It removes its weakest unit that is not a leader.

The same glance scores the one-ply greedy bot's moves (``glance``).
"""

from __future__ import annotations

import random

from olympus.rules import (
    BOARD,
    BY_NAME,
    Faction,
    GameState,
    IllegalCommand,
    LegalAction,
    Phase,
    execute,
    legal_actions,
    random_legal_action,
)
from olympus.rules.combat import current, energy_limit, retreat_regions, strengths
from olympus.rules.state import Maneuver

from .evaluation import CHTHONIAN_LEADERS, steps_to_palace

DRAWS = 2  # candidate actions drawn per turn of a playout
LOW_ENERGY = 6
FREE_ENERGY = 4  # committing more costs 1 Honor (R8)
RANDOM_COMMITMENT = 0.2  # how often a playout commits at random (the enemy's odd choices)
LEADERS = frozenset({"Zeus", "Hades", "Persephone"})
MANEUVER_WEIGHTS = {
    "standard": 6.0,
    "chase": 1.5,
    "retreat": 1.0,
    "all_out_attack": 0.3,
    "all_out_defense": 0.5,
}


def glance(state: GameState, side: Faction, action: LegalAction) -> float:
    """A quick score of a turn's action for ``side`` (higher is better)."""
    score = 1.5 * action.honor
    kind = action.type
    if kind == "liturgy":
        return score + (2.5 if state.energy[side] < LOW_ENERGY else -1.0)
    if kind == "pass":
        return score - 1.0
    if kind != "move":
        return score + 1.0  # a leader's power: thunderbolt, recall
    wire = action.wire
    units, to = wire["units"], wire["to"]
    origin = state.positions[units[0]]
    climb = (BOARD.level(to) - BOARD.level(origin)) * side.forward
    score += 0.4 * (1 if climb > 0 else -1)
    enemies = state.count_in(to, side.enemy)
    if enemies:
        mine = sum(BY_NAME[u].strength for u in units)
        theirs = sum(BY_NAME[u].strength for u in state.units_in(to, side.enemy))
        score += 0.3 * (mine - theirs) + 0.5
    if side is Faction.CHTHONIANS and any(u in CHTHONIAN_LEADERS for u in units):
        distances = steps_to_palace()
        score += 1.2 * (distances[origin] - distances[to])
        if enemies:
            score -= 1.5  # a leader fights only when it must
    return score - 0.5 * action.energy / 2


def commitment(
    state: GameState, side: Faction, actions: list[LegalAction], rng: random.Random
) -> LegalAction:
    """``side``'s commitment: the Standard maneuver with the least Energy that wins against the
    enemy's Standard with all the Energy it may add without losing Honor (ties go to the
    original attacker, R8); against an enemy that would lose so and may retreat, a Chase with
    the least Energy that wins against its strongest Standard, where one does (not against
    Persephone alone: she leaves all the same); a Retreat when no amount wins and a retreat is
    open; else the Standard with no Energy (the round is lost: keep the stock). Sometimes (and
    where the strengths cannot be read) a commitment at random that costs no Honor."""
    free = [a for a in actions if a.honor == 0] or actions
    if state.combat is None or rng.random() < RANDOM_COMMITMENT:
        return _random_commitment(free, rng)
    power = strengths(state)
    enemy = side.enemy
    theirs = power[enemy].power(Maneuver.STANDARD, min(FREE_ENERGY, energy_limit(state, enemy)))
    attacker = current(state).attacker is side
    by_kind = {(a.wire["maneuver"], a.energy): a for a in actions if not a.wire.get("reveal")}
    mine = power[side]
    prey = current(state).region
    if retreat_regions(state, enemy) and state.units_in(prey, enemy) != ["Persephone"]:
        # An enemy that cannot win will retreat: hunt it with a Chase that wins (R8).
        best = power[enemy].power(Maneuver.STANDARD, energy_limit(state, enemy))
        if mine.power(Maneuver.STANDARD, FREE_ENERGY) - theirs >= (0 if attacker else 1):
            for energy in range(energy_limit(state, side) + 1):
                won = mine.power(Maneuver.CHASE, energy) - best >= (0 if attacker else 1)
                if won and ("chase", energy) in by_kind:
                    return by_kind[("chase", energy)]
    for energy in range(energy_limit(state, side) + 1):
        won = mine.power(Maneuver.STANDARD, energy) - theirs >= (0 if attacker else 1)
        if won and ("standard", energy) in by_kind:
            return by_kind[("standard", energy)]
    if retreat_regions(state, side) and ("retreat", 0) in by_kind:
        return by_kind[("retreat", 0)]
    return by_kind.get(("standard", 0)) or _random_commitment(free, rng)


def _random_commitment(free: list[LegalAction], rng: random.Random) -> LegalAction:
    weights = [MANEUVER_WEIGHTS.get(a.wire["maneuver"], 1.0) for a in free]
    return rng.choices(free, weights)[0]


def removal(actions: list[LegalAction]) -> LegalAction:
    """The weakest unit that is not a leader goes first; a leader only when it is alone."""
    return min(actions, key=lambda a: (a.wire["unit"] in LEADERS, BY_NAME[a.wire["unit"]].strength))


def playout_action(state: GameState, side: Faction, rng: random.Random) -> LegalAction | None:
    """The playout's action for ``side`` (None: it has none)."""
    if state.phase is Phase.TURN and not state.pending:
        drawn = [random_legal_action(state, side, rng) for _ in range(DRAWS)]
        found = [a for a in drawn if a is not None]
        if not found:
            return None
        return max(found, key=lambda a: glance(state, side, a) + rng.random())
    actions = legal_actions(state, side)
    if not actions:
        return None
    kind = actions[0].type
    if kind == "commit":
        return commitment(state, side, actions, rng)
    if kind == "remove_unit":
        return removal(actions)
    return rng.choice(actions)


def policy_ply(state: GameState, sides: list[Faction], rng: random.Random) -> GameState:
    """The state after each of ``sides`` (in turn) plays ``playout_action``'s action, a side
    with none passing; a refused action ends the ply where it is."""
    for side in sides:
        action = playout_action(state, side, rng)
        if action is None:
            continue
        try:
            _, state = execute(state, action.command)
        except IllegalCommand:
            break
    return state
