"""Leak tests (R7, R8): what a seat or a spectator receives must not depend on a secret.

Two games are played side by side on two server processes that draw the same secret token
seed. They differ only in a secret, and every frame the observers receive must be the same,
byte for byte (apart from the welcome, which names the room):

- hidden identities: one side's setup puts other characters (even one left out in game A) on
  the same regions; both games then play turns that are the same at region level (same
  regions, same token numbers moving) as long as nothing is revealed. The other seat and the
  spectators must receive identical bytes for the whole game;
- a sealed choice: identical games up to a combat, where one side commits differently in the
  two games; the other seat and the spectators must receive identical bytes until the round
  is resolved (the reveal).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass

import httpx
import pytest
from service_harness import Game, Oracle, ServerThread, WsClient, create_game, seat, wire

from olympus.bots import pick_action
from olympus.rules import (
    Faction,
    GameState,
    LegalAction,
    Phase,
    evolve,
    execute,
    legal_actions,
    random_placements,
)
from olympus.rules.characters import LEADER, ROSTER
from olympus.rules.combat import sees_commitment
from olympus.rules.events import to_dict
from olympus.store import EventStore

# Events that name a unit to its enemy or end the game: the identity test stops before them.
REVEALING = {
    "units_revealed",
    "unit_eliminated",
    "combat_started",
    "game_ended",
    "leader_succeeded",
    "unit_recalled",
    "thunderbolt_thrown",
}
MAX_STEPS = 30


@dataclass
class Twin:
    """One of the two games: its seats, a spectator, and the truth from the store."""

    game: Game
    oracle: Oracle
    spectator: WsClient

    def watchers(self) -> list[tuple[Faction | None, WsClient]]:
        return [*self.game.seats.items(), (None, self.spectator)]

    async def sync(self) -> GameState:
        return await self.oracle.sync()


async def open_twin(server: ServerThread, store: EventStore, setups: dict) -> Twin:
    async with httpx.AsyncClient(base_url=server.url) as http:
        game = await create_game(http)
    start = {"last_seq": 0, "epoch": game.epoch}
    for faction in Faction:
        await seat(server.ws_url, game, faction, **start)
    spectator = await WsClient.open(server.ws_url)
    await spectator.hello(spectate=game.room, **start)
    for faction in Faction:
        command = {"type": "submit_setup", "placements": setups[faction]}
        assert (await game.seats[faction].command("setup", command))["type"] == "ack"
    twin = Twin(game, Oracle(store, game.room), spectator)
    await twin.sync()
    return twin


@pytest.fixture
def twin_servers(start_server: Callable[..., ServerThread]) -> tuple[ServerThread, ServerThread]:
    """Two processes whose secret seeds come out the same (the one room each creates)."""
    return (
        start_server(seed_source=itertools.count(4242).__next__),
        start_server(seed_source=itertools.count(4242).__next__),
    )


async def play_step(a: Twin, b: Twin, side: Faction, n: int, commands: tuple) -> None:
    for twin, command in zip((a, b), commands, strict=True):
        reply = await twin.game.seats[side].command(f"c{n}", wire(command))
        assert reply["type"] == "ack", reply


async def settle(twin: Twin) -> None:
    """Wait until every socket has what the log says it must, legal lists included."""
    state = await twin.sync()
    for audience, client in twin.watchers():
        await client.wait_seq(len(twin.oracle.messages(audience)))
        if audience is not None and legal_actions(state, audience):
            await client.wait_for(lambda c=client: c.legal() != [])


def same_messages(a: WsClient, b: WsClient, until: Callable[[dict], bool] | None = None) -> int:
    """Assert identical messages, byte for byte, after the welcome (up to the first ``until``
    message). Frame boundaries follow the scheduling (``Codec.batch``), not the game."""
    assert a.messages[0]["type"] == b.messages[0]["type"] == "welcome"
    count = len(a.raw)
    if until is not None:
        count = next(i for i, m in enumerate(a.messages) if until(m))
        assert until(b.messages[count]) and not any(until(m) for m in b.messages[:count])
    assert a.raw[1:count] == b.raw[1:count]
    return count


# --- hidden identities ---------------------------------------------------------------------


def disguise(rng: random.Random, placements: dict[str, int], faction: Faction) -> dict[str, int]:
    """Other characters on the same regions: one left-out character comes in, the rest rotate."""
    leader = LEADER[faction]
    others = [u for u in placements if u != leader]
    regions = [placements[u] for u in others]
    left_out = [u for u in ROSTER[faction] if u not in placements]
    others[rng.randrange(len(others))] = rng.choice(left_out)
    rotated = others[1:] + others[:1]
    return {leader: placements[leader], **dict(zip(rotated, regions, strict=True))}


def public_shape(state: GameState, events: list) -> list[dict]:
    """The events as facts about regions and token numbers only (names dropped).

    Built from the true events, not from ``observe_event``: two commands with the same shape
    are indistinguishable by the rules of R7, so the service must send the same bytes.
    """
    shape = []
    for event in events:
        after = evolve(state, event)
        fact = to_dict(event)
        fact.pop("tokens", None)  # unit -> token: the names
        if "units" in fact:
            fact["units"] = sorted(after.tokens[u] for u in event.units)
        shape.append(fact)
        state = after
    return shape


def quiet(state: GameState, action: LegalAction) -> bool:
    """A turn that reveals nothing by itself: no flight, reveal, power, attack or extra step."""
    c = action.command
    if c.type in ("liturgy", "pass"):
        return True
    return (
        c.type == "move"
        and not (c.fly or c.reveal or c.use_power or c.steps)
        and state.count_in(c.to, c.side.enemy) == 0
    )


def origin(state: GameState, command) -> int | None:
    return state.positions[command.units[0]] if command.type == "move" else None


def twin_turn(rng: random.Random, a: GameState, b: GameState) -> tuple | None:
    """A quiet random turn in game A and the turn of game B that looks the same, or None.

    Game B's turn moves as many units from the same region to the same region; among those,
    the one whose events have the same public shape (re-hidden units draw fresh tokens, so
    which units move decides which token numbers are seen to move).
    """
    if a.phase is not Phase.TURN or b.phase is not Phase.TURN:
        return None
    candidates = [x for x in legal_actions(a, a.turn) if quiet(a, x)]
    options_b = [x.command for x in legal_actions(b, b.turn) if quiet(b, x)]
    while candidates:
        action = pick_action(rng, candidates)
        candidates.remove(action)
        command = action.command
        events_a, _ = execute(a, command)
        if REVEALING & {e.TYPE for e in events_a}:
            continue
        shape = public_shape(a, events_a)
        for command_b in options_b:
            if command_b.type != command.type or origin(b, command_b) != origin(a, command):
                continue
            if command.type == "move" and (
                command_b.to != command.to or len(command_b.units) != len(command.units)
            ):
                continue
            if public_shape(b, execute(b, command_b)[0]) == shape:
                return command, command_b
    return None


@pytest.mark.parametrize("hidden", list(Faction), ids=lambda f: f"hidden-{f.value}")
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
async def test_hidden_identities_do_not_leak(
    twin_servers: tuple[ServerThread, ServerThread],
    store: EventStore,
    hidden: Faction,
    seed: int,
) -> None:
    rng = random.Random(seed)
    observer = hidden.enemy
    setups_a = {f: random_placements(rng, f) for f in Faction}
    setups_b = {**setups_a, hidden: disguise(rng, setups_a[hidden], hidden)}
    assert setups_b[hidden] != setups_a[hidden]
    assert sorted(setups_b[hidden].values()) == sorted(setups_a[hidden].values())
    a = await open_twin(twin_servers[0], store, setups_a)
    b = await open_twin(twin_servers[1], store, setups_b)

    steps = 0
    for n in range(MAX_STEPS):
        state_a, state_b = await a.sync(), await b.sync()
        turn = twin_turn(rng, state_a, state_b)
        if turn is None:
            break
        await play_step(a, b, state_a.turn, n, turn)
        steps += 1
    assert steps >= 4, "too short a game to show anything"
    assert any(e.TYPE == "units_hidden" for e in a.oracle.events)  # tokens were re-drawn
    # The hidden side's units really are other characters, and moved in both games.
    assert a.oracle.state.positions != b.oracle.state.positions
    assert set(a.oracle.state.positions.values()) == set(b.oracle.state.positions.values())

    for twin in (a, b):
        await settle(twin)
    same_messages(a.game.seats[observer], b.game.seats[observer])
    same_messages(a.spectator, b.spectator)
    # The hidden side itself sees its own, different, units: the comparison can fail.
    assert a.game.seats[hidden].raw[1:] != b.game.seats[hidden].raw[1:]


# --- a sealed choice -----------------------------------------------------------------------


def towards_combat(rng: random.Random, state: GameState) -> LegalAction:
    """An attack if there is one, else a random legal action (the way to a combat)."""
    side = state.turn
    actions = legal_actions(state, side)
    attacks = [
        x
        for x in actions
        if x.command.type == "move" and state.count_in(x.command.to, side.enemy) > 0
    ]
    return rng.choice(attacks) if attacks else pick_action(rng, actions)


def committer(state: GameState) -> Faction | None:
    """A side that may commit now while its opponent may not see its commitment."""
    for side in Faction:
        commits = [x for x in legal_actions(state, side) if x.command.type == "commit"]
        if commits and not sees_commitment(state, side.enemy):
            return side
    return None


def resolved(message: dict) -> bool:
    return message["type"] == "event" and message["event"]["t"] == "combat_round_resolved"


@pytest.mark.parametrize("seed", [5, 6, 7, 8])
async def test_a_sealed_commitment_does_not_leak(
    twin_servers: tuple[ServerThread, ServerThread], store: EventStore, seed: int
) -> None:
    rng = random.Random(seed)
    setups = {f: random_placements(rng, f) for f in Faction}
    a = await open_twin(twin_servers[0], store, setups)
    b = await open_twin(twin_servers[1], store, setups)

    for n in range(MAX_STEPS * 3):  # identical games up to a combat
        state = await a.sync()
        assert state.version == (await b.sync()).version
        if state.phase is Phase.COMBAT and not state.pending and committer(state):
            break
        assert state.phase is not Phase.OVER, "the game ended before a combat"
        if state.phase is Phase.TURN:
            action = towards_combat(rng, state)
        else:  # a pending choice or a commitment nobody may hide: play it the same way
            action = next(pick_action(rng, x) for f in Faction if (x := legal_actions(state, f)))
        await play_step(a, b, action.command.side, n, (action.command, action.command))
    else:
        raise AssertionError("no combat came")

    secret_side = committer(state)
    assert secret_side is not None
    observer = secret_side.enemy
    commits = [x.command for x in legal_actions(state, secret_side) if x.command.type == "commit"]
    # As different as allowed: the cheapest against the most Energy (All-out if possible).
    low = commits[0]
    high = max(commits, key=lambda c: (c.energy, c.maneuver == "all_out_attack"))
    assert (low.maneuver, low.energy) != (high.maneuver, high.energy)
    await play_step(a, b, secret_side, 900, (low, high))

    # The observer answers the same in both games (it cannot know what it is answering).
    state = await a.sync()
    answer = next(x.command for x in legal_actions(state, observer) if x.command.type == "commit")
    await play_step(a, b, observer, 901, (answer, answer))

    pairs = [(a.game.seats[observer], b.game.seats[observer]), (a.spectator, b.spectator)]
    for client_a, client_b in pairs:
        for client in (client_a, client_b):
            await client.wait_for(lambda c=client: any(resolved(m) for m in c.messages))
        count = same_messages(client_a, client_b, until=resolved)
        committed = [
            m["event"]
            for m in client_a.messages[:count]
            if m["type"] == "event"
            and m["event"]["t"] == "combat_committed"
            and m["event"]["faction"] == secret_side.value
        ]
        assert committed and all("maneuver" not in e and "energy" not in e for e in committed)
    # Once resolved, the commitments are public and the games differ (the test can fail).
    assert a.spectator.raw != b.spectator.raw
