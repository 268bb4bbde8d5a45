"""Players outside the search's family, for the arena: they share neither its evaluation nor
its playout policy, so that beating them says something the round robin of the levels cannot.

``SensibleBot`` plays one ply of common sense read from the rulebook: it keeps its leaders out
of even fights and away from enemies as strong as they are, attacks only where it is clearly
stronger (the Olympians: at least as strong, where an enemy nears the Palace), brings a
Chthonian leader up when the way is clear, calls a Liturgy when its Energy runs low, commits
the least Energy that wins without losing Honor (a leader's life, or an enemy near the Palace,
is worth one), retreats when it is alone and outmatched, and never pays Honor without need.
``SafeBot`` prefers actions that cost no Honor, at random among them, and commits the Standard
maneuver with what it may add for free.

Both know what their seat knows: an enemy unit not revealed counts as an average one.
"""

from __future__ import annotations

import random
from typing import Any

from olympus.rules import BOARD, BY_NAME, Faction, GameState
from olympus.rules.combat import energy_limit, retreat_regions, strengths
from olympus.rules.state import Maneuver

from .evaluation import steps_to_palace
from .player import Message, Offer, _Seat

HIDDEN = 3  # what an enemy unit not revealed is taken to be worth
FREE_ENERGY = 4  # more costs 1 Honor (R8)
LOW_ENERGY = 6
LEADERS = frozenset({"Zeus", "Hades", "Persephone"})
THREAT = 3  # an enemy this near the Palace may be a leader about to win: the Olympians fight it


def _strength(state: GameState, units: list[str]) -> int:
    return sum(BY_NAME[u].strength if u in state.revealed else HIDDEN for u in units)


def _enemy_strength(state: GameState, region: int, seat: Faction) -> int:
    return _strength(state, state.units_in(region, seat.enemy))


def _removal(choices: list[Offer]) -> Message:
    unit = min(
        (c.command["unit"] for c in choices),
        key=lambda u: (u in LEADERS, BY_NAME[u].strength),
    )
    return next(c.command for c in choices if c.command["unit"] == unit)


def _by_kind(choices: list[Offer]) -> dict[tuple[str, int], Message]:
    return {
        (c.command["maneuver"], c.command["energy"]): c.command
        for c in choices
        if not c.command.get("reveal")
    }


class SensibleBot(_Seat):
    """One ply of the rulebook's common sense (see the module's docstring)."""

    def choose(self, choices: list[Offer], rng: random.Random, now_ms: int | None) -> Message:
        assert self.belief is not None
        state = self.belief.state
        kind = choices[0].type
        if kind == "commit":
            return self._commit(state, choices)
        if kind == "remove_unit":
            return _removal(choices)
        scored = [(self._score(state, c) + 0.01 * rng.random(), i) for i, c in enumerate(choices)]
        return choices[max(scored)[1]].command

    def _score(self, state: GameState, offer: Offer) -> float:
        seat = self.seat
        score = 2.0 * offer.honor
        kind = offer.type
        if kind == "liturgy":
            return score + (3.0 if state.energy[seat] < LOW_ENERGY else -2.0)
        if kind == "pass":
            return score - 1.0
        if kind != "move":
            return score + 1.0
        wire = offer.command
        units, to = wire["units"], wire["to"]
        origin = state.positions[units[0]]
        mine = sum(BY_NAME[u].strength for u in units)
        leader = any(u in LEADERS for u in units)
        if (BOARD.level(to) - BOARD.level(origin)) * seat.forward > 0:
            score += 0.5
        distances = steps_to_palace()
        if state.count_in(to, seat.enemy):
            theirs = _enemy_strength(state, to, seat)
            threat = seat is Faction.OLYMPIANS and distances[to] <= THREAT
            margin = 4 if leader else 0 if threat else 2
            if threat:  # what each side may add for free decides an even fight
                mine += min(FREE_ENERGY, state.energy[seat])
                theirs += min(FREE_ENERGY, state.energy[seat.enemy])
            if mine >= theirs + margin:
                score += 2.0 + 0.3 * (mine - theirs) + (THREAT + 1 - distances[to] if threat else 0)
            else:
                score -= 6.0 if leader else 3.0
        elif leader:
            near = [n for n in BOARD.neighbours(to) if state.count_in(n, seat.enemy)]
            if any(_enemy_strength(state, n, seat) >= mine for n in near):
                score -= 4.0
            elif seat is Faction.CHTHONIANS:
                score += 1.5 * (distances[origin] - distances[to])
        return score - 0.25 * offer.energy

    def _commit(self, state: GameState, choices: list[Offer]) -> Message:
        seat, enemy = self.seat, self.seat.enemy
        power = strengths(state)
        by_kind = _by_kind(choices)
        attacker = state.combat is not None and state.combat.attacker is seat
        theirs = power[enemy].power(Maneuver.STANDARD, min(FREE_ENERGY, energy_limit(state, enemy)))
        region = state.combat.region if state.combat is not None else None
        own = state.units_in(region, seat) if region is not None else []
        leader = any(u in LEADERS for u in own)
        threat = seat is Faction.OLYMPIANS and region is not None
        threat = threat and steps_to_palace()[region] <= THREAT  # type: ignore[index]
        most = FREE_ENERGY + (2 if leader or threat else 0)  # 1 Honor, only for these
        for energy in range(min(most, energy_limit(state, seat)) + 1):
            mine = power[seat].power(Maneuver.STANDARD, energy)
            if mine - theirs >= (0 if attacker else 1) and ("standard", energy) in by_kind:
                return by_kind[("standard", energy)]
        if retreat_regions(state, seat) and ("retreat", 0) in by_kind and (len(own) == 1 or leader):
            return by_kind[("retreat", 0)]
        free = min(FREE_ENERGY, energy_limit(state, seat))
        return by_kind.get(("standard", free)) or by_kind.get(("standard", 0)) or choices[0].command


class SafeBot(_Seat):
    """Honor-free actions at random; the Standard maneuver with the free Energy."""

    def choose(self, choices: list[Offer], rng: random.Random, now_ms: int | None) -> Message:
        assert self.belief is not None
        kind = choices[0].type
        if kind == "remove_unit":
            return _removal(choices)
        if kind == "commit":
            by_kind = _by_kind(choices)
            free = min(FREE_ENERGY, energy_limit(self.belief.state, self.seat))
            chosen: dict[str, Any] | None = by_kind.get(("standard", free))
            return chosen or by_kind.get(("standard", 0)) or choices[0].command
        best = max(c.honor for c in choices)
        safe = [c for c in choices if c.honor >= min(0, best)]
        return rng.choice(safe).command
