"""``legal_actions``' fast paths give what the slow, obvious ones would.

``legal_actions`` runs after every command, so it lists moves and commitments by their client
form (``LegalAction.wire``) and builds the pydantic command only on demand; it judges Hermes'
further steps without executing each path; and it reads the state's occupancy index instead of
scanning the positions. Each shortcut is checked here against what it replaces, on every
position of a few random games in every variant.
"""

from __future__ import annotations

import json
import pickle
import random
from dataclasses import replace
from functools import cache

from olympus.bots import play_random_game
from olympus.rules import (
    Event,
    Faction,
    GameState,
    LegalAction,
    Options,
    execute,
    legal_actions,
    parse_command,
)
from olympus.rules import events as ev
from olympus.rules.board import BOARD

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
    the command is hashable: moves and commitments hold lists, as before)."""
    for state in positions()[::20]:
        for side in Faction:
            for action in legal_actions(state, side):
                built = LegalAction(action.command, action.honor, action.energy)
                assert built == action and repr(built) == repr(action)
                if action.command.type in ("liturgy", "pass"):
                    assert hash(built) == hash(action)
                assert built.wire == action.wire
                assert LegalAction(action.command, action.honor + 1, action.energy) != action


def test_walks_cost_what_execute_charges() -> None:
    """Hermes' listed paths of one further step are judged without executing them: their Honor
    and Energy are those of the events of executing them, as ``legal_actions`` used to count."""
    walks = 0
    for state in positions():
        for action in legal_actions(state, state.turn):
            command = action.command
            if command.type != "move" or not command.steps:
                continue
            events, _ = execute(state, command)
            side = command.side
            honor = sum(
                e.delta for e in events if isinstance(e, ev.HonorChanged) and e.faction is side
            )
            energy = -sum(
                e.delta
                for e in events
                if isinstance(e, ev.EnergyChanged) and e.faction is side and e.reason == "styx"
            )
            assert (action.honor, action.energy) == (honor, energy), (action, events)
            walks += 1
    assert walks > 100


def test_occupancy_index_answers_like_a_scan() -> None:
    """The index gives the answers of a scan of the positions, and it stays with its state:
    not copied to the next state, not pickled, not compared, not shown."""
    regions = range(len(BOARD.regions))
    for state in positions()[::5]:
        scanned = state.evolved({})  # a copy without the index: its questions scan
        indexed = state.evolved({})
        indexed.occupancy  # noqa: B018 -- build it
        assert getattr(scanned, "_occupancy", None) is None
        for faction in Faction:
            assert indexed.units_of(faction) == scanned.units_of(faction)
            for region in regions:
                assert indexed.units_in(region) == scanned.units_in(region)
                assert indexed.units_in(region, faction) == scanned.units_in(region, faction)
                assert indexed.count_in(region, faction) == scanned.count_in(region, faction)
        assert indexed == scanned and repr(indexed) == repr(scanned)
        for copy in (
            indexed.evolved({"version": indexed.version + 1}),
            replace(indexed, version=indexed.version + 1),
            pickle.loads(pickle.dumps(indexed)),
        ):
            assert getattr(copy, "_occupancy", None) is None
        assert pickle.loads(pickle.dumps(indexed)) == scanned
        assert pickle.dumps(indexed) == pickle.dumps(scanned)
