"""The web stack's floor: what one command's frames cost with no game, no Redis, no options.

``load_bench.py`` measures the service; this measures what the service cannot go below on the
same machine with the same parts. A bare Starlette app on uvicorn (the same ``uvicorn_config``
as ``olympus serve``: uvloop, httptools, websockets-sansio, no compression), sending as the
service does (``ws_protocol.FrameSender``: frames written straight to the transport), relays
the frames a real command produces, recorded beforehand from a random game played with the
rules engine: the events (with the ``ack``, to the sender), the events to the opponent and to
the spectator, and the next position's ``legal`` (one, to the other seat: the service sends one
to each seat with options, two in some combat positions), each batched into one frame per
socket as the service does. The load generator is a minimal one on ``load_bench.py``'s parts
(the websockets client, msgpack, uvloop, 2 processes): N rooms × 3 sockets in a closed loop,
where the seat sent a ``legal`` sends the next command at once, and nothing is tracked.

So the server does per command what ``olympus serve`` does at the socket level (one frame in,
four out, of the same sizes), and nothing else. Its CPU per command is the floor under the
service's; the service's own work (deciding, appending, fanning out, listing the next options)
comes on top of it. docs/performance.md uses it to say how far one process can go. (It runs at
thousands of commands per second where the service runs at hundreds: per-command costs of the
socket layer do not grow with the rate, but batching in the event loop may make them a little
lower here.)

    .venv/bin/python bench/ws_floor_bench.py --rooms 500
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import math
import multiprocessing
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import msgpack
import uvicorn
import uvloop
from load_bench import cpu_ticks, free_port, raise_fd_limit
from starlette.applications import Starlette
from starlette.routing import WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect
from websockets.asyncio.client import connect

from olympus.bots import play_random_game
from olympus.rules import Faction, legal_actions
from olympus.rules.observation import observe_event
from olympus.server import protocol
from olympus.server.protocol import MSGPACK
from olympus.server.serve import uvicorn_config
from olympus.server.settings import Settings
from olympus.server.ws_protocol import FrameSender

# (to the sender: events + ack, to the opponent, to the spectator, the next legal) per command
Script = list[tuple[bytes, bytes, bytes, bytes]]


def record(seed: int) -> Script:
    """Each command of a random game (setup excluded) as the frames the service sends for it."""
    script: Script = []
    seqs = {audience: 0 for audience in (*Faction, None)}

    def frames(audience: Faction | None, before: Any, events: list[Any], after: Any) -> list[bytes]:
        out = []
        for e in events:  # (intermediate states do not change which events a seat receives)
            message = observe_event(e, audience, before, after)
            if message is not None:
                seqs[audience] += 1
                out.append(MSGPACK.encode(protocol.event(seqs[audience], message)))
        return out

    def observe(before: Any, action: Any, events: list[Any], after: Any) -> None:
        sender = action.command.side
        mine = frames(sender, before, events, after)
        mine.append(MSGPACK.encode(protocol.ack("c1", seqs[sender])))
        theirs = frames(sender.enemy, before, events, after)
        spectator = frames(None, before, events, after)
        nxt = next((f for f in Faction if legal_actions(after, f)), sender.enemy)
        options = MSGPACK.encode(protocol.legal(seqs[nxt], legal_actions(after, nxt)))
        batch = MSGPACK.batch
        script.append((batch(mine), batch(theirs), batch(spectator), options))

    play_random_game(random.Random(seed), observe=observe)
    return script


# -- the server: relays the recorded frames -------------------------------------------------------


def serve(port: int, script_file: str) -> None:
    script: Script = [tuple(x) for x in msgpack.unpackb(Path(script_file).read_bytes())]
    rooms: dict[str, dict[str, FrameSender]] = {}

    async def endpoint(ws: WebSocket) -> None:
        await ws.accept(subprotocol="olympus.msgpack")
        hello = msgpack.unpackb(await ws.receive_bytes())
        room = rooms.setdefault(hello["room"], {})
        me = room[hello["seat"]] = FrameSender(ws)
        while len(room) < 3:  # the room's other sockets may still be saying hello
            await asyncio.sleep(0.01)
        try:
            while True:
                command = msgpack.unpackb(await ws.receive_bytes())
                mine, theirs, spectator, options = script[command["n"] % len(script)]
                other = room["b" if hello["seat"] == "a" else "a"]
                await me.send(mine)
                await other.send(theirs)
                await room["s"].send(spectator)
                await other.send(options)
        except WebSocketDisconnect:
            return

    gc.collect()
    gc.freeze()
    gc.set_threshold(*Settings.gc_thresholds)
    app = Starlette(routes=[WebSocketRoute("/ws", endpoint)])
    settings = Settings(redis_url="unused")
    uvicorn.Server(uvicorn_config(app, settings, "127.0.0.1", port)).run()


# -- the load generator ---------------------------------------------------------------------------


async def play(url: str, name: str, counter: list[int], stop: float) -> None:
    sockets = {}
    for seat in ("a", "b", "s"):
        ws = await connect(url, subprotocols=["olympus.msgpack"], compression=None, max_queue=None)
        await ws.send(msgpack.packb({"room": name, "seat": seat}))
        sockets[seat] = ws
    sent = 0

    async def seat(me: str) -> None:
        nonlocal sent
        ws = sockets[me]
        if me == "a":
            sent += 1
            await ws.send(msgpack.packb({"type": "command", "id": str(sent), "n": sent}))
        async for frame in ws:
            data = msgpack.unpackb(frame)
            for message in data if isinstance(data, list) else [data]:
                if message.get("type") == "legal" and time.monotonic() < stop:
                    counter[0] += 1
                    sent += 1
                    await ws.send(msgpack.packb({"type": "command", "id": str(sent), "n": sent}))

    async def drain() -> None:
        async for frame in sockets["s"]:
            msgpack.unpackb(frame)

    await asyncio.gather(seat("a"), seat("b"), drain())


def generate(url: str, rooms: range, server: int, pipe: Any) -> None:
    """Play ``rooms``; once each has had an answer, say so on ``pipe``, take the window to
    measure from it (monotonic start and end), and send what was measured in it."""
    uvloop.install()
    gc.collect()
    gc.freeze()
    gc.set_threshold(*Settings.gc_thresholds)

    async def run() -> None:
        counter = [0]
        for i in rooms:
            asyncio.get_running_loop().create_task(play(url, f"r{i}", counter, math.inf))
        while counter[0] < len(rooms):  # as many answers as rooms: they are connected, playing
            await asyncio.sleep(0.01)
        pipe.send("playing")
        start, end = await asyncio.to_thread(pipe.recv)
        await asyncio.sleep(start - time.monotonic())
        c0, own0, srv0 = counter[0], time.process_time(), cpu_ticks(server)
        await asyncio.sleep(end - time.monotonic())
        c1, own1, srv1 = counter[0], time.process_time(), cpu_ticks(server)
        pipe.send((c1 - c0, own1 - own0, (srv1 - srv0) / os.sysconf("SC_CLK_TCK")))

    asyncio.run(run())


def wait_listening(port: int, server: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if server.poll() is not None:
            raise RuntimeError("the floor server exited")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        if time.monotonic() > deadline:
            raise TimeoutError("the floor server did not listen")
        time.sleep(0.1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rooms", type=int, default=500)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--warmup", type=float, default=8.0, help="connect and play, unmeasured")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--serve", nargs=2, metavar=("PORT", "SCRIPT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(int(args.serve[0]), args.serve[1])
        return 0
    raise_fd_limit()
    script = record(args.seed)
    script_file = Path(tempfile.mkdtemp(prefix="ws-floor-")) / "script.msgpack"
    script_file.write_bytes(msgpack.packb(script))
    port = free_port()
    server = None
    procs: list[multiprocessing.process.BaseProcess] = []
    try:
        command = [sys.executable, __file__, "--serve", str(port), str(script_file)]
        server = subprocess.Popen(command)
        wait_listening(port, server)
        ctx = multiprocessing.get_context("spawn")
        pipes = []
        for w in range(args.workers):
            parent, child = ctx.Pipe()
            mine = range(w, args.rooms, args.workers)
            url = f"ws://127.0.0.1:{port}/ws"
            proc = ctx.Process(target=generate, args=(url, mine, server.pid, child))
            proc.start()
            child.close()  # so that a worker that dies is an EOFError here, not a hang
            pipes.append(parent)
            procs.append(proc)
        for pipe in pipes:  # the window starts once every room plays, however long that took
            assert pipe.recv() == "playing"
        start = time.monotonic() + args.warmup
        for pipe in pipes:
            pipe.send((start, start + args.seconds))
        results = [pipe.recv() for pipe in pipes]
    finally:
        for proc in procs:
            proc.terminate()
            proc.join()
        if server is not None:
            server.terminate()
            server.wait()
        shutil.rmtree(script_file.parent)
    commands = sum(r[0] for r in results)
    if not commands:
        raise SystemExit("ws_floor_bench: no command was answered in the window")
    sizes = [sum(len(f) for f in frames) for frames in script]
    report = {
        "rooms": args.rooms,
        "sockets": args.rooms * 3,
        "seconds": args.seconds,
        "recorded_commands": len(script),
        "bytes_out_per_command_mean": round(sum(sizes) / len(sizes)),
        "commands_per_second": round(commands / args.seconds, 1),
        "server_cpu_percent": round(100 * results[0][2] / args.seconds, 1),
        "server_cpu_ms_per_command": round(1000 * results[0][2] / commands, 3),
        "load_generator_cpu_ms_per_command": round(1000 * sum(r[1] for r in results) / commands, 3),
    }
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
