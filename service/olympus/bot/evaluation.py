"""How good a position looks when a playout stops early: the Olympians' chance, 0…1.

A finished game is worth its result. Otherwise a weighted sum of what decides games (R11):
Honor (and how close each side is to losing it all), the strength left on the board, the
leaders alive (the Olympians win when no Chthonian leader is left; Zeus throws thunderbolts)
and exposed (next to Olympians who outfight them),
Energy (worth more while a side has little: a Liturgy pays for itself then, not later), and
the Chthonian leaders' distance to the Palace, squashed by a logistic curve. The weights are
hand-set; the arena (bench/bot_arena.py) is where they are judged.
"""

from __future__ import annotations

import math
from collections import deque
from functools import cache

from olympus.rules import BOARD, BY_NAME, PALACE, Faction, GameState, Phase

CHTHONIAN_LEADERS = ("Hades", "Persephone")
OLYMPIANS, CHTHONIANS = Faction.OLYMPIANS, Faction.CHTHONIANS

HONOR = 0.35  # per point of Honor difference
DANGER = 0.6  # per point under DANGER_LINE, on top: losing the last points loses the game
DANGER_LINE = 5
STRENGTH = 0.25  # per point of nominal strength on the board: a unit of 3 is worth 2 Honor
ENERGY = 0.04  # per point of Energy
ENERGY_LOW = 0.12  # per point of Energy under ENERGY_LINE, on top: a side without it loses fights
ENERGY_LINE = 12  # two rounds of a lone unit's most (R8)
DISTANCE = 0.5  # per step of the nearest Chthonian leader from the Palace
LEADER = 2.5  # per Chthonian leader alive: the last one lost loses the game (R11)
ZEUS = 1.0  # Zeus alive: his strength counts too, this is his thunderbolt (R10)
EXPOSED = 1.2  # per Chthonian leader next to Olympians who outfight its region (the last: twice)
ENERGY_PER_UNIT = 6  # what a unit may add to a round (R8)
SCALE = 4.0


@cache
def steps_to_palace() -> tuple[int, ...]:
    """Steps from each region to the Palace (breadth first over the board)."""
    distance = [len(BOARD.regions)] * len(BOARD.regions)
    distance[PALACE] = 0
    queue = deque([PALACE])
    while queue:
        region = queue.popleft()
        for n in BOARD.neighbours(region):
            if distance[n] > distance[region] + 1:
                distance[n] = distance[region] + 1
                queue.append(n)
    return tuple(distance)


def olympian_value(state: GameState) -> float:
    """The Olympians' chance of winning from ``state``, as estimated without playing on."""
    if state.phase is Phase.OVER:
        return {"olympians": 1.0, "chthonians": 0.0}.get(state.result or "draw", 0.5)
    honor_o, honor_c = state.honor[OLYMPIANS], state.honor[CHTHONIANS]
    score = HONOR * (honor_o - honor_c)
    score -= DANGER * (max(0, DANGER_LINE - honor_o) - max(0, DANGER_LINE - honor_c))
    strength = 0
    for unit in state.positions:
        character = BY_NAME[unit]
        strength += character.strength if character.faction is OLYMPIANS else -character.strength
    score += STRENGTH * strength
    energy_o, energy_c = state.energy[OLYMPIANS], state.energy[CHTHONIANS]
    score += ENERGY * (energy_o - energy_c)
    score += ENERGY_LOW * (min(energy_o, ENERGY_LINE) - min(energy_c, ENERGY_LINE))
    distances = steps_to_palace()
    leaders = [state.positions[u] for u in CHTHONIAN_LEADERS if u in state.positions]
    score -= LEADER * len(leaders)
    exposed = sum(_exposed(state, r, energy_o, energy_c) for r in leaders)
    score += EXPOSED * exposed * (2 if len(leaders) == 1 else 1)
    if "Zeus" in state.positions:
        score += ZEUS
    if leaders:
        score += DISTANCE * (min(distances[r] for r in leaders) - 4)
    return 1.0 / (1.0 + math.exp(-score / SCALE))


def _exposed(state: GameState, region: int, energy_o: int, energy_c: int) -> bool:
    """An Olympian group next to ``region`` outfights the Chthonians there, each side with the
    Energy it may add to a round (R8): the leader there may be attacked and lost."""
    own = state.units_in(region, CHTHONIANS)
    defence = sum(BY_NAME[u].strength for u in own) + min(energy_c, ENERGY_PER_UNIT * len(own))
    for neighbour in BOARD.neighbours(region):
        enemies = state.units_in(neighbour, OLYMPIANS)
        if enemies:
            most = min(energy_o, ENERGY_PER_UNIT * len(enemies))
            if sum(BY_NAME[u].strength for u in enemies) + most >= defence:
                return True
    return False


def value(state: GameState, side: Faction) -> float:
    """``side``'s chance of winning from ``state`` (a draw counts half)."""
    v = olympian_value(state)
    return v if side is OLYMPIANS else 1.0 - v
