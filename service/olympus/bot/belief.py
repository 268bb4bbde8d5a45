"""What a seat knows, and the worlds it cannot tell apart: the bot's memory and its samples.

The bot is a seat, not an oracle (R7). It is fed only what its seat's socket receives: the
seat's ``view`` once, then each ``event`` as ``observe_event`` wrote it for the seat. From these
it keeps a *working state*: a whole ``GameState`` folded by the rules' own ``evolve``, in which
each hidden enemy unit carries some label (a name of its faction) that the seat cannot check.
Beside it, for every enemy token on the board, the set of characters it may be (``candidates``):
narrowed by the setup rules (R2: with Random Setup the leader starts in or next to its base),
by reveals, eliminations and recalls, and widened when a region goes back into hiding (R7: its
new tokens may be any of the units that stood there).

``sample`` draws one world consistent with all of that: a distinct character for every enemy
token, every character known to be alive on the board among them; the working state relabelled
with it is a *determinization*, a state the rules can play on. A sealed enemy commitment the
seat has not seen is left out of it: the search treats the two commitments as simultaneous.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

from olympus.rules import BOARD, BY_NAME, Faction, GameState, Options, Phase, evolve
from olympus.rules import events as ev
from olympus.rules.characters import LEADER, ROSTER
from olympus.rules.state import Combat, Commitment, Maneuver, Step, StepKind

View = dict[str, Any]


class Belief:
    """One seat's memory of a game: the working state and the candidates of enemy tokens."""

    def __init__(self, seat: Faction, state: GameState) -> None:
        self.seat = seat
        self.enemy = seat.enemy
        self.state = state
        self.candidates: dict[int, frozenset[str]] = {}
        self.known: set[str] = set()  # enemy characters known to be alive on the board

    # --- building -------------------------------------------------------------------------------

    @classmethod
    def from_view(cls, seat: Faction, data: View) -> Belief:
        """The memory of a seat that starts from ``view(state, seat)``.

        From a view of a game under way the enemy's candidates are everything not known to be
        elsewhere (the history that narrowed them is not in a view): the bot starts from the
        first view of a game, or replays its seat's events from the first (``observe``).
        """
        options = Options(
            open_combat=data["options"]["open_combat"],
            random_setup=data["options"]["random_setup"],
            chthonian_honor=data["options"]["chthonian_honor"],
        )
        enemy = seat.enemy
        positions: dict[str, int] = {}
        tokens: dict[str, int] = {}
        revealed: set[str] = set()
        known = {u["name"] for u in data["units"] if u["side"] == enemy.value and u["name"]}
        eliminated = tuple(data["eliminated"])
        pool = frozenset(u for u in ROSTER[enemy] if u not in known and u not in eliminated)
        spare = sorted(pool, key=ROSTER[enemy].index)
        candidates: dict[int, frozenset[str]] = {}
        for unit in data["units"]:
            name = unit["name"]
            if unit["side"] == enemy.value:
                if name is None:
                    name = spare.pop(0)
                    candidates[unit["token"]] = pool
                else:
                    revealed.add(name)
                    candidates[unit["token"]] = frozenset({name})
            elif unit.get("revealed"):
                revealed.add(name)
            positions[name] = unit["region"]
            tokens[name] = unit["token"]
        combat = None
        if "combat" in data:
            c = data["combat"]
            commitments = {
                Faction(f): Commitment(Maneuver(m["maneuver"]), m["energy"])
                for f, m in c["commitments"].items()
                if m is not None
            }
            attacker = Faction(c["attacker"])
            combat = Combat(c["region"], attacker, c["origin"], c["round"], commitments)
        pending: tuple[Step, ...] = ()
        if "pending" in data:
            p = data["pending"]
            pending = (Step(StepKind(p["kind"]), Faction(p["side"]), p["region"]),)
        setups = {}
        if data.get("setup", {}).get("mine"):
            setups[seat] = dict(data["setup"]["mine"])
        state = GameState(
            options=options,
            phase=Phase(data["phase"]),
            turn=Faction(data["turn"]),
            turn_number=data["turn_number"],
            honor={Faction(f): h for f, h in data["honor"].items()},
            energy={Faction(f): e for f, e in data["energy"].items()},
            positions=positions,
            picked=frozenset(positions) | frozenset(data.get("picked", ())) | set(eliminated),
            revealed=frozenset(revealed | set(eliminated)),
            eliminated=eliminated,
            setups=setups,
            combat=combat,
            pending=pending,
            tokens=tokens,
            next_token=max(tokens.values(), default=0) + 1,
            deadlines=dict(data.get("deadlines", {})),
        )
        belief = cls(seat, state)
        belief.candidates = candidates
        belief.known = set(known) | ({LEADER[enemy]} - set(eliminated))
        return belief

    # --- folding the seat's events --------------------------------------------------------------

    def observe(self, data: View) -> None:
        """Fold one event as the seat received it (``observe_event``'s dict)."""
        kind = data["t"]
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, data)
        else:
            self._fold(ev.from_dict(data))

    def _fold(self, event: ev.Event) -> None:
        self.state = evolve(self.state, event)

    def _label(self, unit: View) -> str:
        """The working state's name for a unit as the seat sees it (its own, or a token)."""
        if unit["side"] == self.seat.value:
            return unit["name"]
        return self._by_token(unit["token"])

    def _by_token(self, token: int) -> str:
        for name, t in self.state.tokens.items():
            if t == token and BY_NAME[name].faction is self.enemy:
                return name
        raise KeyError(f"no enemy unit under token {token}")

    def _with_units(self, data: View) -> View:
        """The event with its unit views turned into the working state's names."""
        return {**data, "units": [self._label(u) for u in data["units"]]}

    def _name_token(self, token: int, name: str) -> None:
        """The enemy unit under ``token`` is ``name``: relabel the working state to say so."""
        label = self._by_token(token)
        if label != name:
            self.state = relabel(self.state, {label: name, name: label})
        self.candidates[token] = frozenset({name})
        for other, names in self.candidates.items():
            if other != token and name in names:
                self.candidates[other] = names - {name}
        self.known.add(name)

    def _game_created(self, data: View) -> None:
        self._fold(ev.from_dict(data))

    def _setup_submitted(self, data: View) -> None:
        if "placements" in data:
            self._fold(ev.from_dict(data))

    def _setup_revealed(self, data: View) -> None:
        enemy_units = [u for u in data["units"] if u["side"] == self.enemy.value]
        roster = ROSTER[self.enemy]
        leader = LEADER[self.enemy]
        near_base = {self.enemy.base} | BOARD.neighbours(self.enemy.base)
        # working labels: the leader where the setup rules allow it, then the roster in order
        ordered = sorted(enemy_units, key=lambda u: (u["region"] not in near_base, u["region"]))
        names = [leader, *[u for u in roster if u != leader][: len(ordered) - 1]]
        placements = {name: unit["region"] for name, unit in zip(names, ordered, strict=True)}
        self._fold(ev.SetupSubmitted(faction=self.enemy, placements=placements))
        self._fold(ev.SetupRevealed())
        for unit in enemy_units:
            names_here = frozenset(roster)
            if self.state.options.random_setup and unit["region"] not in near_base:
                names_here -= {leader}  # R2: the leader starts in or next to its base
            self.candidates[unit["token"]] = names_here
        self.known = {leader}
        assert {u["token"] for u in enemy_units} == {self.state.tokens[n] for n in placements}, (
            "tokens are drawn from the public setup regions"
        )

    def _units_revealed(self, data: View) -> None:
        for unit in data["units"]:
            if unit["side"] == self.enemy.value:
                self._name_token(unit["token"], unit["name"])
        self._fold(ev.UnitsRevealed(units=tuple(self._label(u) for u in data["units"])))

    def _units_hidden(self, data: View) -> None:
        region = data["units"][0]["region"]
        old = [u for u in self.state.units_in(region, self.enemy)]
        new_tokens = sorted(u["token"] for u in data["units"] if u["side"] == self.enemy.value)
        tokens = {u["name"]: u["token"] for u in data["units"] if u["side"] == self.seat.value}
        pool = frozenset().union(*(self.candidates.pop(self.state.tokens[u]) for u in old))
        tokens.update(zip(old, new_tokens, strict=True))
        for token in new_tokens:
            self.candidates[token] = pool
        self._fold(ev.UnitsHidden(units=tuple(tokens), tokens=tokens))

    def _units_moved(self, data: View) -> None:
        self._fold(ev.from_dict(self._with_units(data)))

    def _unit_eliminated(self, data: View) -> None:
        name = data["unit"]
        if BY_NAME[name].faction is self.enemy:
            if data.get("token") is not None:
                self._name_token(data["token"], name)
                del self.candidates[data["token"]]
            self.known.discard(name)
            for token, names in self.candidates.items():
                self.candidates[token] = names - {name}
        self._fold(ev.from_dict(data))

    def _unit_recalled(self, data: View) -> None:
        self._fold(ev.from_dict(data))
        if BY_NAME[data["unit"]].faction is self.enemy:
            self.candidates[data["token"]] = frozenset({data["unit"]})
            self.known.add(data["unit"])

    def _combat_committed(self, data: View) -> None:
        if "maneuver" in data:  # the seat's own, or one the rules let it see (Athena, R8)
            self._fold(ev.from_dict(data))

    # --- sampling -------------------------------------------------------------------------------

    def sample(self, rng: random.Random) -> GameState:
        """A determinization: the working state with a world drawn for the hidden enemy units."""
        return relabel(self.determinized_base(), self.draw(rng))

    def determinized_base(self) -> GameState:
        """The working state as the search plays it: no clocks (the search does not read one)."""
        state = self.state
        options = replace(state.options, move_seconds=None, commit_seconds=None)
        return state.evolved({"options": replace(options, forfeit_seconds=None), "deadlines": {}})

    def draw(self, rng: random.Random) -> dict[str, str]:
        """A relabelling of the working state's enemy units: a distinct character per token,
        from its candidates, with every character known alive among them."""
        by_token = {t: n for n, t in self.state.tokens.items() if BY_NAME[n].faction is self.enemy}
        order = sorted(self.candidates, key=lambda t: (len(self.candidates[t]), t))
        choice = _assign(order, self.candidates, frozenset(self.known), rng)
        if choice is None:  # cannot happen with consistent observations; keep the labels
            return {}
        mapping = {by_token[t]: name for t, name in choice.items()}
        return _complete(mapping)


def _assign(
    order: list[int],
    candidates: dict[int, frozenset[str]],
    required: frozenset[str],
    rng: random.Random,
) -> dict[int, str] | None:
    """Distinct names for the tokens of ``order``, each from its candidates, covering
    ``required``; the names tried in a random order (depth first, pruned)."""
    chosen: dict[int, str] = {}
    used: set[str] = set()

    def feasible(index: int) -> bool:
        missing = required - used
        rest = order[index:]
        if len(missing) > len(rest):
            return False
        return all(any(name in candidates[t] for t in rest) for name in missing)

    def place(index: int) -> bool:
        if index == len(order):
            return required <= used
        token = order[index]
        names = sorted(candidates[token] - used)
        rng.shuffle(names)
        for name in names:
            chosen[token] = name
            used.add(name)
            if feasible(index + 1) and place(index + 1):
                return True
            used.discard(name)
            del chosen[token]
        return False

    return dict(chosen) if place(0) else None


def _complete(mapping: dict[str, str]) -> dict[str, str]:
    """Make a relabelling a permutation: a label replaced by a name that was another label's
    gets that label's old place in the cycle (``relabel`` renames all at once)."""
    targets = set(mapping.values())
    free = sorted(set(mapping) - targets)
    for name in sorted(targets - set(mapping)):
        mapping[name] = free.pop(0)
    return mapping


def relabel(state: GameState, mapping: dict[str, str]) -> GameState:
    """The state with units renamed by ``mapping`` (a permutation of names): every field that
    names a unit. The rules see another world; the seat could not tell the two apart."""
    if not mapping:
        return state

    def name(unit: str) -> str:
        return mapping.get(unit, unit)

    return state.evolved(
        {
            "positions": {name(u): r for u, r in state.positions.items()},
            "tokens": {name(u): t for u, t in state.tokens.items()},
            "picked": frozenset(map(name, state.picked)),
            "revealed": frozenset(map(name, state.revealed)),
            "eliminated": tuple(map(name, state.eliminated)),
            "unrecallable": frozenset(map(name, state.unrecallable)),
            "setups": {f: {name(u): r for u, r in p.items()} for f, p in state.setups.items()},
        }
    )


_HANDLERS = {
    "game_created": Belief._game_created,
    "setup_submitted": Belief._setup_submitted,
    "setup_revealed": Belief._setup_revealed,
    "units_revealed": Belief._units_revealed,
    "units_hidden": Belief._units_hidden,
    "units_moved": Belief._units_moved,
    "units_retreated": Belief._units_moved,
    "unit_eliminated": Belief._unit_eliminated,
    "unit_recalled": Belief._unit_recalled,
    "combat_committed": Belief._combat_committed,
}
