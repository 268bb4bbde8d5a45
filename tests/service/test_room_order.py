"""The order and numbering of what seats and spectators receive (room_feed.py, "Numbering" and
"Order"), message by message, on real servers: for every command, its events, then its
``ack`` to the seat that sent it, then each seat's next ``legal``; each audience numbered
1, 2, 3… without gaps, alike in every process; a hello answered with ``welcome``, the backlog,
``legal``, and ``game_over`` once the game is over.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import httpx
from service_harness import (
    Game,
    Oracle,
    ServerThread,
    WsClient,
    check_feed,
    create_game,
    room_loads,
    seat,
    setup_command,
    wire,
)

from olympus.bots import choose
from olympus.rules import Faction, Phase
from olympus.store import EventStore

OLY, CHT = Faction.OLYMPIANS, Faction.CHTHONIANS
START = {"last_seq": 0}  # with the room's epoch: every message from the first one

Watchers = list[tuple[Faction | None, WsClient]]


def game_over(client: WsClient) -> bool:
    return any(m["type"] == "game_over" for m in client.messages)


async def settle(oracle: Oracle, watchers: Watchers) -> None:
    """Wait until every socket has its audience's messages up to the end of the log, each
    seat's ``legal`` about its newest, and ``game_over`` if the game is over."""
    over = (await oracle.sync()).phase is Phase.OVER
    for audience, client in watchers:
        total = len(oracle.messages(audience))
        try:
            await client.wait_seq(total)
        except TimeoutError:
            raise AssertionError(f"{audience}: at message {client.seq} of {total}") from None
        if audience is not None:
            await client.latest_legal()
        if over:
            await client.wait_for(lambda c=client: game_over(c))


def check_batch(
    told: list[dict[str, Any]], audience: Faction | None, seq: int, ack: str | None, over: bool
) -> None:
    """What one socket received for one command (``told``; ``seq``: its newest message before
    it): the command's events, numbered on from ``seq``; then, to the seat that sent it, its
    ``ack`` (id ``ack``); then, to a seat that got events, its ``legal`` about the last; then
    ``game_over`` if the command ended the game."""
    events = [m for m in told if m["type"] == "event"]
    newest = seq + len(events)
    assert [m["seq"] for m in events] == list(range(seq + 1, newest + 1)), told
    expected = ["event"] * len(events)
    if ack is not None:
        expected.append("ack")
    if audience is not None and events:
        expected.append("legal")
    if over:
        expected.append("game_over")
    assert [m["type"] for m in told] == expected, (audience, told)
    for message in told:
        if message["type"] == "ack":
            assert (message["id"], message["seq"]) == (ack, newest), told
        if message["type"] == "legal":
            assert message["seq"] == newest, told


async def command_and_check(
    game: Game, oracle: Oracle, watchers: Watchers, side: Faction, command_id: str, command: Any
) -> None:
    """``side`` sends ``command`` on its seat's socket; then every socket's messages since
    must be the command's, in order (``check_batch``)."""
    starts = {client: len(client.messages) for _, client in watchers}
    seqs = {client: client.seq for _, client in watchers}
    sender = game.seats[side]
    reply = await sender.command(command_id, command)
    assert reply["type"] == "ack", reply
    await settle(oracle, watchers)
    over = oracle.state.phase is Phase.OVER
    for audience, client in watchers:
        told = client.messages[starts[client] :]
        ack = command_id if client is sender else None
        check_batch(told, audience, seqs[client], ack, over)


async def play(game: Game, oracle: Oracle, watchers: Watchers, seed: int) -> int:
    """Both setups, then random legal commands to the game's end, each checked on every
    socket (``command_and_check``); returns how many commands."""
    rng, played = random.Random(seed), 0
    await settle(oracle, watchers)
    for side in (OLY, CHT):
        await command_and_check(game, oracle, watchers, side, "setup", setup_command(rng, side))
    while oracle.state.phase is not Phase.OVER:
        action = choose(rng, oracle.state)
        assert action is not None and played < 1000
        side = action.command.side
        await command_and_check(game, oracle, watchers, side, f"c{played}", wire(action.command))
        played += 1
    return played


async def spectate(ws_url: str, game: Game, protocol: str = "olympus.json") -> WsClient:
    client = await WsClient.open(ws_url, protocol)
    welcome = await client.hello(spectate=game.room, **START, epoch=game.epoch)
    assert welcome["resumed"] is True, welcome
    return client


async def test_each_command_is_its_events_then_its_ack_then_the_next_legal(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    """On one process, command after command to the game's end: the seat that sent it gets
    the command's events, its ``ack`` (about the last of them) and its next ``legal``; the
    other seat the events and its ``legal``; a spectator the events alone; each numbered on
    without a gap; ``game_over`` after all of them at the end."""
    game = await create_game(http)
    oracle = Oracle(store, game.room)
    olympians = await seat(server.ws_url, game, OLY, "olympus.json", **START, epoch=game.epoch)
    chthonians = await seat(server.ws_url, game, CHT, "olympus.msgpack", **START, epoch=game.epoch)
    spectator = await spectate(server.ws_url, game)
    watchers: Watchers = [(OLY, olympians), (CHT, chthonians), (None, spectator)]
    assert await play(game, oracle, watchers, seed=3) > 5
    for audience, client in watchers:
        check_feed(client, audience, oracle)


async def test_each_audience_is_numbered_alike_in_every_process(
    start_server: Callable[..., ServerThread], store: EventStore
) -> None:
    """Two processes on one prefix, each seat commanding on its own, each audience watched
    from both (and the events of the other's appends read back): every socket of an audience
    gets the same messages under the same numbers, 1, 2, 3… without gaps, the order of each
    command's messages kept on both; and so does a process that loads the room afterwards,
    from a snapshot, for a resume from the first message."""
    first, second = start_server(snapshot_every=10), start_server(snapshot_every=10)
    async with httpx.AsyncClient(base_url=first.url, timeout=30) as http:
        game = await create_game(http)
    oracle = Oracle(store, game.room)
    hello = {**START, "epoch": game.epoch}
    watchers: Watchers = []
    for server in (first, second):
        for side in (OLY, CHT):
            watchers.append((side, await seat(server.ws_url, game, side, **hello)))
        watchers.append((None, await spectate(server.ws_url, game)))
    # The Olympians command on the first process, the Chthonians on the second.
    game.seats[OLY] = watchers[0][1]
    assert game.seats[CHT] is watchers[4][1]
    assert await play(game, oracle, watchers, seed=8) > 5

    late = start_server()  # loads the room from its latest snapshot, then reads what it lacks
    for audience in (OLY, CHT, None):
        if audience is None:
            client = await spectate(late.ws_url, game)
        else:
            client = await seat(late.ws_url, game, audience, **hello)
        await client.wait_seq(len(oracle.messages(audience)))
        watchers.append((audience, client))
    async with httpx.AsyncClient(base_url=late.url, timeout=30) as http:
        assert room_loads((await http.get("/metrics")).text, "snapshot") == 1
    for audience in (OLY, CHT, None):
        sockets = [client for heard, client in watchers if heard is audience]
        for client in sockets:
            check_feed(client, audience, oracle)  # numbered 1… without gaps, the audience's view
        numbered = [[(m["seq"], m["event"]) for m in client.events()] for client in sockets]
        assert len(sockets) == 3 and numbered[0] == numbered[1] == numbered[2]


async def test_a_hello_is_answered_welcome_backlog_legal_then_game_over(
    http: httpx.AsyncClient, server: ServerThread, store: EventStore
) -> None:
    """A hello is answered by ``welcome``, then the missed events (a resume) or a ``view``,
    then to a seat its ``legal`` about the newest of them; once the game is over, then
    ``game_over``. Nothing else comes between."""
    game = await create_game(http)
    oracle = Oracle(store, game.room)
    players = [await seat(server.ws_url, game, side) for side in (OLY, CHT)]
    await play(game, oracle, list(zip((OLY, CHT), players, strict=True)), seed=5)
    total = {side: len(oracle.messages(side)) for side in (OLY, CHT, None)}
    for hello, resumed in (({}, False), ({**START, "epoch": game.epoch}, True)):
        for side in (OLY, CHT, None):
            client = await WsClient.open(server.ws_url)
            if side is None:
                await client.hello(spectate=game.room, **hello)
            else:
                await client.hello(token=game.tokens[side], **hello)
            await client.wait_for(lambda c=client: game_over(c))
            kinds = [m["type"] for m in client.messages]
            backlog = ["event"] * total[side] if resumed else ["view"]
            legal = [] if side is None else ["legal"]
            assert kinds == ["welcome", *backlog, *legal, "game_over"], (side, kinds)
            assert client.messages[0]["resumed"] is resumed
            if side is not None:
                assert client.messages[-2]["seq"] == total[side]
                assert client.messages[-2]["waiting"] == "game_over"
            await client.close()
