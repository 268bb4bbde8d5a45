"""``legal_actions``' fast paths give what the slow, obvious ones would.

``legal_actions`` runs after every command, so it lists moves and commitments by their client
form (``LegalAction.wire``) and builds the pydantic command only on demand; it judges Hermes'
further steps without executing each path; and it reads the state's occupancy index instead of
scanning the positions. Each shortcut is checked here against what it replaces, on every
position of a few random games in every variant; and so are the keys ``listing.py`` gives the
listed actions (``LegalAction.key``), against what they stand for.
"""

from __future__ import annotations

import json
import pickle
import random
from collections.abc import Iterable
from dataclasses import replace
from functools import cache
from itertools import combinations, product

from olympus.bots import play_random_game
from olympus.rules import (
    Command,
    Event,
    Faction,
    GameState,
    IllegalCommand,
    LegalAction,
    Options,
    Phase,
    create,
    evolve,
    execute,
    legal_actions,
    listing,
    lists_nothing,
    parse_command,
    random_legal_action,
    replay,
    setup_options,
    waiting_reason,
)
from olympus.rules import commands as cmd
from olympus.rules import events as ev
from olympus.rules.board import BOARD
from olympus.rules.characters import BY_NAME, CHARACTERS, ORDER
from olympus.rules.movement import revealed
from olympus.rules.powers import MoveContext

GAMES = 12
MAX_COMMANDS = 300


@cache
def positions() -> tuple[GameState, ...]:
    """Every position (the state before each command) of ``GAMES`` random games."""
    states: list[GameState] = []

    def keep(before: GameState, _a: LegalAction, _e: list[Event], _s: GameState) -> None:
        states.append(before)

    for seed in range(GAMES):
        rng = random.Random(seed + 7 * 10**6)
        options = Options(seed % 2 == 0, seed % 3 == 0, rng.randint(-5, 5))
        play_random_game(rng, options, MAX_COMMANDS, observe=keep)
    return tuple(states)


def test_wire_is_the_commands_client_form() -> None:
    """``wire`` is exactly ``command.model_dump(mode="json")`` without the service's fields
    (same keys, order and JSON types), and a client sending it back gets the same command."""
    listed = 0
    for state in positions():
        for side in Faction:
            for action in legal_actions(state, side):
                dump = action.command.model_dump(mode="json", exclude={"side", "at_ms"})
                assert action.wire == dump, (action.wire, dump)
                assert json.dumps(action.wire) == json.dumps(dump)
                assert parse_command({**action.wire, "side": side}) == action.command
                listed += 1
    assert listed > 10_000


def test_listed_actions_compare_like_built_ones() -> None:
    """A listed action equals one built from its pydantic command (and hashes like it, when
    the command is hashable: moves and commitments hold lists)."""
    for state in positions()[::20]:
        for side in Faction:
            for action in legal_actions(state, side):
                built = LegalAction.of(action.command, action.honor, action.energy)
                assert built == action and repr(built) == repr(action)
                if action.command.type in ("liturgy", "pass"):
                    assert hash(built) == hash(action)
                assert built.wire == action.wire
                assert LegalAction.of(action.command, action.honor + 1, action.energy) != action


def _unspread(key: int) -> int:
    """The packed fields of a move's key: ``listing._spread`` undone, shift by shift."""
    for shift in reversed(listing._SPREAD):
        packed, folded = key, key >> shift
        while folded:
            packed ^= folded
            folded >>= shift
        key = packed
    return key


def test_a_listed_actions_key_tells_what_it_lists() -> None:
    """``LegalAction.key`` stands for what the action lists (its wire and costs): two listed
    actions with equal keys list the same, in every position of the random games for both
    sides; each listed move's key is the packed int, never the tuple of its fields, its units'
    bits those of its units (with its ``outcome`` beside it when its meeting eliminates units
    at once), and every other listed action's a negative int; an action made of
    a command has none, even once its wire is read (all of one type and costs would share
    one)."""
    listed: dict[object, tuple[str, int, int]] = {}
    moves = others = 0
    for state in positions():
        for side in Faction:
            for action in legal_actions(state, side):
                key = action.key
                assert listed.setdefault(key, _key(action)) == _key(action), action
                if action.type == "move":
                    if action.outcome is not None:  # (the packed int, what the meeting does)
                        assert isinstance(key, tuple) and key[1] == action.outcome
                        key = key[0]
                    assert isinstance(key, int) and 0 <= key < 2**62
                    units = tuple(action.wire["units"])  # unspread, its low bits are its units'
                    packed = _unspread(key)
                    assert key == listing._spread(packed)
                    assert packed & ((1 << listing._UNIT_BITS) - 1) == listing._units_mask(units)
                    # R1 order, so that the set of units (all the mask holds) tells the tuple
                    assert list(units) == sorted(units, key=ORDER.__getitem__)
                    moves += 1
                else:
                    assert isinstance(key, int) and key < 0  # numbered: never a move's
                    others += 1
    assert moves > 10_000 and others > 1_000
    built = LegalAction.of(action.command, action.honor, action.energy)
    assert built.wire == action.wire and built.key is None  # made of a command: never keyed


def test_a_moves_key_packs_each_field_apart() -> None:
    """Every combination of each field's extreme values packs to a key of its own (no field
    overlaps another's bits): the spread of the fields packed; and a move beyond the ranges has
    no int key: its key is then the tuple of its fields and costs. A listing's key, made from
    the judged ``MoveContext`` (``listed_key``), is the one its listed action has."""
    first, last = CHARACTERS[0].name, CHARACTERS[-1].name
    regions = len(BOARD.regions)
    masks = (listing._units_mask((first,)), listing._units_mask((first, last)))
    keys = set()
    combos = product(
        masks,
        (0, regions - 1),
        (False, True),
        ((), (first,), (last,)),
        (False, True),
        ((), (0,), (regions - 1,)),
        (-128, 0, 127),
        (-128, 0, 127),
    )
    for mask, to, fly, reveal, use_power, steps, honor, energy in combos:
        fields = ((), to, fly, reveal, use_power, steps)
        key = listing.listed_move_key(listing._spread(mask), fields, honor, energy)
        assert isinstance(key, int) and 0 <= key < 2**62
        packed = (
            mask
            | to << listing._TO_AT
            | (ORDER[reveal[0]] + 1 if reveal else 0) << listing._REVEAL_AT
            | (steps[0] + 1 if steps else 0) << listing._STEP_AT
            | fly << listing._FLY_AT
            | use_power << (listing._FLY_AT + 1)
            | (honor + 128) << listing._HONOR_AT
            | (energy + 128) << listing._ENERGY_AT
        )
        assert key == listing._spread(packed)
        keys.add(key)
    assert len(keys) == 2 * 2 * 2 * 3 * 2 * 3 * 3 * 3
    alone = ((first,), 1, False, (), False, ())
    group_key = listing.units_key((first,))
    assert listing.listed_move_key(group_key, alone, 128, 0) == (alone, 128, 0)
    assert listing.listed_move_key(group_key, alone, 0, -129) == (alone, 0, -129)
    two_revealed = ((first,), 1, False, (first, last), False, ())
    assert listing.listed_move_key(group_key, two_revealed, 0, 0) == (two_revealed, 0, 0)
    beyond = LegalAction(cmd.Move, Faction.OLYMPIANS, 200, 0, None, (), alone)
    assert beyond.key == (alone, 200, 0)
    move = MoveContext(Faction.OLYMPIANS, (first,), 0, 1, False, frozenset(), False)
    for honor in (0, 128):  # in the int's range, and beyond it
        listed = listing.listed_move(move, group_key, (), (), honor, 0)
        assert listing.listed_key(move, group_key, (), (), honor, 0) == listed.key
        assert listed.key == listing.listed_move_key(group_key, alone, honor, 0)


def test_listed_moves_cost_what_execute_charges() -> None:
    """A listed move's Honor (R4, and the movers' powers: the sneak attack) and Energy (R5's
    Styx, and the powers: the sneak attack, Demeter's drain, Poseidon's crossing) are those of
    the events of executing it: each of Hermes' paths of one further step (R3), judged
    without being executed, and every move of a sample of positions, judged with what a
    group's destinations share (its Honor table, the ferrymen revealed before: ``Movers``).
    Crossings paid for and crossings made free by a ferryman both among them."""
    walks = paid = ferried = 0
    for n, state in enumerate(positions()):
        for action in legal_actions(state, state.turn):
            command = action.command
            if not isinstance(command, cmd.Move) or not (command.steps or n % 6 == 0):
                continue
            events, _ = execute(state, command)
            side = command.side
            honor = sum(
                e.delta for e in events if isinstance(e, ev.HonorChanged) and e.faction is side
            )
            energy = -sum(
                e.delta for e in events if isinstance(e, ev.EnergyChanged) and e.faction is side
            )
            assert (action.honor, action.energy) == (honor, energy), (action, events)
            walks += bool(command.steps)
            origin = state.positions[command.units[0]]
            if not command.fly and not command.steps and BOARD.crosses_styx(origin, command.to):
                paid += energy > 0
                ferried += energy == 0
    assert walks > 100 and paid > 100 and ferried > 10, (walks, paid, ferried)


def test_a_moves_revealed_units_are_the_set_of_them_and_small_sets_are_shared() -> None:
    """``revealed`` is ``frozenset`` of the units, whatever their number; the sets of none and
    of one unit come from a table (a listing asks for one per candidate)."""
    assert revealed(()) == frozenset() and revealed([]) is revealed(())
    for name in BY_NAME:
        assert revealed((name,)) == {name}
        assert revealed([name]) is revealed((name,))
    assert revealed(("Hades", "Hypnos")) == {"Hades", "Hypnos"}
    assert revealed(("Nobody",)) == {"Nobody"}  # a name the table lacks is still a set


def test_occupancy_index_answers_like_a_scan() -> None:
    """The index gives the answers of a scan, and both the answers by their definition (R1
    order); the index is not a fact: not copied by ``replace``, not pickled, not compared,
    not shown."""
    regions = range(len(BOARD.regions))
    for state in positions()[::5]:
        scanned = replace(state)  # a copy without the index: its questions scan
        indexed = replace(state)
        indexed.occupancy  # noqa: B018 -- build it
        assert getattr(scanned, "_occupancy", None) is None
        def r1(units: Iterable[str]) -> list[str]:  # the answer by its definition
            return sorted(units, key=ORDER.__getitem__)

        at = state.positions
        for faction in Faction:
            own = r1(u for u in at if BY_NAME[u].faction is faction)
            assert indexed.units_of(faction) == scanned.units_of(faction) == own
            for region in regions:
                here = r1(u for u, r in at.items() if r == region)
                assert indexed.units_in(region) == scanned.units_in(region) == here
                assert indexed.occupied(region) is scanned.occupied(region) is bool(here)
                ours = [u for u in here if u in own]
                assert indexed.units_in(region, faction) == ours
                assert scanned.units_in(region, faction) == ours
                indexed.units_in(region, faction).append("Zeus")  # the caller's own list:
                assert indexed.units_in(region, faction) == ours  # the index is untouched
                assert indexed.count_in(region, faction) == scanned.count_in(region, faction)
        assert indexed == scanned and repr(indexed) == repr(scanned)
        for copy in (
            replace(indexed, version=indexed.version + 1),
            pickle.loads(pickle.dumps(indexed)),
        ):
            assert getattr(copy, "_occupancy", None) is None
        assert pickle.loads(pickle.dumps(indexed)) == scanned
        assert pickle.dumps(indexed) == pickle.dumps(scanned)


def _index(state: GameState) -> tuple[object, ...]:
    index = state.occupancy
    return (index.on_board, index.of, index.counts, index.where)


def _ask_every_region(state: GameState) -> list[list[str]]:
    return [
        state.units_in(region, faction)
        for region in range(len(BOARD.regions))
        for faction in (None, *Faction)
    ]


def test_an_index_carried_through_the_events_is_the_one_built_anew() -> None:
    """``evolved`` carries a built index to the next state, as it is or moved along with a
    move or a retreat (``Occupancy.moved``): through every event of random games, from a state
    whose index was built, each state's index is the one built from its own positions, and it
    is carried exactly while the same units stand on the board."""
    carried = moved = dropped = 0
    for state in positions():
        if state.phase is Phase.SETUP:
            continue
        for action in legal_actions(state, state.turn)[:3]:
            start = replace(state)
            start.occupancy  # noqa: B018 -- build it
            events, _ = execute(start, action.command)
            before = start
            for event in events:
                _ask_every_region(before)  # the answers it keeps: never another state's
                after = evolve(before, event)
                index = getattr(after, "_occupancy", None)
                if set(after.positions) != set(before.positions):
                    assert index is None
                    dropped += 1
                    break
                assert index is not None
                built = replace(after)  # its index built anew
                assert _index(after) == _index(built)
                assert _ask_every_region(after) == _ask_every_region(built)
                if after.positions == before.positions:
                    assert index is before.occupancy
                    carried += 1
                else:
                    moved += 1
                before = after
    assert carried > 1000 and moved > 100 and dropped > 5


def _key(action: LegalAction) -> tuple[str, int, int]:
    return (json.dumps(action.wire, sort_keys=True), action.honor, action.energy)


def test_random_legal_action_draws_from_the_legal_set() -> None:
    """``random_legal_action`` (playouts) returns one of ``legal_actions``, with its costs,
    and None exactly when there is none; over many draws in a position every legal action
    comes (it judges the same candidates, a few at a time)."""
    rng = random.Random(3)
    covered = 0
    for state in positions():
        for side in Faction:
            legal = {_key(a) for a in legal_actions(state, side)}
            draws = 200 if 1 < len(legal) <= 12 else 3
            seen = set()
            for _ in range(draws):
                drawn = random_legal_action(state, side, rng)
                if not legal:
                    assert drawn is None
                    break
                assert drawn is not None and _key(drawn) in legal, (drawn, state)
                seen.add(_key(drawn))
            if draws == 200:
                assert seen == legal
                covered += 1
    assert covered > 100


def test_commitment_lists_are_shared_only_between_equal_positions() -> None:
    """A combat position's commitments come from a cache keyed by what they are made of: the
    list is the one the same position lists afresh, and callers may change their copy."""
    combats = [s for s in positions() if s.phase.value == "combat" and not s.pending]
    assert len(combats) > 50
    for state in combats:
        for side in Faction:
            first = legal_actions(state, side)
            first.clear()  # the caller's own list
            again = legal_actions(state, side)
            listing._COMMITMENTS.clear()
            fresh = legal_actions(state, side)
            assert [_key(a) for a in again] == [_key(a) for a in fresh]


def _move_candidates(state: GameState, side: Faction) -> list[Command]:
    """A superset of the legal moves: every group of own units standing together, to every
    region, walking or flying, revealing any one hidden unit or none, with or without the
    optional power; walks of one unit also with one further step to a neighbour."""
    own = state.units_of(side)
    hidden = [u for u in own if u not in state.revealed]
    candidates: list[Command] = []
    for origin in {state.positions[u] for u in own}:
        here = [u for u in own if state.positions[u] == origin]
        for size in range(1, len(here) + 1):
            for group in combinations(here, size):
                for to, fly, reveal, use_power in product(
                    range(len(BOARD.regions)), (False, True), [[], *[[u] for u in hidden]], (0, 1)
                ):
                    fields = {"units": list(group), "to": to, "fly": fly, "reveal": reveal}
                    if use_power:
                        fields["use_power"] = True
                    candidates.append(cmd.Move(side=side, **fields))
                    if size == 1 and not fly and to in BOARD.neighbours(origin):
                        candidates += [
                            cmd.Move(side=side, **fields, steps=[step])
                            for step in sorted(BOARD.neighbours(to))
                        ]
    return candidates


def test_listed_moves_are_every_move_decide_accepts() -> None:
    """Completeness, against the rules themselves: in a sample of turn positions, the moves
    ``decide`` accepts among a superset of candidates are exactly the listed moves (Hermes'
    longer paths aside: only paths of one further step are listed)."""
    turns = [s for s in positions() if s.phase.value == "turn" and not s.pending]
    checked = 0
    for state in turns[:: max(1, len(turns) // 40)]:
        side = state.turn
        listed = {json.dumps(a.wire, sort_keys=True) for a in legal_actions(state, side)}
        accepted = set()
        for command in _move_candidates(state, side):
            try:
                execute(state, command)
            except IllegalCommand:
                continue
            accepted.add(json.dumps(wire(command), sort_keys=True))
        moves = {w for w in listed if json.loads(w)["type"] == "move"}
        assert accepted == moves, (accepted ^ moves, state)
        checked += 1
    assert checked >= 40


def wire(command: Command) -> dict[str, object]:
    return command.model_dump(mode="json", exclude={"side", "at_ms"})


def test_a_seat_without_actions_is_told_why() -> None:
    """Whenever a seat has nothing to do, ``waiting_reason`` says why, and when it waits for
    the opponent, the opponent does have something to do."""
    reasons = set()
    for state in positions():
        for side in Faction:
            if legal_actions(state, side) or setup_options(state, side):
                continue
            reason = waiting_reason(state, side)
            reasons.add(reason)
            if reason.startswith("opponent_") and reason != "opponent_setup":
                assert legal_actions(state, side.enemy), (reason, state)
    assert {"opponent_turn", "committed", "opponent_choice"} <= reasons  # setup: service tests


def test_lists_nothing_is_known_without_listing() -> None:
    """``lists_nothing`` (which ``legal_actions`` trusts to list nothing without trying) is
    never wrong: when it says so, ``legal_actions`` is empty; outside a combat it says so
    of every seat with nothing to do (the other side's turn or choice); in a combat never.
    Each of its reasons is met: a game in its setup or over, the other side's choice, the
    other side's turn."""
    setup = replay(create(Options(), token_seed=1))
    _, over, _ = play_random_game(random.Random(3), Options(), 2_000)
    assert over.phase is Phase.OVER
    met: set[str] = set()
    for state in (setup, *positions(), over):
        for side in Faction:
            empty = not legal_actions(state, side)
            if lists_nothing(state, side):
                assert empty, state
                met.add(
                    state.phase.value
                    if state.phase in (Phase.SETUP, Phase.OVER)
                    else "choice" if state.pending else "turn"
                )
            elif empty:
                assert state.phase is Phase.COMBAT and not state.pending, state
    assert met == {Phase.SETUP.value, Phase.OVER.value, "choice", "turn"}
