"""Bad input gets a clear error frame and appends nothing; the socket stays usable if sensible.

Every test ends by checking the room's version in Redis: a refused frame must never write.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable

import httpx
import msgpack
import pytest
from service_harness import Game, Oracle, ServerThread, WsClient, live_game, seat
from websockets.exceptions import ConnectionClosed

from olympus.rules import Faction, IllegalCommand, execute, parse_command
from olympus.store import EventStore

# The service's own logic: on the memory backend (tests/store shows both backends alike).
pytestmark = pytest.mark.memory_store

OLY, CHT = Faction.OLYMPIANS, Faction.CHTHONIANS


@pytest.fixture
async def game(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> AsyncIterator[tuple[Game, Oracle]]:
    game, oracle = await live_game(http, server.ws_url, store)
    version = await store.version(game.room)
    yield game, oracle
    assert await store.version(game.room) == version, "a refused frame appended events"
    for client in game.seats.values():
        await client.close()


async def still_usable(client: WsClient) -> None:
    await client.send({"type": "ping"})
    assert (await client.expect("pong", "error"))["type"] == "pong"


async def error_of(client: WsClient) -> dict:
    return await client.expect("error")


async def test_malformed_frames(game: tuple[Game, Oracle], server: ServerThread) -> None:
    g, _ = game
    client = g.seats[OLY]
    for frame, code in (
        ("{not json", "bad_frame"),
        ("[1, 2]", "bad_frame"),
        ('{"kind": "hello"}', "bad_frame"),
        ("[" * 5000 + "]" * 5000, "bad_frame"),
        (b"\x81\xa4type\xa4ping", "bad_frame"),  # binary on the JSON subprotocol
        ('{"type": "teleport"}', "unknown_type"),
    ):
        await client.ws.send(frame)
        error = await error_of(client)
        assert error["code"] == code, (frame[:20], error)
        assert error["sentence"]
        await still_usable(client)

    packed = await WsClient.open(server.ws_url, "olympus.msgpack")
    for frame in (b"\xc1", b"\x92\x01", "text on msgpack", msgpack.packb({"type": 7})):
        await packed.ws.send(frame)
        assert (await error_of(packed))["code"] == "bad_frame"
        await still_usable(packed)
    await packed.close()


async def test_oversized_frames(game: tuple[Game, Oracle], server: ServerThread) -> None:
    g, _ = game
    client = g.seats[OLY]
    big = json.dumps({"type": "ping", "pad": "x" * (server.settings.max_frame_bytes + 1)})
    await client.ws.send(big)
    assert (await error_of(client))["code"] == "too_large"
    await still_usable(client)
    # Beyond the hard limit uvicorn does not even buffer it: the socket is closed (1009).
    huge = WsClient(await _raw(server))
    with contextlib.suppress(ConnectionClosed):  # the server may close before the send ends
        await huge.send({"type": "ping", "pad": "x" * (server.settings.hard_frame_bytes + 1)})
    assert await huge.wait_closed() == 1009


async def _raw(server: ServerThread):
    from websockets.asyncio.client import connect

    return await connect(server.ws_url, subprotocols=["olympus.json"], max_size=None)


async def test_hello_problems(game: tuple[Game, Oracle], server: ServerThread) -> None:
    g, _ = game
    client = await WsClient.open(server.ws_url)
    reply = await client.command("c1", {"type": "liturgy"})
    assert reply["type"] == "error" and reply["code"] == "hello_first"
    for hello, code in (
        ({}, "bad_hello"),
        ({"token": "t1.x", "spectate": g.room}, "bad_hello"),
        ({"spectate": g.room, "last_seq": -1}, "bad_hello"),
        ({"spectate": "no-such-room"}, "room_not_found"),
        ({"spectate": "../etc"}, "room_not_found"),
    ):
        assert (await client.hello(**hello))["code"] == code, hello
    assert (await client.hello(spectate=g.room))["type"] == "welcome"
    assert (await client.hello(spectate=g.room))["code"] == "already_hello"
    await still_usable(client)
    await client.close()


@pytest.mark.parametrize(
    "token",
    [
        "nonsense",
        "t1.room.olympians.1.AAAAAAAAAAAAAAAAAAAAAA",
        "t2.room.olympians.1.AAAAAAAAAAAAAAAAAAAAAA",
    ],
)
async def test_forged_tokens_are_refused_and_closed(
    game: tuple[Game, Oracle], server: ServerThread, token: str
) -> None:
    client = await WsClient.open(server.ws_url)
    error = await client.hello(token=token)
    assert error["type"] == "error" and error["code"] == "bad_token"
    assert await client.wait_closed() == 4401


async def test_a_token_altered_to_another_seat_or_room_is_refused(
    game: tuple[Game, Oracle], server: ServerThread
) -> None:
    g, _ = game
    version, room, _, generation, mac = g.tokens[OLY].split(".")
    for altered in (
        f"{version}.{room}.chthonians.{generation}.{mac}",
        f"{version}.{room}x.olympians.{generation}.{mac}",
        f"{version}.{room}.olympians.{int(generation) + 1}.{mac}",
    ):
        client = await WsClient.open(server.ws_url)
        assert (await client.hello(token=altered))["code"] == "bad_token"
        assert await client.wait_closed() == 4401


async def test_commands_the_rules_refuse(game: tuple[Game, Oracle]) -> None:
    g, oracle = game
    # Out of turn: the Chthonians move first (R2).
    reply = await g.seats[OLY].command("c1", {"type": "liturgy"})
    assert reply["type"] == "error" and reply["code"] == "not_your_turn" and reply["id"] == "c1"
    # An illegal move: the rules' own code and sentence pass through unchanged.
    unit = next(u for u in oracle.state.units_of(CHT))
    far = {"type": "move", "units": [unit], "to": 35}
    try:
        execute(oracle.state, parse_command({**far, "side": "chthonians"}))
    except IllegalCommand as illegal:
        expected = (illegal.code, illegal.sentence)
    else:
        raise AssertionError("the move should be illegal")
    reply = await g.seats[CHT].command("c2", far)
    assert (reply["code"], reply["sentence"]) == expected
    await still_usable(g.seats[CHT])


async def test_commands_the_protocol_refuses(game: tuple[Game, Oracle], server) -> None:
    g, _ = game
    client = g.seats[CHT]
    for command, code in (
        ({"type": "liturgy", "side": "olympians"}, "side_not_allowed"),
        ({"type": "liturgy", "at_ms": 0}, "side_not_allowed"),
        ({"type": "timeout"}, "system_command"),
        ({"type": "draw_random_setup", "seed": 1}, "system_command"),
        ({"type": "fly_to_the_moon"}, "bad_command"),
        ({"type": "move", "units": [], "to": 3}, "bad_command"),
        ("liturgy", "bad_command"),
    ):
        reply = await client.command("c1", command)
        assert (reply["type"], reply["code"], reply["id"]) == ("error", code, "c1"), command
    for bad_id in (None, "", "x" * 65, "spaces are bad", 7):
        await client.send({"type": "command", "id": bad_id, "command": {"type": "liturgy"}})
        assert (await error_of(client))["code"] == "bad_id"
    await still_usable(client)

    spectator = await WsClient.open(server.ws_url)
    await spectator.hello(spectate=g.room)
    reply = await spectator.command("c1", {"type": "liturgy"})
    assert reply["code"] == "spectator"
    await still_usable(spectator)
    await spectator.close()


async def test_a_flood_is_rate_limited_then_closed(
    game: tuple[Game, Oracle], start_server: Callable[..., ServerThread]
) -> None:
    # A bucket that does not refill within the test: what passes cannot depend on how fast
    # this box sends and serves the frames.
    server = start_server(rate_per_second=1e-9, rate_burst=5)
    g, _ = game
    client = await seat(server.ws_url, g, OLY)
    sent_pings = server.settings.rate_burst - 1  # the hello took one token
    frames = [json.dumps({"type": "ping"})] * sent_pings + [
        json.dumps({"type": "command", "id": f"f{i}", "command": {"type": "liturgy"}})
        for i in range(20)
    ]
    for frame in frames:
        with contextlib.suppress(ConnectionClosed):  # closed by the server mid-flood
            await client.ws.send(frame)
    assert await client.wait_closed() == 4429
    refused = [m for m in client.messages if m["type"] == "error"]
    assert {m["code"] for m in refused} == {"rate_limited"}
    # Each refusal names the command it refused, so that a client knows what to resend.
    strikes = server.settings.rate_strikes
    assert [m["id"] for m in refused] == [f"f{i}" for i in range(strikes)]
    assert sum(m["type"] == "pong" for m in client.messages) == sent_pings
    assert not any(m["type"] == "ack" for m in client.messages)


async def test_silence_after_connecting_is_closed(
    start_server: Callable[..., ServerThread],
) -> None:
    server = start_server(hello_timeout=0.3)
    client = await WsClient.open(server.ws_url)
    assert await client.wait_closed() == 4408
    assert client.messages[-1]["code"] == "hello_timeout"


async def test_a_seat_resumes_after_bad_input(
    game: tuple[Game, Oracle], server: ServerThread
) -> None:
    g, oracle = game
    await g.seats[OLY].ws.send("{oops")
    assert (await error_of(g.seats[OLY]))["code"] == "bad_frame"
    again = await seat(server.ws_url, g, OLY, last_seq=0, epoch=g.epoch)
    await again.wait_seq(len(oracle.messages(OLY)))
    await again.close()
