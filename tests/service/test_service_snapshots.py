"""Snapshots (snapshots.py): saved every N events, loading = the latest snapshot + its tail.

A process that loads a room from a snapshot must be indistinguishable from one that folded the
whole log: the same numbering and bytes for every audience, resumes from after the snapshot,
and the whole log at the game's end and over HTTP. A snapshot that does not fit is ignored.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import replace

import httpx
import msgpack
import pytest
from service_harness import (
    TIMEOUT,
    Oracle,
    ServerThread,
    WsClient,
    check_feed,
    create_game,
    drive,
    move_seats,
    played_game,
    room_loads,
    seat,
    setup_command,
)

from olympus.rules import Faction
from olympus.server import snapshots
from olympus.server.snapshots import RoomSnapshot
from olympus.store import EventStore

EVERY = 10
START = {"last_seq": 0}


def events_raw(client: WsClient) -> list[str | bytes]:
    return [r for m, r in zip(client.messages, client.raw, strict=True) if m["type"] == "event"]


def views_raw(client: WsClient) -> list[str | bytes]:
    return [r for m, r in zip(client.messages, client.raw, strict=True) if m["type"] == "view"]


def game_overs(client: WsClient) -> list[dict]:
    return [m for m in client.messages if m["type"] == "game_over"]


async def test_a_room_restored_from_a_snapshot_plays_on_as_if_folded_whole(
    start_server: Callable[..., ServerThread], store: EventStore
) -> None:
    first, second = start_server(snapshot_every=EVERY), start_server(snapshot_every=EVERY)
    async with (
        httpx.AsyncClient(base_url=first.url, timeout=30) as http,
        httpx.AsyncClient(base_url=second.url, timeout=30) as http2,
    ):
        game = await create_game(http, move_seconds=3600, commit_seconds=3600)  # views: clocks
        oracle = Oracle(store, game.room)
        start = {**START, "epoch": game.epoch}
        for faction in Faction:
            await seat(first.ws_url, game, faction, **start)
        watcher = await WsClient.open(first.ws_url)  # sees the whole game on the first process
        await watcher.hello(spectate=game.room, **start)
        seats = [(f, game.seats[f]) for f in Faction]
        await drive(game, oracle, random.Random(11), [*seats, (None, watcher)], commands=12)

        stored = await store.load_snapshot(game.room)
        assert stored is not None and EVERY <= stored.version <= oracle.state.version
        snapshot = snapshots.decode(stored)
        assert snapshot.state == oracle.states[stored.version]  # the fold, exactly
        assert snapshot.seqs == {
            a: sum(1 for k, _ in oracle.observed(a) if k < stored.version) for a in (*Faction, None)
        }

        # The seats move to the second process, which loads the room from the snapshot.
        resume = {f: c.seq for f, c in seats}
        for faction, client in seats:
            await client.close()
            again = await seat(
                second.ws_url, game, faction, last_seq=resume[faction], epoch=game.epoch
            )
            assert again.resumed_from == resume[faction]  # after the snapshot: resumed
        metrics = (await http2.get("/metrics")).text
        assert room_loads(metrics, "snapshot") == 1 and room_loads(metrics, "log") == 0
        follower = await WsClient.open(second.ws_url)  # from after the snapshot: resumed
        await follower.hello(spectate=game.room, last_seq=watcher.seq, epoch=game.epoch)
        assert follower.resumed_from == watcher.seq
        fresh = await WsClient.open(second.ws_url)  # no resume token: a fresh view
        await fresh.hello(spectate=game.room)
        assert (await fresh.expect("view"))["seq"] == watcher.seq
        whole = await WsClient.open(first.ws_url)  # the same view from the whole fold
        await whole.hello(spectate=game.room)
        await whole.expect("view")
        assert views_raw(fresh) == views_raw(whole) and "deadlines" in views_raw(fresh)[0]

        # A resume from before the snapshot, on a process that restored the room: it reads the
        # messages before the snapshot again and resumes as anywhere else.
        third = start_server(snapshot_every=EVERY)
        early = await WsClient.open(third.ws_url)
        assert (await early.hello(spectate=game.room, **start))["resumed"] is True
        await early.wait_seq(watcher.seq)
        assert events_raw(early) == events_raw(watcher)

        # A command applied before the snapshot, resent to a process that restored the room:
        # the same ack as the first time (its number is in the messages before the snapshot).
        fourth = start_server(snapshot_every=EVERY)
        [first_ack] = [m for m in seats[0][1].messages if m.get("id") == "setup"]
        resent = await WsClient.open(fourth.ws_url)
        await resent.hello(token=game.tokens[Faction.OLYMPIANS])
        rng = random.Random(11)  # drive's: the very setup it sent (ids name one command)
        setup = {f: setup_command(rng, f) for f in Faction}[Faction.OLYMPIANS]
        assert await resent.command("setup", setup) == first_ack
        for server in (third, fourth):
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as http_n:
                assert room_loads((await http_n.get("/metrics")).text, "snapshot") == 1

        seats = [(f, game.seats[f]) for f in Faction]
        clients = [*seats, (None, watcher), (None, follower)]
        await drive(game, oracle, random.Random(12), clients, setup=False)  # ends restored
        for audience, client in clients:
            check_feed(client, audience, oracle)
            await client.wait_for(lambda c=client: bool(game_overs(c)))
            [over] = game_overs(client)
            assert over["log"] == oracle.log()  # the events before the snapshot too
        # Byte for byte what the process that folded the whole log sent.
        assert events_raw(follower) == events_raw(watcher)[-len(follower.events()) :]
        log = (await http2.get(f"/rooms/{game.room}/log")).json()
        assert log["over"] is True and log["events"] == oracle.log()


async def test_a_snapshot_that_does_not_fit_is_ignored(
    start_server: Callable[..., ServerThread], store: EventStore
) -> None:
    """Garbage, another format, a state of another version, or of another history (the event
    at its version is not the one it was folded from): the room is replayed whole. The same
    snapshot built right is used."""
    game, oracle = await played_game(start_server(snapshot_every=0), store, commands=6, seed=5)
    version = oracle.state.version
    assert await store.load_snapshot(game.room) is None  # snapshot_every=0: none saved
    seqs = {a: len(oracle.messages(a)) for a in (*Faction, None)}
    [event] = await store.read(game.room, version - 1, count=1)
    last = event.chain
    right = RoomSnapshot(oracle.states[version], seqs, last)
    cases = [
        (b"\xc1 not msgpack", "log"),
        (msgpack.packb({"f": snapshots.FORMAT}), "log"),  # no state, no counts
        (msgpack.packb({"f": snapshots.FORMAT + 1, "state": b"", "seqs": [0, 0, 0]}), "log"),
        (snapshots.encode(replace(right, state=oracle.states[version - 1])), "log"),
        (snapshots.encode(replace(right, seqs={None: 0})), "log"),  # no seats
        (snapshots.encode(replace(right, last="0" * 40)), "log"),  # of another history
        (snapshots.encode(right), "snapshot"),
    ]
    for k, (data, source) in enumerate(cases):
        await store.redis.delete(store.keys(game.room).snapshot)
        assert await store.save_snapshot(game.room, version, data)
        other = start_server(snapshot_every=0)
        spectator = await WsClient.open(other.ws_url)
        await spectator.hello(spectate=game.room)
        view = await spectator.expect("view")
        assert view["seq"] == len(oracle.messages(None)), k
        async with httpx.AsyncClient(base_url=other.url, timeout=30) as http2:
            metrics = (await http2.get("/metrics")).text
        loaded = (room_loads(metrics, "log"), room_loads(metrics, "snapshot"))
        assert loaded == ((1, 0) if source == "log" else (0, 1)), k
        await spectator.close()


async def logged(caplog: pytest.LogCaptureFixture, message: str, room: str) -> None:
    """Wait until the service has logged ``message`` about ``room``."""
    async with asyncio.timeout(TIMEOUT):
        while not any(
            r.getMessage() == message and getattr(r, "room", None) == room for r in caplog.records
        ):
            await asyncio.sleep(0.02)


@pytest.mark.parametrize("read_by", ["socket_attach", "http_log"])
async def test_game_over_waits_for_a_readable_log(
    read_by: str,
    start_server: Callable[..., ServerThread],
    store: EventStore,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A restored room cannot read its whole log when the game ends (here: someone trimmed the
    stream's head): no ``game_over`` yet, nothing half-sent, and the HTTP log says so. Once the
    log is whole again, the next socket to attach, or the next HTTP log, makes the room read
    it, and every socket gets ``game_over``.

    "No ``game_over`` yet" is checked once the room's own attempt to read the whole log has
    failed (its warning), and after a reply that leaves each seat's socket behind anything
    queued to it before: a command refused because the game is over."""
    first, second = start_server(snapshot_every=EVERY), start_server(snapshot_every=EVERY)
    game, oracle = await played_game(first, store, commands=12)
    assert await store.load_snapshot(game.room) is not None
    await move_seats(game, second)  # the second process restores the room from the snapshot
    events = store.keys(game.room).events
    head = await store.redis.xrange(events, "-", "+", count=3)
    assert await store.redis.xtrim(events, minid=head[-1][0], approximate=False) == 2

    await drive(game, oracle, random.Random(12), [], setup=False)  # to the end
    for faction, client in game.seats.items():
        await client.wait_seq(len(oracle.messages(faction)))
    async with httpx.AsyncClient(base_url=second.url, timeout=30) as http2:
        trimmed = await http2.get(f"/rooms/{game.room}/log")
        assert trimmed.status_code == 503 and trimmed.json()["code"] == "log_unavailable"
        await logged(caplog, "reading the whole log failed", game.room)  # at the game's end
        for n, client in enumerate(game.seats.values()):
            refused = await client.command(f"late-{n}", {"type": "liturgy"})
            assert (refused["type"], refused["code"]) == ("error", "game_over"), refused
        clients = list(game.seats.values())
        assert not any(game_overs(c) for c in clients)  # the whole log could not be read

        whole = await store.redis.xrange(events, "-", "+")
        await store.redis.delete(events)
        for entry_id, fields in [*head[:2], *whole]:
            await store.redis.xadd(events, fields, id=entry_id)
        if read_by == "http_log":
            log = (await http2.get(f"/rooms/{game.room}/log")).json()
            assert log["over"] is True and log["events"] == oracle.log()
        spectator = await WsClient.open(second.ws_url)  # gets it at once after an HTTP log
        await spectator.hello(spectate=game.room)
    for client in [*clients, spectator]:
        await client.wait_for(lambda c=client: bool(game_overs(c)))
        [over] = game_overs(client)
        assert over["log"] == oracle.log()
