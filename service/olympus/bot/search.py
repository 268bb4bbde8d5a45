"""Information-Set Monte Carlo Tree Search (Cowling, Powley & Whitehouse 2012).

One tree for the seat's information set. Each iteration draws a determinization from the
seat's ``Belief``, walks the tree with the actions legal in that world (UCB1 counted over
*availability*: how often an action could have been chosen, since the enemy's actions differ
from world to world), adds one node, plays out with the cheap policy for a few plies and scores
the position (``evaluation``). Enemy actions are told apart as the seat sees them: a hidden
enemy unit by its token, never by the name the world gave it.

Sealed combat commitments (R8) are simultaneous moves: where both sides may commit and
neither sees the other's, each side picks from its own statistics (decoupled UCT) and the
pair is played together. At such a root the seat plays a mixed strategy: it draws its
commitment in proportion to the visits, so that always answering its favourite does not pay.
Elsewhere it plays the most visited action.

Turns offer up to a hundred moves: a node considers them in the order of the policy's glance
and widens progressively (``widening``), so a small budget is spent on plausible moves first.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from olympus.rules import (
    Faction,
    GameState,
    IllegalCommand,
    LegalAction,
    Phase,
    execute,
    legal_actions,
    parse_command,
)
from olympus.rules import commands as cmd
from olympus.rules.characters import FACTIONS

from .belief import Belief
from .evaluation import olympian_value
from .policy import glance, policy_ply

Key = Hashable
POLICY = (None, None)  # the child of a sealed commitment below the root: the policy's pair
EXPLORATION = 0.7
COMMIT_ENERGIES = frozenset({0, 2, 4, 6, 10})
# Which maneuvers a node tries first (R8): the plain fight, then the counters to a retreat.
MANEUVER_ORDER = {
    "standard": 0,
    "chase": 1,
    "retreat": 2,
    "all_out_defense": 3,
    "all_out_attack": 4,
}


@dataclass(frozen=True, slots=True)
class Budget:
    """How much a decision may search: iterations, a time cap (None: none) and playout plies."""

    iterations: int
    seconds: float | None
    depth: int


@dataclass(slots=True)
class Edge:
    visits: int = 0
    reward: float = 0.0
    available: int = 0


@dataclass(slots=True)
class Node:
    """A node of the information set's tree. ``listed``: each acting side's candidate actions
    (by key, likeliest first) and their commands, listed in the first world that reached the
    node; later worlds only check the one they play (listing every move of every node on
    every iteration was most of the search's time)."""

    edges: dict[Faction, dict[Key, Edge]] = field(default_factory=dict)
    children: dict[tuple[Key | None, Key | None], Node] = field(default_factory=dict)
    listed: dict[Faction, list[tuple[Key, dict[str, Any]]]] = field(default_factory=dict)
    visits: int = 0


@dataclass(frozen=True, slots=True)
class Result:
    choice: Key
    visits: dict[Key, int]
    iterations: int
    simultaneous: bool
    values: dict[Key, float] = field(default_factory=dict)  # the seat's mean reward per action


def action_key(state: GameState, actor: Faction, viewer: Faction, action: LegalAction) -> Key:
    """An action as ``viewer`` can tell it apart: the enemy's hidden units by their tokens."""
    return wire_key(state, actor, viewer, action.wire)


def wire_key(state: GameState, actor: Faction, viewer: Faction, wire: dict[str, Any]) -> Key:
    """``action_key`` of a command in its client form (a ``legal`` message's ``command``)."""
    if wire["type"] != "move":
        return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in sorted(wire.items()))
    units = wire["units"]
    if actor is not viewer:
        units = [u if u in state.revealed else state.tokens[u] for u in units]
    fields = (wire["to"], wire["fly"], tuple(wire["reveal"]), wire["use_power"])
    return ("move", tuple(units), *fields, tuple(wire["steps"]))


def candidates(state: GameState, side: Faction) -> list[LegalAction]:
    """The actions the tree considers, the likeliest first: a turn's by the policy's glance;
    commitments with Energy in steps (R8 allows every amount up to the limit; a few tell the
    strategies apart), those that cost no Honor first, the Standard maneuver first."""
    actions = legal_actions(state, side)
    if actions and actions[0].type == "commit":
        actions = [a for a in actions if a.energy in COMMIT_ENERGIES]
        actions.sort(key=_commit_order)
    elif state.phase is Phase.TURN and not state.pending:
        actions.sort(key=lambda a: -glance(state, side, a))
    return actions


def _commit_order(action: LegalAction) -> tuple[int, int, int]:
    wire = action.wire
    energy = action.energy
    return (-action.honor, MANEUVER_ORDER[wire["maneuver"]], 4 - energy if energy <= 4 else energy)


def widening(visits: int) -> int:
    """How many of a node's actions (in glance order) it considers after ``visits`` visits."""
    return 3 + int(2 * math.sqrt(visits))


def actors(state: GameState) -> list[Faction]:
    """The sides that act now: one in a turn or a choice, both at a sealed commitment."""
    if state.phase is Phase.OVER:
        return []
    if state.pending:
        return [state.pending[0].faction]
    if state.phase is Phase.TURN:
        return [state.turn]
    return [f for f in FACTIONS if legal_actions(state, f)]


def _ranked(node: Node, side: Faction, keys: list[Key]) -> list[Key]:
    """``keys`` in the order to try them: those never tried first (in ``candidates`` order),
    then by UCB1 over availability."""
    edges = node.edges.setdefault(side, {})
    fresh: list[Key] = []
    scored: list[tuple[float, int, Key]] = []
    for index, key in enumerate(keys):
        edge = edges.get(key)
        if edge is None:
            edge = edges[key] = Edge()
        edge.available += 1
        if edge.visits == 0:
            fresh.append(key)
            continue
        score = edge.reward / edge.visits + EXPLORATION * math.sqrt(
            math.log(edge.available) / edge.visits
        )
        scored.append((-score, index, key))
    scored.sort()
    return fresh + [key for _, _, key in scored]


def _command(
    state: GameState, side: Faction, viewer: Faction, key: Key, wire: dict[str, Any]
) -> cmd.Command:
    """The command of a listed action in this world: the enemy's hidden movers are the units
    under the key's tokens here."""
    if wire["type"] == "move" and side is not viewer:
        names = {t: u for u, t in state.tokens.items()}
        wire = {**wire, "units": [names.get(u, u) if isinstance(u, int) else u for u in key[1]]}
    return parse_command({**wire, "side": side.value})


def _play(
    state: GameState, viewer: Faction, turns: list[tuple[Faction, list[Key], Node]]
) -> tuple[GameState, list[tuple[Faction, Key]]]:
    """Play each side's first ranked action that is legal in this world (a world may lack an
    enemy's power, or a first commitment may have withdrawn the other: Aphrodite, R8)."""
    played: list[tuple[Faction, Key]] = []
    for side, ranking, node in turns:
        wires = dict(node.listed[side])
        for key in ranking:
            try:
                _, state = execute(state, _command(state, side, viewer, key, wires[key]))
            except (IllegalCommand, KeyError, ValueError):
                continue
            played.append((side, key))
            break
    return state, played


def playout(state: GameState, depth: int, rng: random.Random) -> float:
    """The Olympians' chance after ``depth`` plies of the playout policy from ``state``."""
    for _ in range(depth):
        sides = actors(state)
        if not sides:
            break
        state = policy_ply(state, sides, rng)
    return olympian_value(state)


def _listing(
    state: GameState,
    side: Faction,
    viewer: Faction,
    root: Node,
    node: Node,
    offered: dict[Key, Any],
) -> list[tuple[Key, dict[str, Any]]]:
    listed = [(action_key(state, side, viewer, a), a.wire) for a in candidates(state, side)]
    if node is root and side is viewer:
        listed = [(k, w) for k, w in listed if k in offered]
    return listed


def search(
    belief: Belief,
    offered: dict[Key, Any],
    budget: Budget,
    rng: random.Random,
    clock: Callable[[], float] = time.monotonic,
) -> Result:
    """Search from the seat's information set; ``offered`` are the seat's legal actions now,
    by key. Returns the chosen key, the root's visits and the iterations run."""
    seat = belief.seat
    root = Node()
    deadline = None if budget.seconds is None else clock() + budget.seconds
    simultaneous = False
    done = 0
    while done < budget.iterations:
        if deadline is not None and done > 0 and clock() > deadline:
            break
        done += 1
        state = belief.sample(rng)
        node = root
        path: list[tuple[Node, list[tuple[Faction, Key]]]] = []
        expanded = False
        while not expanded and state.phase is not Phase.OVER:
            sides = actors(state)
            if not sides:
                break
            if node is root:
                simultaneous = len(sides) == 2
            elif len(sides) == 2:  # a sealed commitment below the root: the policy's
                state = policy_ply(state, sides, rng)  # sealed: as the policy commits
                child = node.children.get(POLICY)
                if child is None:
                    child = node.children[POLICY] = Node()
                    expanded = True
                node = child
                continue
            turns = []
            for side in sides:
                listed = node.listed.get(side)
                if listed is None:
                    listed = node.listed[side] = _listing(state, side, seat, root, node, offered)
                keys = [k for k, _ in listed[: widening(node.visits)]]
                if keys:
                    turns.append((side, _ranked(node, side, keys), node))
            state, keys = _play(state, seat, turns)
            if not keys:
                break
            node.visits += 1
            path.append((node, keys))
            joint = tuple(dict(keys).get(f) for f in FACTIONS)
            child = node.children.get(joint)
            if child is None:
                child = node.children[joint] = Node()
                expanded = True
            node = child
        value = playout(state, budget.depth, rng)
        for visited, keys in path:
            for side, key in keys:
                edge = visited.edges[side][key]
                edge.visits += 1
                edge.reward += value if side is Faction.OLYMPIANS else 1.0 - value
    edges = root.edges.get(seat, {})
    visits = {k: e.visits for k, e in edges.items() if k in offered}
    values = {k: edges[k].reward / v for k, v in visits.items() if v}
    return Result(_choose(visits, edges, simultaneous, rng), visits, done, simultaneous, values)


def _choose(
    visits: dict[Key, int], edges: dict[Key, Edge], simultaneous: bool, rng: random.Random
) -> Key:
    played = [k for k, v in visits.items() if v > 0]
    if not played:
        return next(iter(visits))
    if simultaneous:  # a mixed strategy, sharpened: the rarely tried are exploration
        return rng.choices(played, [visits[k] ** 2 for k in played])[0]
    return max(played, key=lambda k: (visits[k], edges[k].reward / visits[k]))
