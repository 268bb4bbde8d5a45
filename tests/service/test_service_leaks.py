"""Leak tests (R7, R8): what a seat or a spectator receives must not depend on a secret.

Two games are played side by side on two server processes that draw the same secret token
seed. They differ only in a secret, and every frame the observers receive must be the same,
byte for byte, the whole stream (apart from the welcome, which names the room):

- hidden identities: some units of one side are other characters in the two games (on the
  same regions). Both games then play the same turns, the disguised units named as they are in
  each, as long as neither game shows a disguised unit (a reveal, a combat, an elimination) or
  ends; the other units are revealed, fight and go back into hiding as the play goes. The other
  seat and the spectators must receive identical bytes for the whole game;
- a sealed choice: identical games up to a combat, where one side commits differently in the
  two games; the other seat and the spectators must receive identical bytes until the round
  is resolved (the reveal).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from service_harness import Game, Oracle, ServerThread, WsClient, create_game, seat, wire

from olympus.bots import pick_action
from olympus.rules import (
    Faction,
    GameState,
    IllegalCommand,
    LegalAction,
    Phase,
    evolve,
    execute,
    legal_actions,
    parse_command,
    random_placements,
)
from olympus.rules.characters import BY_NAME, LEADER, ROSTER
from olympus.rules.combat import sees_commitment
from olympus.rules.events import Event, to_dict
from olympus.store import EventStore

MAX_STEPS = 30  # commands of the sealed-choice test before its combat (times three)
TWIN_STEPS = 80  # commands of the hidden-identities test, at most


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
    """Wait until every socket has what the log says it must: each seat its events and then
    its ``legal`` about the last of them (the last frame of a batch), the spectator its
    events."""
    await twin.sync()
    for audience, client in twin.watchers():
        await client.wait_seq(len(twin.oracle.messages(audience)))
        if audience is not None:
            await client.latest_legal()


def same_messages(a: WsClient, b: WsClient, until: Callable[[dict], bool] | None = None) -> int:
    """Assert identical messages, byte for byte, after the welcome: the whole streams, as many
    messages in each, or up to the first ``until`` message, which must come at the same place
    in both. Frame boundaries follow the scheduling (``Codec.batch``), not the game. Returns
    how many messages were compared (the welcome included)."""
    assert a.messages[0]["type"] == b.messages[0]["type"] == "welcome"
    if until is None:
        assert len(a.raw) == len(b.raw), (len(a.raw), len(b.raw))
        count = len(a.raw)
    else:
        count = next(i for i, m in enumerate(a.messages) if until(m))
        assert until(b.messages[count]) and not any(until(m) for m in b.messages[:count])
    assert a.raw[1:count] == b.raw[1:count]
    return count


# --- hidden identities ---------------------------------------------------------------------


def disguise(rng: random.Random, placements: dict[str, int], faction: Faction) -> dict[str, str]:
    """Which units of the setup are other characters in game B: half the side's units but the
    leader, each mapped to another character of the side that is not otherwise in the setup (a
    left-out one, or another disguised one)."""
    leader = LEADER[faction]
    others = sorted(u for u in placements if u != leader)
    chosen = rng.sample(others, len(others) // 2)
    pool = [u for u in ROSTER[faction] if u not in placements or u in chosen]
    while True:
        images = rng.sample(pool, len(chosen))
        if all(x != y for x, y in zip(chosen, images, strict=True)):
            return dict(zip(chosen, images, strict=True))


def renamed(value: Any, names: dict[str, str]) -> Any:
    """``value`` (a command's wire form) with each unit of ``names`` named by its image."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list | tuple):
        return [renamed(v, names) for v in value]
    if isinstance(value, dict):
        return {renamed(k, names): renamed(v, names) for k, v in value.items()}
    return value


def public_shape(state: GameState, events: list[Event]) -> list[dict]:
    """The events as facts the enemy may know by the rules of R7: every unit as its side, its
    token number and, once revealed (or eliminated), its name; the units of an event as a set
    (their order is by name); a re-hiding as the units' fresh tokens, not who got which.

    Built from the true events, not from ``observe_event``: two commands with the same shape
    are indistinguishable by the rules of R7, so the service must send the same bytes.
    """
    shape = []
    for event in events:
        after = evolve(state, event)

        def label(unit: str, before: GameState = state, after: GameState = after) -> tuple:
            token = after.tokens.get(unit, before.tokens.get(unit, -1))
            name = unit if unit in after.revealed else ""
            return (BY_NAME[unit].faction.value, token, name)

        fact = to_dict(event)
        fact.pop("tokens", None)  # unit -> fresh token: who got which (the labels carry them)
        if "units" in fact:
            fact["units"] = sorted(label(u) for u in event.units)
        for key in ("unit", "leader", "thrower"):
            if isinstance(fact.get(key), str):
                fact[key] = label(fact[key])
        shape.append(fact)
        state = after
    return shape


def twin_turn(
    rng: random.Random, a: GameState, b: GameState, disguised: dict[str, str]
) -> tuple | None:
    """A random legal command of game A and the same command in game B (the disguised units
    named as they are there), or None if there is none such: B must take it with the same
    public shape, and neither game may end (``game_over`` shows everything) or show a
    disguised unit (reveal it, fight it, eliminate it)."""
    sides = [f for f in Faction if legal_actions(a, f)]
    rng.shuffle(sides)  # in a combat both sides may commit
    secret_a, secret_b = set(disguised), set(disguised.values())
    for side in sides:
        candidates = legal_actions(a, side)
        while candidates:
            action = pick_action(rng, candidates)
            candidates.remove(action)
            command = action.command
            command_b = parse_command({**renamed(action.wire, disguised), "side": side.value})
            try:
                events_b, after_b = execute(b, command_b)
            except IllegalCommand:
                continue
            events_a, after_a = execute(a, command)
            if any(e.TYPE == "game_ended" for e in (*events_a, *events_b)):
                continue
            if secret_a & after_a.revealed or secret_b & after_b.revealed:
                continue
            if public_shape(a, events_a) == public_shape(b, events_b):
                return command, command_b
    return None


def rehidden(oracle: Oracle, side: Faction) -> list[tuple[int, set[str]]]:
    """(event index, units) of each re-hiding of ``side``'s units that hid a revealed one."""
    return [
        (k, set(event.units))
        for k, event in enumerate(oracle.events)
        if event.TYPE == "units_hidden"
        and BY_NAME[event.units[0]].faction is side
        and oracle.states[k].revealed & set(event.units)
    ]


# Games (seeds) whose play goes through a re-hiding of revealed and disguised units together.
TWIN_GAMES = [(Faction.OLYMPIANS, s) for s in (2, 5, 12, 21)] + [
    (Faction.CHTHONIANS, s) for s in (1, 2, 5, 10)
]


@pytest.mark.parametrize(
    ("hidden", "seed"), TWIN_GAMES, ids=[f"hidden-{f.value}-{s}" for f, s in TWIN_GAMES]
)
async def test_hidden_identities_do_not_leak(
    twin_servers: tuple[ServerThread, ServerThread],
    store: EventStore,
    hidden: Faction,
    seed: int,
) -> None:
    """Half of one side's units are other characters in the two games; the games go on
    through reveals, combats and re-hidings of the other units, the disguised ones among
    them, and the other seat and the spectators receive the same bytes throughout."""
    rng = random.Random(seed)
    observer = hidden.enemy
    setups_a = {f: random_placements(rng, f) for f in Faction}
    disguised = disguise(rng, setups_a[hidden], hidden)
    setups_b = {**setups_a, hidden: {disguised.get(u, u): r for u, r in setups_a[hidden].items()}}
    a = await open_twin(twin_servers[0], store, setups_a)
    b = await open_twin(twin_servers[1], store, setups_b)

    steps = 0
    for n in range(TWIN_STEPS):
        state_a, state_b = await a.sync(), await b.sync()
        turn = twin_turn(rng, state_a, state_b, disguised)
        if turn is None:
            break
        await play_step(a, b, turn[0].side, n, turn)
        steps += 1
    for twin in (a, b):
        await settle(twin)

    # What the play went through: combats, names of the hidden side shown, and revealed units
    # of it hidden again together with disguised ones (fresh tokens for all of them).
    events = a.oracle.events
    assert any(e.TYPE == "combat_started" for e in events)
    shown = {u for e in events if e.TYPE == "units_revealed" for u in e.units}
    assert {u for u in shown if BY_NAME[u].faction is hidden} - set(disguised), shown
    mixed = [units for _, units in rehidden(a.oracle, hidden) if units & set(disguised)]
    assert mixed, f"{steps} commands and no such re-hiding: this seed no longer shows one"
    # The secret holds to the end: the disguised units are on the board, never shown.
    final_a, final_b = a.oracle.state, b.oracle.state
    assert set(disguised) <= set(final_a.positions) - final_a.revealed
    assert final_b.positions == {disguised.get(u, u): r for u, r in final_a.positions.items()}

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
