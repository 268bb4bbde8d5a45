"""The ``steps`` request: Hermes' next steps after a walk, priced by the rules, over a real
websocket (docs/protocol.md, "Hermes' further steps").

A game is set up with Hermes where he can walk (across the Styx and back); in the Olympians'
turn the seat asks for the next steps after walks of 0 to 4 further steps. Each answer is the
rules' own (``further_steps`` of the room's state, as the log in the store folds it), about the
seat's newest message; every step it offers costs what executing it charges; and the walk
played at last charges, in the events every seat gets, what its last answer said.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from service_harness import (
    Oracle,
    ServerThread,
    WsClient,
    create_game,
    jsonable,
    seat,
    wire,
)

from olympus.rules import Faction, execute, further_steps, parse_command
from olympus.rules import events as ev
from olympus.store import EventStore

pytestmark = pytest.mark.memory_store

SETUPS = {
    Faction.OLYMPIANS: {
        "Zeus": 35, "Hermes": 19, "Hera": 5, "Athena": 6, "Ares": 12,
        "Apollo": 13, "Poseidon": 20, "Artemis": 21, "Hephaestus": 27,
    },
    Faction.CHTHONIANS: {
        "Hades": 0, "Cerberus": 1, "Cronus": 2, "Hecate": 7, "Hypnos": 8,
        "Moirae": 14, "Thanatos": 15, "Charon": 22, "Nyx": 23,
    },
}  # fmt: skip
# Hermes from 19: forward, forward, across the Styx, back across it, back again.
PATH = [18, 17, 16, 17, 18]


async def ask(client: WsClient, request_id: str, walk: dict[str, Any]) -> dict[str, Any]:
    """Send a ``steps`` request; its answer or ``error``."""
    await client.send({"type": "steps", "id": request_id, "command": walk})
    while True:
        message = await client.next()
        if message["type"] in ("steps", "error") and message.get("id") == request_id:
            return message


def charged(events: list[ev.Event], side: Faction) -> tuple[int, int]:
    honor = sum(e.delta for e in events if isinstance(e, ev.HonorChanged) and e.faction is side)
    energy = -sum(e.delta for e in events if isinstance(e, ev.EnergyChanged) and e.faction is side)
    return honor, energy


async def test_a_seat_is_told_hermes_next_steps_at_what_they_charge(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    game = await create_game(http)
    for faction in Faction:
        await seat(server.ws_url, game, faction, last_seq=0, epoch=game.epoch)
    for faction, placements in SETUPS.items():
        setup = {"type": "submit_setup", "placements": placements}
        assert (await game.seats[faction].command("setup", setup))["type"] == "ack"
    chthonians, olympians = game.seats[Faction.CHTHONIANS], game.seats[Faction.OLYMPIANS]
    oracle = Oracle(store, game.room)
    await oracle.sync()
    await chthonians.wait_seq(len(oracle.messages(Faction.CHTHONIANS)))
    refused = await ask(chthonians, "early", {"type": "move", "units": ["Hades"], "to": 7})
    assert refused["type"] == "error" and refused["code"] == "no_extra_steps", refused
    assert (await chthonians.command("c1", {"type": "liturgy"}))["type"] == "ack"
    state = await oracle.sync()
    await olympians.wait_seq(len(oracle.messages(Faction.OLYMPIANS)))
    await olympians.latest_legal()

    walk: dict[str, Any] = {"type": "move", "units": ["Hermes"], "to": PATH[0], "steps": []}
    answers = []
    for n, step in enumerate([*PATH[1:], None]):
        answer = await ask(olympians, f"walk-{n}", walk)
        assert answer["type"] == "steps", answer
        assert answer["seq"] == olympians.seq
        command = parse_command({**walk, "side": "olympians"})
        expected = [
            {"command": wire(a.command), "honor": a.honor, "energy": a.energy}
            for a in further_steps(state, command)
        ]
        assert jsonable(answer["actions"]) == jsonable(expected)
        assert expected, walk
        for offered in answer["actions"]:
            command = parse_command({**offered["command"], "side": "olympians"})
            events, _ = execute(state, command)
            assert (offered["honor"], offered["energy"]) == charged(events, Faction.OLYMPIANS)
        answers.append(answer)
        if step is None:
            break
        walk = next(a["command"] for a in answer["actions"] if a["command"]["steps"][-1] == step)
    costs = [(a["honor"], a["energy"]) for a in answers[-1]["actions"]]
    assert {h for h, _ in costs} != {0} or {e for _, e in costs} != {0}  # not all free

    # the Chthonians' turn is not the Olympians', and a spectator has no steps
    refused = await ask(chthonians, "theirs", {"type": "move", "units": ["Hades"], "to": 7})
    assert refused["code"] == "not_your_turn", refused
    watcher = await WsClient.open(server.ws_url)
    await watcher.hello(spectate=game.room)
    refused = await ask(watcher, "watching", walk)
    assert refused["code"] == "spectator", refused
    refused = await ask(olympians, "liturgy", {"type": "liturgy"})
    assert refused["code"] == "bad_command", refused
    refused = await ask(olympians, "bad-step", {**walk, "steps": [*walk["steps"], 30]})
    assert refused["code"] == "not_adjacent", refused
    await watcher.close()

    # the walk played: its events charge what the answer that offered its last step said
    offered = next(a for a in answers[-2]["actions"] if a["command"] == walk)
    before = len(olympians.events())
    assert (await olympians.command("walk", walk))["type"] == "ack"
    after = await oracle.sync()
    await chthonians.wait_seq(len(oracle.messages(Faction.CHTHONIANS)))
    played = [m["event"] for m in olympians.events()[before:]]
    honor = sum(
        e["delta"] for e in played if e["t"] == "honor_changed" and e["faction"] == "olympians"
    )
    energy = -sum(
        e["delta"] for e in played if e["t"] == "energy_changed" and e["faction"] == "olympians"
    )
    assert (offered["honor"], offered["energy"]) == (honor, energy) != (0, 0)
    assert after.positions["Hermes"] == PATH[-1]
