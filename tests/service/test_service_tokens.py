"""Seat tokens: HMAC-bound to room and seat, shared by every process, revocable."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest
from service_harness import ServerThread, WsClient, create_game, live_game, seat

from olympus.rules import Faction
from olympus.server import tokens
from olympus.server.tokens import SeatClaim, TokenError
from olympus.store import EventStore

# The service's own logic: on the memory backend (tests/store shows both backends alike).
pytestmark = pytest.mark.memory_store

SECRET = b"k" * 32


def test_sign_and_verify() -> None:
    claim = SeatClaim("room-1", "olympians", 3)
    token = tokens.sign(SECRET, claim)
    assert tokens.verify(SECRET, token) == claim
    with pytest.raises(TokenError):
        tokens.verify(b"another key", token)
    for bad in (None, 42, "", token + "x", token.replace("olympians", "chthonians"), "a" * 300):
        with pytest.raises(TokenError):
            tokens.verify(SECRET, bad)


async def test_every_process_accepts_every_process_tokens(
    http: httpx.AsyncClient, server: ServerThread, start_server: Callable[..., ServerThread]
) -> None:
    other = start_server()
    game = await create_game(http)  # tokens signed by the first server
    client = await seat(other.ws_url, game, Faction.CHTHONIANS)
    assert client.messages[0]["seat"] == "chthonians"
    # No OLYMPUS_SECRET configured: the first process stored one in Redis for all.
    assert server.services.secret == other.services.secret != b""
    await client.close()


async def test_revocation_closes_old_sockets_everywhere(
    http: httpx.AsyncClient,
    server: ServerThread,
    start_server: Callable[..., ServerThread],
    store: EventStore,
) -> None:
    other = start_server()
    game, _ = await live_game(http, server.ws_url, store)
    version = await store.version(game.room)
    old = game.tokens[Faction.OLYMPIANS]
    elsewhere = await seat(other.ws_url, game, Faction.OLYMPIANS)  # the same seat, other process

    revoked = await http.post(
        f"/rooms/{game.room}/revoke", headers={"authorization": f"Bearer {old}"}
    )
    assert revoked.status_code == 200, revoked.text
    new = revoked.json()["token"]
    assert new != old and revoked.json()["seat"] == "olympians"

    assert await game.seats[Faction.OLYMPIANS].wait_closed() == 4403
    assert await elsewhere.wait_closed() == 4403
    assert not game.seats[Faction.CHTHONIANS].closed  # the other seat is untouched

    again = await WsClient.open(server.ws_url)
    refused = await again.hello(token=old)
    assert refused["code"] == "token_revoked"
    assert await again.wait_closed() == 4403
    reuse = await http.post(
        f"/rooms/{game.room}/revoke", headers={"authorization": f"Bearer {old}"}
    )
    assert reuse.status_code == 401

    fresh = await WsClient.open(other.ws_url)
    assert (await fresh.hello(token=new))["seat"] == "olympians"
    assert await store.version(game.room) == version  # none of this touched the log
    await fresh.close()
