"""Reconnecting: a resume token (epoch, seq) gets exactly the missed messages, else a view."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from service_harness import Oracle, ServerThread, WsClient, live_game, seat

from olympus.rules import Faction, legal_actions
from olympus.store import EventStore

# The service's own logic: on the memory backend (tests/store shows both backends alike).
pytestmark = pytest.mark.memory_store

OLY, CHT = Faction.OLYMPIANS, Faction.CHTHONIANS


def a_move(oracle: Oracle, side: Faction) -> dict:
    """The first legal plain move of ``side`` (no reveal, no flight: ends the turn quietly)."""
    for action in legal_actions(oracle.state, side):
        command = action.command
        if command.type == "move" and not command.fly and not command.reveal:
            return command.model_dump(mode="json", exclude={"side", "at_ms"})
    raise AssertionError("no plain move")


async def test_resume_gets_exactly_the_missed_messages(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    game, oracle = await live_game(http, server.ws_url, store)
    olympians = game.seats[OLY]
    last_seq = olympians.seq
    await olympians.close()

    reply = await game.seats[CHT].command("m1", a_move(oracle, CHT))  # while the Olympians are away
    assert reply["type"] == "ack"
    await oracle.sync()
    expected = oracle.messages(OLY)
    assert len(expected) > last_seq

    back = await seat(server.ws_url, game, OLY, last_seq=last_seq, epoch=game.epoch)
    welcome = back.messages[0]
    assert welcome["resumed"] is True and welcome["seq"] == len(expected)
    await back.wait_seq(len(expected))
    missed = back.events()
    assert [m["seq"] for m in missed] == list(range(last_seq + 1, len(expected) + 1))
    assert [m["event"] for m in missed] == expected[last_seq:]
    assert not any(m["type"] == "view" for m in back.messages)
    await back.wait_for(lambda: back.legal() != [])  # now it is the Olympians' turn
    assert len(back.legal()) == len(legal_actions(oracle.state, OLY))


async def test_a_fresh_view_when_the_resume_token_does_not_fit(
    http: httpx.AsyncClient, start_server: Callable[..., ServerThread], store: EventStore
) -> None:
    server = start_server(resume_window=3)
    async with httpx.AsyncClient(base_url=server.url) as client:
        game, oracle = await live_game(client, server.ws_url, store)
    current = len(oracle.messages(OLY))
    wrong_epoch = str(int(game.epoch) ^ 1)
    for hello in (
        {"last_seq": current - 1, "epoch": wrong_epoch},  # the room was recreated
        {"last_seq": current + 5, "epoch": game.epoch},  # ahead of the log (Redis lost events)
        {"last_seq": current - 4, "epoch": game.epoch},  # further back than the window
        {"last_seq": current - 1},  # no epoch
        {},
    ):
        client = await seat(server.ws_url, game, OLY, **hello)
        assert client.messages[0]["resumed"] is False, hello
        view = await client.expect("view")
        assert view["seq"] == current and view["view"]["phase"] == "turn"
        assert client.events() == []
        await client.close()
    within = await seat(server.ws_url, game, OLY, last_seq=current - 3, epoch=game.epoch)
    assert within.messages[0]["resumed"] is True
    await within.close()


async def test_a_retried_command_is_acknowledged_not_applied_again(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    game, oracle = await live_game(http, server.ws_url, store)
    first = await game.seats[CHT].command("m1", a_move(oracle, CHT))
    version = await store.version(game.room)
    await game.seats[CHT].close()

    # The ack was "lost": the client reconnects and sends the same command id again. It is
    # now the Olympians' turn, so judged afresh it would be refused: it must be recognised.
    again = await seat(server.ws_url, game, CHT, last_seq=first["seq"], epoch=game.epoch)
    reply = await again.command("m1", a_move(oracle, CHT))
    assert reply == first
    assert await store.version(game.room) == version
    # A new id with the same command is a new command, refused by the rules.
    refused = await again.command("m2", a_move(oracle, CHT))
    assert refused["type"] == "error" and refused["code"] == "not_your_turn"
    assert await store.version(game.room) == version


async def test_per_seat_numbering_is_independent(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    game, oracle = await live_game(http, server.ws_url, store)
    spectator = await WsClient.open(server.ws_url)
    await spectator.hello(spectate=game.room, last_seq=0, epoch=game.epoch)
    for audience, client in ((OLY, game.seats[OLY]), (CHT, game.seats[CHT]), (None, spectator)):
        await client.wait_seq(len(oracle.messages(audience)))
        assert [m["event"] for m in client.events()] == oracle.messages(audience)
    # Same count, different content: each seat sees its own setup and not the other's.
    own = [m for m in game.seats[OLY].events() if m["event"]["t"] == "setup_submitted"]
    assert [("placements" in m["event"]) for m in own] == [
        m["event"]["faction"] == "olympians" for m in own
    ]
    await spectator.close()
