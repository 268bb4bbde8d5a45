"""Hiding must be real (R7): what a seat receives never depends on what it may not know.

``olympus.rules.observation`` turns the state and each event into what a seat (or a spectator)
receives. The property tests here play two games that differ only in a secret of one side and
check that the other seat and a spectator receive byte-identical observations, event by event,
until the difference is legitimately revealed:

- the identities of hidden units: game B is game A with two characters of the hidden side
  exchanged in the setup and in every command. Either one picked character is replaced by one the
  side left out (R7: the opponent never learns which 3 were left out), or two picked characters
  swap places (the opponent does not know which hidden unit is which);
- a sealed commitment: the side that commits first commits something else (R8);
- a sealed setup: the side that submits first places other characters elsewhere (R2).

Game A is a random legal game (``olympus.bots``); game B replays A's commands renamed, so both stay
command for command parallel on the board. Comparison stops before the first command in which
either game discloses the secret: a unit of the pair revealed or eliminated, the end of the game
(everything is shown then), or a thunderbolt on a region where one of the pair stands whose power
answers thunderbolts while hidden (Cerberus wastes it, Hecate gains 6 Energy: the rules make that
public). A command refused in B is only acceptable in such a disclosing command. Besides the
observations, the views and the observer's legal actions must be the same after every command.

Fresh tokens (R7, D2) are drawn from a secret seed that both games share, in the R1 order of the
units hidden together; the pairs are chosen so that the renaming keeps every such order (see
``pairs``). Two swapped units hidden together get each other's tokens, which says nothing to a
seat that does not know the seed but ends byte identity: the comparison stops there too. That
the shuffle itself is fair is checked on its own (test_fresh_tokens_do_not_follow_the_characters).
"""

from __future__ import annotations

import copy
import importlib
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from olympus.bots import play_random_game, random_setup
from olympus.rules import (
    Faction,
    GameState,
    IllegalCommand,
    Options,
    Phase,
    create,
    execute,
    legal_actions,
    parse_command,
    replay,
)
from olympus.rules import commands as cmd
from olympus.rules import events as ev
from olympus.rules.characters import BY_NAME, LEADER, ORDER, ROSTER
from olympus.rules.combat import sees_commitment
from olympus.rules.observation import observe_event, view
from olympus.rules.powers import POWERS, Power
from olympus.scenario import build

_O, _C = Faction.OLYMPIANS, Faction.CHTHONIANS
MAX_COMMANDS = 250  # game A; the comparison usually stops long before (a disclosure)
EXAMPLES = 60

# Powers that act on a thunderbolt while their unit stays hidden (R10): the effect is public.
THUNDERBOLT_SENSITIVE = frozenset(
    u
    for u, p in POWERS.items()
    if type(p).on_thunderbolt is not Power.on_thunderbolt
    or type(p).thunderbolt_immune is not Power.thunderbolt_immune
)
NOT_IN_PAIRS = frozenset(LEADER.values())  # always picked; their powers act in the open


def _json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)


def _observed(seat: Faction | None, event: ev.Event, before: GameState, after: GameState) -> str:
    return _json(observe_event(event, seat, before, after))


def _folded(
    state: GameState, events: list[ev.Event]
) -> Iterator[tuple[ev.Event, GameState, GameState]]:
    """Each event with the states before and after it."""
    for event in events:
        after = replay([event], state)
        yield event, state, after
        state = after


# --- renaming a game ---------------------------------------------------------------------------


def rename(command: cmd.Command, mapping: dict[str, str]) -> cmd.Command:
    """The same command with units renamed (setup placements, movers, reveals, choices)."""
    data = command.model_dump(mode="json")
    for key in ("units", "reveal"):
        if key in data:
            data[key] = [mapping.get(u, u) for u in data[key]]
    if "unit" in data:
        data["unit"] = mapping.get(data["unit"], data["unit"])
    if "placements" in data:
        data["placements"] = {mapping.get(u, u): r for u, r in data["placements"].items()}
    return parse_command(data)


def _between(a: str, b: str, picked: set[str]) -> bool:
    """Whether a picked character sits strictly between ``a`` and ``b`` in the R1 order."""
    low, high = sorted((ORDER[a], ORDER[b]))
    return any(low < ORDER[u] < high for u in picked)


def pairs(hidden: Faction, picked: set[str]) -> list[tuple[str, str, str]]:
    """Pairs ``(kind, x, y)`` whose exchange keeps both games parallel.

    ``substitute``: x picked, y left out. ``swap``: both picked. No picked unit may sit between
    them in the R1 order, so every R1-ordered list (the units of a region) keeps its order of
    positions (for a swap: unless both are in it): the secret token shuffle (R7) then gives the
    same token to the same position in both games.
    """
    mine = {u for u in picked if BY_NAME[u].faction is hidden}
    candidates = sorted(mine - NOT_IN_PAIRS, key=ORDER.__getitem__)
    left_out = sorted(set(ROSTER[hidden]) - mine - NOT_IN_PAIRS, key=ORDER.__getitem__)
    found = []
    for x in candidates:
        others = mine - {x}
        found += [("substitute", x, y) for y in left_out if not _between(x, y, others)]
        found += [
            ("swap", x, y) for y in candidates if ORDER[y] > ORDER[x] and not _between(x, y, mine)
        ]
    return found


@dataclass
class Comparison:
    commands: int  # commands compared before the disclosure (or the end of game A)
    events: int
    reason: str


def _disclosure(
    event: ev.Event, before: GameState, after: GameState, pair: set[str], swap: bool
) -> str | None:
    """Why this event ends the comparison, if it does."""
    if after.phase is Phase.OVER:
        return "game over"
    if pair & after.revealed:  # eliminated units are revealed too
        return "revealed"
    if isinstance(event, ev.ThunderboltThrown) and (
        pair & set(before.units_in(event.region)) & THUNDERBOLT_SENSITIVE
    ):
        return "thunderbolt"
    if swap and isinstance(event, ev.UnitsHidden) and pair <= set(event.units):
        # Both of the pair hidden together: the fresh tokens come from the secret seed in R1
        # order, so with the same seed in both games the two get each other's tokens. The seat
        # does not know the seed, so this tells it nothing, but byte identity ends here.
        return "hidden together"
    return None


def compare_games(
    created: ev.Event,
    commands: list[cmd.Command],
    mapping: dict[str, str],
    observer: Faction,
    swap: bool,
) -> Comparison:
    """Replay ``commands`` (A) and their renaming (B) side by side; assert that ``observer`` and
    a spectator observe the same until the pair's secret is disclosed."""
    pair = set(mapping)
    a = b = replay([created])
    seats = (observer, None)
    count = 0
    for index, command in enumerate(commands):
        events_a, after_a = execute(a, command)
        try:
            events_b, after_b = execute(b, rename(command, mapping))
        except IllegalCommand as error:
            events_b, after_b, refused = [], b, error
        else:
            refused = None
        reasons = [
            _disclosure(e, s, t, pair, swap)
            for events, start in ((events_a, a), (events_b, b))
            for e, s, t in _folded(start, events)
        ]
        reason = next((r for r in reasons if r), None)
        if reason:
            return Comparison(index, count, reason)
        assert refused is None, f"command {index} {command!r} refused only in B: {refused!r}"
        where = f"command {index} {command!r}"
        seen_a = [
            [_observed(seat, e, s, t) for seat in seats] + [_json(view(t, seat)) for seat in seats]
            for e, s, t in _folded(a, events_a)
        ]
        seen_b = [
            [_observed(seat, e, s, t) for seat in seats] + [_json(view(t, seat)) for seat in seats]
            for e, s, t in _folded(b, events_b)
        ]
        assert len(seen_a) == len(seen_b), f"{where}: {len(seen_a)} vs {len(seen_b)} events"
        for i, (x, y) in enumerate(zip(seen_a, seen_b, strict=True)):
            assert x == y, f"{where}, event {i} ({events_a[i]} / {events_b[i]}):\n{x}\n{y}"
        legal_a = [
            (act.command.model_dump(), act.honor, act.energy)
            for act in legal_actions(after_a, observer)
        ]
        legal_b = [
            (act.command.model_dump(), act.honor, act.energy)
            for act in legal_actions(after_b, observer)
        ]
        assert legal_a == legal_b, f"{where}: the observer's legal actions differ"
        count += len(events_a)
        a, b = after_a, after_b
    return Comparison(len(commands), count, "end of game A")


def _game(seed: int, open_combat: bool, honor: int) -> tuple[list[ev.Event], list[cmd.Command]]:
    options = Options(open_combat=open_combat, chthonian_honor=honor)
    events, _, commands = play_random_game(random.Random(seed), options, MAX_COMMANDS)
    return events, commands


# --- the property tests ----------------------------------------------------------------------


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    seed=st.integers(0, 2**64 - 1),
    open_combat=st.booleans(),
    honor=st.integers(-5, 5),
    hidden=st.sampled_from([_C, _C, _O]),
    data=st.data(),
)
def test_hidden_identities_are_not_observed(
    seed: int, open_combat: bool, honor: int, hidden: Faction, data: st.DataObject
) -> None:
    """Exchanging two characters of the hidden side changes nothing the other seat or a
    spectator receives, until one of them is revealed (R7)."""
    events, commands = _game(seed, open_combat, honor)
    setup = next(c for c in commands if isinstance(c, cmd.SubmitSetup) and c.side is hidden)
    choices = pairs(hidden, set(setup.placements))
    assume(choices)
    kind, x, y = data.draw(st.sampled_from(choices), label="pair")
    compare_games(events[0], commands, {x: y, y: x}, hidden.enemy, kind == "swap")


def test_the_identity_comparisons_are_not_vacuous() -> None:
    """A guard on the generator: over fixed seeds, the games stay parallel for a good while
    before the pair is disclosed, so the property above compares real play."""
    compared = []
    for seed in range(8):
        hidden = (_C, _O)[seed % 2]
        events, commands = _game(seed, seed % 3 == 0, 0)
        setup = next(c for c in commands if isinstance(c, cmd.SubmitSetup) and c.side is hidden)
        for kind, x, y in pairs(hidden, set(setup.placements))[::3]:
            result = compare_games(events[0], commands, {x: y, y: x}, hidden.enemy, kind == "swap")
            compared.append(result.commands)
    assert len(compared) >= 20, compared
    assert sum(compared) / len(compared) >= 10, compared  # commands compared per pair, on average
    assert max(compared) >= 40, compared


def check_sealed_commitments(events: list[ev.Event], commands: list[cmd.Command], pick: Any) -> int:
    """At every commitment made first and hidden from the opponent, commit something else
    instead (``pick`` chooses it among the legal ones) and compare what the opponent and a
    spectator receive. Returns how many commitments were compared."""
    state = replay(events[:1])
    checked = 0
    for command in commands:
        events_a, after_a = execute(state, command)
        combat = state.combat
        if isinstance(command, cmd.Commit) and not command.reveal and combat is not None:
            side = command.side
            assert side is not None
            observer = side.enemy
            others = [
                act.command
                for act in legal_actions(state, side)
                if isinstance(act.command, cmd.Commit)
                and not act.command.reveal
                and (act.command.maneuver, act.command.energy) != (command.maneuver, command.energy)
            ]
            if not combat.commitments and others and not sees_commitment(after_a, observer):
                other = pick(others)
                events_b, after_b = execute(state, other)
                assert len(events_a) == len(events_b) == 1, (events_a, events_b)
                for seat in (observer, None):
                    sealed = observe_event(events_a[0], seat, state, after_a)
                    assert "maneuver" not in sealed and "energy" not in sealed, sealed
                    assert _observed(seat, events_a[0], state, after_a) == _observed(
                        seat, events_b[0], state, after_b
                    )
                    assert _json(view(after_a, seat)) == _json(view(after_b, seat))
                assert [a.command for a in legal_actions(after_a, observer)] == [
                    a.command for a in legal_actions(after_b, observer)
                ]
                checked += 1
        state = after_a
    return checked


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**64 - 1), open_combat=st.booleans(), data=st.data())
def test_sealed_commitments_are_not_observed(
    seed: int, open_combat: bool, data: st.DataObject
) -> None:
    """R8: a commitment made first and not shown to the opponent (no Open Combat order, no Athena)
    reaches the opponent and spectators the same whatever it is: no maneuver, no Energy, no other
    event, the same view and the same legal actions."""
    events, commands = _game(seed, open_combat, 0)
    check_sealed_commitments(
        events, commands, lambda others: data.draw(st.sampled_from(others), label="other")
    )


def test_the_commitment_comparisons_are_not_vacuous() -> None:
    rng = random.Random(0)
    checked = sum(
        check_sealed_commitments(*_game(seed, seed % 2 == 0, 0), rng.choice) for seed in range(6)
    )
    assert checked >= 10, checked


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**64 - 1),
    first=st.sampled_from(list(Faction)),
    open_combat=st.booleans(),
)
def test_a_sealed_setup_is_not_observed(seed: int, first: Faction, open_combat: bool) -> None:
    """R2: before both setups are in, the opponent and spectators see that a setup was submitted,
    never what it holds: two different setups look the same to them."""
    rng = random.Random(seed)
    start = replay(create(Options(open_combat=open_combat), token_seed=rng.randrange(2**63)))
    one, two = random_setup(rng, first), random_setup(rng, first)
    seen = []
    for setup in (one, two):
        events, after = execute(start, setup)
        assert [type(e) for e in events] == [ev.SetupSubmitted]
        own = observe_event(events[0], first, start, after)
        assert own["placements"] == setup.placements  # one's own setup, in full
        for seat in (first.enemy, None):
            sealed = observe_event(events[0], seat, start, after)
            assert "placements" not in sealed, sealed
            assert view(after, seat)["setup"]["submitted"] == {f.value: f is first for f in Faction}
        seen.append(
            [
                _observed(s, events[0], start, after) + _json(view(after, s))
                for s in (first.enemy, None)
            ]
        )
    assert seen[0] == seen[1]


def test_the_setup_is_revealed_as_positions_only() -> None:
    """R2/R7: once both setups are in, each side sees the other's 9 positions, not identities."""
    rng = random.Random(5)
    state = replay(create(Options(), token_seed=99))
    for faction in Faction:
        events, state = execute(state, random_setup(rng, faction))
    revealed = next(e for e in events if isinstance(e, ev.SetupRevealed))
    for seat in Faction:
        units = observe_event(revealed, seat, state, state)["units"]
        assert len(units) == 18
        for unit in units:
            assert (unit["name"] is not None) == (unit["side"] == seat.value), unit
    for unit in observe_event(revealed, None, state, state)["units"]:
        assert unit["name"] is None


def test_fresh_tokens_do_not_follow_the_characters() -> None:
    """R7, D2: units going back into hiding get tokens in an order shuffled by the secret seed,
    so which of two hidden units holds the lower new token says nothing about who is who."""
    firsts = 0
    for token_seed in range(200):
        state, _ = build({"units": {"Cronus": 15, "Nyx": 15, "Hades": 1, "Zeus": 35}}, "test")
        state = replace(state, token_seed=token_seed)
        events, _ = execute(state, cmd.Move(side=_C, units=["Nyx"], to=16))
        hidden = next(e for e in events if isinstance(e, ev.UnitsHidden))
        assert set(hidden.tokens) == {"Cronus", "Nyx"}
        firsts += hidden.tokens["Cronus"] < hidden.tokens["Nyx"]
    assert 70 <= firsts <= 130, firsts  # about half of the time, as a fair shuffle does


def test_fresh_tokens_are_the_seeded_shuffle_also_when_remembered() -> None:
    """R7: the fresh tokens' order is ``random.Random(f"{token_seed}:{version}")``'s shuffle
    of the units, as every stored game was decided. ``decide`` remembers its draws
    (``_shuffled``: ``legal_actions`` makes Hermes' first step to each destination at the same
    version), and a draw remembered is the same draw."""
    # the first draws made here, not remembered (``olympus.rules.decide`` is also a function)
    importlib.import_module("olympus.rules.decide")._SHUFFLES.clear()
    placed = {"Cronus": 15, "Nyx": 15, "Thanatos": 15, "Hades": 1, "Zeus": 35}
    for token_seed in range(60):
        state, _ = build({"units": placed}, "test")
        state = replace(state, token_seed=token_seed)
        for _ in range(2):  # the second time, remembered
            events, _ = execute(state, cmd.Move(side=_C, units=["Nyx"], to=16))
            hidden = next(e for e in events if isinstance(e, ev.UnitsHidden))
            version = state.version + events.index(hidden)  # the hiding's draw
            order = list(hidden.units)
            random.Random(f"{token_seed}:{version}").shuffle(order)
            assert hidden.tokens == {u: state.next_token + i for i, u in enumerate(order)}


def test_the_seeded_order_is_random_randoms_shuffle() -> None:
    """R7: ``_seeded_order`` draws as ``random.Random(seed).shuffle`` does, without its
    interpreted layers: for seeds of every shape the rules make (``token_seed:version``, the
    seed a 63-bit number) and every number of units a region can hold, and more."""
    seeded_order = importlib.import_module("olympus.rules.decide")._seeded_order
    rng = random.Random(7)
    for trial in range(400):
        seed = f"{rng.getrandbits(63)}:{rng.randrange(1, 3000)}" if trial else "0:0"
        for n in range(0, 26):
            order = list(range(n))
            random.Random(seed).shuffle(order)
            assert list(seeded_order(seed, n)) == order, (seed, n)


# Orders that stored games hid their units in (R7), drawn once by Python 3.11's
# ``random.Random(seed).shuffle``: the draw must stay these even if a later Python's shuffle
# draws otherwise (its seeding is guaranteed alike across versions, its shuffle is not).
_STORED_ORDERS = {
    ("0:0", 7): (2, 3, 1, 0, 6, 5, 4),
    ("0:0", 17): (10, 2, 0, 14, 7, 5, 6, 13, 1, 15, 4, 9, 11, 16, 12, 8, 3),
    ("6873149120396614137:41", 17): (16, 3, 15, 6, 2, 7, 5, 12, 1, 0, 4, 14, 8, 13, 10, 11, 9),
    ("2305843009213693951:1999", 7): (4, 1, 5, 2, 0, 6, 3),
    ("2305843009213693951:1999", 2): (0, 1),
}


@pytest.mark.parametrize(("seed", "n"), list(_STORED_ORDERS))
def test_the_seeded_order_is_the_one_stored_games_were_drawn_with(seed: str, n: int) -> None:
    """R7: the fresh tokens of a stored game keep the order they were drawn in."""
    seeded_order = importlib.import_module("olympus.rules.decide")._seeded_order
    assert seeded_order(seed, n) == _STORED_ORDERS[seed, n]


# --- the successor to Zeus ----------------------------------------------------------------------


@pytest.mark.parametrize("stand_in", ["Artemis", "Athena"])
def test_zeus_falling_does_not_tell_whether_hera_was_picked(stand_in: str) -> None:
    """R7: "A player never learns which 3 characters the opponent left out, except by
    elimination or by the end of the game." When Zeus falls, the Olympians' leadership passes
    to Hera (R10) but, unlike Persephone's, her succession reveals nothing (R10 says so only of
    Persephone). Two games, one with Hera hidden in 28, one with another Olympian there, must
    look the same to the Chthonians and spectators when Cronus takes Zeus. (Until recently
    ``LeaderSucceeded(leader="Hera")`` reached them as it was: this keeps it from coming back.)"""
    seen = []
    for hidden in ("Hera", stand_in):
        state, _ = build({"units": {"Cronus": 19, "Zeus": 20, hidden: 28, "Hades": 1}}, "test")
        events, _ = execute(state, cmd.Move(side=_C, units=["Cronus"], to=20))
        seen.append(
            [
                [_observed(seat, e, s, t), _json(view(t, seat))]
                for e, s, t in _folded(state, events)
                for seat in (_C, None)
            ]
        )
    leaks = sorted({e for step in seen[0] for e in step if "leader_succeeded" in e})
    assert seen[0] == seen[1], f"the Chthonians learn whether Hera was picked: {leaks}"


def test_the_succession_is_observed() -> None:
    """R10/R7: when Hades falls, both the Olympians and spectators see him eliminated and
    Persephone revealed where she stands, as the new leader."""
    given = {"units": {"Hades": 19, "Zeus": 20, "Persephone": 7, "Nyx": 8}, "turn": "olympians"}
    state, _ = build(given, "test")
    events, after = execute(state, cmd.Thunderbolt(side=_O, region=19))
    for seat in (_O, None):
        seen = [observe_event(e, seat, s, t) for e, s, t in _folded(state, events)]
        assert {"t": "unit_eliminated", "unit": "Hades"}.items() <= next(
            o for o in seen if o["t"] == "unit_eliminated"
        ).items()
        revealed = next(
            o for o in seen if o["t"] == "units_revealed" and o["units"][0]["region"] == 7
        )
        assert [(u["name"], u["region"]) for u in revealed["units"]] == [("Persephone", 7)]
        assert next(o for o in seen if o["t"] == "leader_succeeded")["leader"] == "Persephone"
        shown = view(after, seat)
        assert shown["eliminated"] == ["Hades"]
        names = {u["name"] for u in shown["units"] if u["side"] == "chthonians"}
        assert names == {"Persephone", None}  # Nyx stays hidden


def test_an_event_observed_from_its_dict_made_once() -> None:
    """The room makes an event's dict once for its three audiences (``data``): each audience
    gets what it would get without it, and the dict given is left as it was (an audience
    shown the event as it is gets that very dict, the room packs it once; another gets a
    copy with its changes), in every event of random games, spectators included."""
    rng = random.Random(17)
    kinds, changed = set(), set()
    for _ in range(3):
        events, _final, _ = play_random_game(rng, max_commands=200)
        for event, before, after in _folded(GameState(), events):
            data = ev.to_dict(event)
            kept = copy.deepcopy(data)  # (``to_dict`` shares the event's own dicts)
            for seat in (_O, _C, None):
                shared = observe_event(event, seat, before, after, data)
                assert shared == observe_event(event, seat, before, after)
                assert data == kept
                if shared is not None and shared is not data:
                    assert shared != data  # a copy only where the audience's view differs
                    changed.add(event.TYPE)
            kinds.add(event.TYPE)
    assert {"units_moved", "units_hidden", "setup_submitted", "combat_committed"} <= kinds
    assert {"units_moved", "units_hidden", "game_created"} <= changed
