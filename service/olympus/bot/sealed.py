"""A sealed commitment (R8) as the matrix game it is.

Both sides commit without seeing the other's choice, so the seat's best answer is a mixed
strategy over its commitments against the enemy's. The tree's decoupled statistics estimate it
poorly at the root: with some thirty commitments a side and a few hundred iterations, each
pair is tried about once, the visits come out nearly even and a draw in proportion to them is
close to a random commitment. Here every pair of commitments (the seat's, the enemy's) is a
cell: each iteration plays one cell in a sampled world, both commitments together, then the
rest of the combat with the playout policy, and scores the position where the combat ends
(``evaluation``). The round itself is exact (every combatant is revealed, R8); a cell's value is
what the combat does to the game, not the noise of the random moves after it (with one or two
tries a cell, that noise was larger than an eliminated unit or two Honor). Regret matching
on the means solves the game; the seat draws its commitment from the solution, leaving out
what it plays rarely (noise, not strategy).

When the budget cannot try every pair, each side keeps its likeliest commitments (the search's
order: no Honor cost first, the Standard maneuver first).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from olympus.rules import Faction, GameState, IllegalCommand, Phase, execute, parse_command

from .belief import Belief
from .evaluation import olympian_value
from .policy import policy_ply
from .search import Budget, Key, Result, action_key, actors, candidates, search

SOLVER_ROUNDS = 300
RARE = 0.1  # a commitment the solution plays less often than this is left out of the draw


def solve(
    matrix: list[list[float]], rounds: int = SOLVER_ROUNDS
) -> tuple[list[float], list[float]]:
    """Approximate equilibrium strategies of a zero-sum game, ``matrix[i][j]`` the row
    player's payoff: the average strategies of regret matching (Hart & Mas-Colell 2000)."""
    rows, cols = len(matrix), len(matrix[0])
    regret_r, regret_c = [0.0] * rows, [0.0] * cols
    sum_r, sum_c = [0.0] * rows, [0.0] * cols
    for _ in range(rounds):
        p = _strategy(regret_r)
        q = _strategy(regret_c)
        row_values = [sum(m[j] * q[j] for j in range(cols)) for m in matrix]
        col_values = [sum(p[i] * matrix[i][j] for i in range(rows)) for j in range(cols)]
        value = sum(p[i] * row_values[i] for i in range(rows))
        for i in range(rows):
            regret_r[i] += row_values[i] - value
            sum_r[i] += p[i]
        for j in range(cols):
            regret_c[j] += value - col_values[j]
            sum_c[j] += q[j]
    return _normal(sum_r), _normal(sum_c)


def _strategy(regret: list[float]) -> list[float]:
    positive = [max(0.0, r) for r in regret]
    total = sum(positive)
    return [r / total for r in positive] if total > 0 else [1.0 / len(regret)] * len(regret)


def _normal(weights: list[float]) -> list[float]:
    total = sum(weights)
    return [w / total for w in weights]


def _options(state: GameState, side: Faction, viewer: Faction, keep: dict[Key, Any] | None):
    listed = [(action_key(state, side, viewer, a), a.wire) for a in candidates(state, side)]
    return [(k, w) for k, w in listed if keep is None or k in keep]


def sealed_search(
    belief: Belief,
    offered: dict[Key, Any],
    budget: Budget,
    rng: random.Random,
    clock: Callable[[], float],
) -> Result:
    """The seat's commitment at a sealed root: ``budget.iterations`` cells played (fewer when
    the time cap stops it), the game solved, the commitment drawn from the solution."""
    seat, enemy = belief.seat, belief.seat.enemy
    first = belief.sample(rng)
    mine = _options(first, seat, seat, offered)
    theirs = _options(first, enemy, seat, None)
    if not mine or not theirs:  # the enemy has committed after all: no game to solve
        return search(belief, offered, budget, rng, clock)
    width = max(1, int(math.sqrt(budget.iterations)))
    if len(mine) * len(theirs) > budget.iterations:
        mine, theirs = mine[: max(width, budget.iterations // len(theirs))], theirs[:width]
        if len(mine) * len(theirs) > budget.iterations:
            mine = mine[: max(1, budget.iterations // len(theirs))]
    total = [[0.0] * len(theirs) for _ in mine]
    counts = [[0] * len(theirs) for _ in mine]
    cells = [(i, j) for i in range(len(mine)) for j in range(len(theirs))]
    deadline = None if budget.seconds is None else clock() + budget.seconds
    done = 0
    for n in range(budget.iterations):
        if deadline is not None and n >= len(cells) and clock() > deadline:
            break
        i, j = cells[n % len(cells)]
        state = first if n == 0 else belief.sample(rng)
        try:
            for side, wire in ((seat, mine[i][1]), (enemy, theirs[j][1])):
                _, state = execute(state, parse_command({**wire, "side": side.value}))
        except IllegalCommand:
            continue  # a commitment this world does not offer (a hidden neighbour's power)
        value = settle(state, budget.depth, rng)
        total[i][j] += value if seat is Faction.OLYMPIANS else 1.0 - value
        counts[i][j] += 1
        done += 1
    matrix = [_means(total[i], counts[i]) for i in range(len(mine))]
    p, q = solve(matrix)
    values = {
        mine[i][0]: sum(matrix[i][j] * q[j] for j in range(len(theirs))) for i in range(len(mine))
    }
    weights = {mine[i][0]: p[i] for i in range(len(mine))}
    kept = [k for k, w in weights.items() if w >= RARE] or [max(weights, key=weights.__getitem__)]
    choice = rng.choices(kept, [weights[k] for k in kept])[0]
    visits = {k: round(w * done) for k, w in weights.items()}
    return Result(choice, visits, done, True, values)


def settle(state: GameState, depth: int, rng: random.Random) -> float:
    """The Olympians' chance once the combat under way is over (at most ``depth`` plies of
    the playout policy)."""
    for _ in range(depth):
        if state.phase is not Phase.COMBAT and not state.pending:
            break
        state = policy_ply(state, actors(state), rng)
    return olympian_value(state)


def _means(total: list[float], counts: list[int]) -> list[float]:
    """A row's cell means; a cell never played counts as the row's mean of those that were."""
    played = [t / c for t, c in zip(total, counts, strict=True) if c]
    fallback = sum(played) / len(played) if played else 0.5
    return [t / c if c else fallback for t, c in zip(total, counts, strict=True)]


def decide(
    belief: Belief,
    offered: dict[Key, Any],
    budget: Budget,
    rng: random.Random,
    clock: Callable[[], float],
) -> Result:
    """The seat's decision: the matrix game where both sides commit sealed (R8), the tree
    search (``search``) everywhere else."""
    if len(actors(belief.state)) == 2:
        return sealed_search(belief, offered, budget, rng, clock)
    return search(belief, offered, budget, rng, clock)
