"""Test harness: the real app on a real uvicorn, real websocket clients, and the truth in Redis.

``ServerThread`` runs one server process's worth (app + its own event loop) in a thread on a
socket bound to a free port; several of them on one Redis prefix behave like several
processes of one deployment. ``WsClient`` records every frame it receives, byte for byte, so
tests can compare what two seats or two games received. ``Oracle`` folds the room's log
straight from the store: what really happened, to check the service against.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import random
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

import httpx
import msgpack
import uvicorn
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from olympus.bots import choose
from olympus.rules import (
    Faction,
    GameState,
    Phase,
    decode,
    evolve,
    legal_actions,
    parse_command,
    random_placements,
)
from olympus.rules.combat import sees_commitment
from olympus.rules.events import Event, to_dict
from olympus.rules.observation import observe_event
from olympus.server import Settings, create_app
from olympus.server.serve import uvicorn_config
from olympus.store import EventStore

# How long a test waits for the server. Longer than the service's own Redis timeouts (10 s),
# so that a slow Redis shows up as the service's error reply, not as a silent client timeout;
# these tests are about what arrives, not how fast (the benchmarks measure that).
TIMEOUT = 30.0
# uvicorn waits this long for open connections before it cancels them (serve.py); stopping a
# server thread may take that, plus its lifespan shutdown.
STOP_TIMEOUT = 40.0


class Loopback:
    """The HTTP and websocket addresses of a server listening on a loopback ``port``."""

    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"


class UvicornThread(Loopback):
    """An ASGI app on uvicorn (``olympus serve``'s settings, ``uvicorn_config``, but for the
    ``overrides`` of its attributes) with its event loop in a background thread."""

    def __init__(self, app: Any, settings: Settings, **overrides: Any) -> None:
        self.settings = settings
        self.app = app
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        config = uvicorn_config(self.app, settings, "127.0.0.1", self.port)
        config.log_level = "warning"
        for name, value in overrides.items():
            setattr(config, name, value)
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.error: BaseException | None = None

    def _run(self) -> None:
        try:
            self.server.run(sockets=[self.sock])
        except BaseException as error:  # surfaced by start()/stop()
            self.error = error

    def start(self) -> Self:
        self.thread.start()
        deadline = time.monotonic() + TIMEOUT
        while not self.server.started:
            if self.error is not None or not self.thread.is_alive():
                raise RuntimeError(f"server failed to start: {self.error!r}")
            if time.monotonic() > deadline:
                raise TimeoutError("server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Shut down and wait; blocks the calling thread (see ``aclose`` in async code)."""
        self.server.should_exit = True
        self.thread.join(STOP_TIMEOUT)
        self.sock.close()
        if self.thread.is_alive():
            raise RuntimeError(f"server did not stop; where it waits:\n{self._where()}")

    def _where(self) -> str:
        """The server thread's stack and its event loop's unfinished tasks (a diagnosis)."""
        frame = sys._current_frames().get(self.thread.ident or 0)
        where = ["".join(traceback.format_stack(frame)) if frame else "?"]
        loops = {s.get_loop() for s in self.server.servers}
        for task in (t for loop in loops for t in asyncio.all_tasks(loop)):
            stack = io.StringIO()
            task.print_stack(file=stack)
            where.append(stack.getvalue())
        return "\n".join(where)

    async def aclose(self) -> None:
        """Stop while this event loop keeps running, so its clients can answer close frames."""
        await asyncio.to_thread(self.stop)


class ServerThread(UvicornThread):
    """One service process (app, event loop, uvicorn) in a background thread."""

    def __init__(self, settings: Settings) -> None:
        super().__init__(create_app(settings), settings)

    @property
    def services(self) -> Any:
        return self.app.state.services


def jsonable(value: Any) -> Any:
    """``value`` as it comes back from the wire (tuples as lists, enums as strings)."""
    return json.loads(json.dumps(value))


def split_frame(frame: str | bytes) -> list[str | bytes]:
    """Each message's own bytes, in order: a frame is one message or an array of them."""
    if isinstance(frame, bytes):
        if frame[0] & 0xF0 != 0x90 and frame[0] not in (0xDC, 0xDD):  # not a msgpack array
            return [frame]
        unpacker = msgpack.Unpacker(raw=False)
        unpacker.feed(frame)
        unpacker.read_array_header()
        parts: list[str | bytes] = []
        while (start := unpacker.tell()) < len(frame):
            unpacker.skip()
            parts.append(frame[start : unpacker.tell()])
        return parts
    if not frame.startswith("["):
        return [frame]
    decoder, texts, at = json.JSONDecoder(), [], 1
    while frame[at] != "]":
        _, end = decoder.raw_decode(frame, at)
        texts.append(frame[at:end])
        at = end + 1 if frame[end] == "," else end
    return texts


def decode_frame(frame: str | bytes) -> dict[str, Any]:
    """One message's bytes, decoded."""
    return msgpack.unpackb(frame, raw=False) if isinstance(frame, bytes) else json.loads(frame)


class WsClient:
    """A websocket client that keeps every frame it gets, raw and decoded, in order.

    Every client still open is in ``WsClient.open_clients``, for the fixtures to close before
    they stop the servers.
    """

    open_clients: set[WsClient] = set()

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: list[str | bytes] = []  # as received
        self.raw: list[str | bytes] = []  # each message's own bytes (frames may batch several)
        self.messages: list[dict[str, Any]] = []
        self.read = 0  # messages consumed by next()
        self._arrived = asyncio.Condition()
        self._reader = asyncio.get_running_loop().create_task(self._read())
        self.close_code: int | None = None
        self.resumed_from = 0  # the last_seq of a hello that resumed: messages 1..it came before
        WsClient.open_clients.add(self)

    @classmethod
    async def open(cls, ws_url: str, protocol: str | None = "olympus.json") -> WsClient:
        subprotocols = [protocol] if protocol else None
        ws = await connect(ws_url, subprotocols=subprotocols, max_size=None, compression=None)
        return cls(ws)

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                self.frames.append(frame)
                for raw in split_frame(frame):
                    self.raw.append(raw)
                    self.messages.append(decode_frame(raw))
                async with self._arrived:
                    self._arrived.notify_all()
        except ConnectionClosed:
            pass
        finally:
            self.close_code = self.ws.close_code
            WsClient.open_clients.discard(self)
            async with self._arrived:
                self._arrived.notify_all()

    @property
    def closed(self) -> bool:
        return self._reader.done()

    async def send(self, message: dict[str, Any]) -> None:
        if self.ws.subprotocol == "olympus.msgpack":
            await self.ws.send(msgpack.packb(message, use_bin_type=True))
        else:
            await self.ws.send(json.dumps(message))

    async def next(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next message not yet consumed."""
        async with asyncio.timeout(timeout), self._arrived:
            await self._arrived.wait_for(lambda: self.read < len(self.messages) or self.closed)
        if self.read >= len(self.messages):
            raise ConnectionError(f"closed ({self.close_code}) with nothing more to read")
        self.read += 1
        return self.messages[self.read - 1]

    async def expect(self, *types: str, timeout: float = TIMEOUT) -> dict[str, Any]:
        """Consume messages until one of ``types`` comes."""
        while True:
            message = await self.next(timeout)
            if message["type"] in types:
                return message

    async def wait_closed(self, timeout: float = TIMEOUT) -> int | None:
        async with asyncio.timeout(timeout):
            await asyncio.shield(self._reader)
        return self.close_code

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = TIMEOUT) -> None:
        """Wait until ``predicate()`` holds (checked after each frame)."""
        async with asyncio.timeout(timeout), self._arrived:
            await self._arrived.wait_for(lambda: predicate() or self.closed)
        assert predicate(), f"closed ({self.close_code}) first"

    async def wait_seq(self, seq: int, timeout: float = TIMEOUT) -> None:
        """Wait until this client has received message number ``seq``."""
        await self.wait_for(lambda: self.seq >= seq, timeout)

    async def hello(self, **fields: Any) -> dict[str, Any]:
        await self.send({"type": "hello", **fields})
        welcome = await self.expect("welcome", "error")
        if welcome.get("resumed"):
            self.resumed_from = fields.get("last_seq") or 0
        return welcome

    async def command(self, command_id: str, command: dict[str, Any]) -> dict[str, Any]:
        """Send a command; its ``ack`` or ``error`` (the events before it stay readable)."""
        await self.send({"type": "command", "id": command_id, "command": command})
        while True:
            message = await self.next()
            if message["type"] in ("ack", "error") and message.get("id") in (command_id, None):
                return message  # an error without an id (a frame the server failed on) too

    @property
    def seq(self) -> int:
        """Number of the last message received (event seq, or a view's seq)."""
        for message in reversed(self.messages):
            if message["type"] in ("event", "view"):
                return message["seq"]
        return self.resumed_from

    def events(self) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["type"] == "event"]

    def legal(self) -> list[dict[str, Any]]:
        """The actions of the newest ``legal`` message, if it is about the current seq."""
        for message in reversed(self.messages):
            if message["type"] == "legal":
                return message["actions"] if message["seq"] == self.seq else []
            if message["type"] in ("event", "view"):
                return []
        return []

    async def latest_legal(self) -> dict[str, Any]:
        """The ``legal`` message about the client's newest message, once it has come."""

        def current() -> list[dict[str, Any]]:
            return [m for m in self.messages if m["type"] == "legal" and m["seq"] == self.seq]

        await self.wait_for(lambda: bool(current()))
        return current()[-1]

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await self.ws.close()
        with contextlib.suppress(Exception):
            await self._reader


def setup_from(legal: dict[str, Any]) -> dict[str, Any]:
    """A ``submit_setup`` built from a ``legal`` message's setup options alone: the leader and
    the next characters, each in a region of its own."""
    setup = legal["setup"]
    names = sorted(setup["characters"], key=lambda c: not c["leader"])[: setup["count"]]
    placements = {c["name"]: r for c, r in zip(names, setup["regions"], strict=False)}
    return {"type": "submit_setup", "placements": placements}


class Oracle:
    """The room's true state, folded from the store (what the service must agree with)."""

    def __init__(self, store: EventStore, room: str) -> None:
        self.store = store
        self.room = room
        self.state = GameState()
        self.events: list[Event] = []
        self.states: list[GameState] = [self.state]  # states[k] = after k events

    def observed(self, audience: Faction | None) -> list[tuple[int, dict[str, Any]]]:
        """(event index, message) for each event ``audience`` is sent (``observe_event``)."""
        found = []
        for k, event in enumerate(self.events):
            seen = observe_event(event, audience, self.states[k], self.states[k + 1])
            if seen is not None:
                found.append((k, jsonable(seen)))
        return found

    def messages(self, audience: Faction | None) -> list[dict[str, Any]]:
        """What ``audience`` must have received, in order."""
        return [message for _, message in self.observed(audience)]

    def log(self) -> list[dict[str, Any]]:
        return [jsonable(to_dict(e)) for e in self.events]

    async def sync(self) -> GameState:
        for stored in await self.store.read(self.room, self.state.version):
            event = decode(stored.data)
            self.state = evolve(self.state, event)
            self.events.append(event)
            self.states.append(self.state)
        return self.state


@dataclass
class Game:
    room: str
    epoch: str
    tokens: dict[Faction, str]
    seats: dict[Faction, WsClient] = field(default_factory=dict)


async def create_game(http: httpx.AsyncClient, **options: Any) -> Game:
    """Create a room (the creator takes the Olympians) and join the Chthonians."""
    created = (await http.post("/rooms", json={"side": "olympians", **options})).json()
    joined = (await http.post(f"/rooms/{created['room']}/join", json={})).json()
    assert joined["seat"] == "chthonians", joined
    tokens = {Faction.OLYMPIANS: created["token"], Faction.CHTHONIANS: joined["token"]}
    return Game(created["room"], created["epoch"], tokens)


async def seat(
    ws_url: str, game: Game, faction: Faction, protocol: str = "olympus.json", **hello: Any
) -> WsClient:
    client = await WsClient.open(ws_url, protocol)
    welcome = await client.hello(token=game.tokens[faction], **hello)
    assert welcome["type"] == "welcome", welcome
    game.seats[faction] = client
    return client


def wire(command: Any) -> dict[str, Any]:
    """A rules command as a client sends it (no server fields)."""
    return command.model_dump(mode="json", exclude={"side", "at_ms"})


def setup_command(rng: random.Random, faction: Faction) -> dict[str, Any]:
    return {"type": "submit_setup", "placements": random_placements(rng, faction)}


def legal_commands(actions: list[dict[str, Any]]) -> list[Any]:
    return [parse_command(a["command"]) for a in actions]


async def live_game(
    http: httpx.AsyncClient, ws_url: str, store: EventStore, seed: int = 1, **options: Any
) -> tuple[Game, Oracle]:
    """A game past its setup (the Chthonians to move), both seats connected from message 1;
    ``options``: the room's (``create_game``)."""
    game = await create_game(http, **options)
    rng = random.Random(seed)
    for faction in Faction:
        await seat(ws_url, game, faction, last_seq=0, epoch=game.epoch)
    for faction in Faction:
        reply = await game.seats[faction].command("setup", setup_command(rng, faction))
        assert reply["type"] == "ack", reply
    oracle = Oracle(store, game.room)
    await oracle.sync()
    for faction in Faction:
        await game.seats[faction].wait_seq(len(oracle.messages(faction)))
    return game, oracle


MAX_COMMANDS = 400


def legal_wire(state: GameState, side: Faction) -> list[dict[str, Any]]:
    """``side``'s actions as ``legal`` sends them, from the rules (an action's ``outcome``
    too: protocol.md)."""
    listed = []
    for a in legal_actions(state, side):
        entry: dict[str, Any] = {"command": wire(a.command), "honor": a.honor, "energy": a.energy}
        if a.outcome is not None:
            eliminated, result = a.outcome
            entry["outcome"] = {"eliminated": list(eliminated), "result": result}
        listed.append(entry)
    return listed


async def drive(
    game: Game,
    oracle: Oracle,
    rng: random.Random,
    watchers: list[tuple[Faction | None, WsClient]],
    *,
    setup: bool = True,
    commands: int | None = None,
) -> int:
    """Play random legal commands (after both setups, unless ``setup`` is False) to the end, or
    ``commands`` of them; check each seat's legal list before it acts. Returns how many."""
    if setup:
        for faction in Faction:
            reply = await game.seats[faction].command("setup", setup_command(rng, faction))
            assert reply["type"] == "ack", reply
    for n in range(MAX_COMMANDS if commands is None else commands + 1):
        state = await oracle.sync()
        for audience, client in watchers:  # every socket catches up with the log
            await client.wait_seq(len(oracle.messages(audience)))
        if state.phase is Phase.OVER or n == commands:
            return n
        action = choose(rng, state)
        assert action is not None
        side = action.command.side
        expected = legal_wire(state, side)
        client = game.seats[side]
        await client.wait_for(lambda c=client: c.legal() != [])
        assert jsonable(client.legal()) == jsonable(expected)
        reply = await client.command(f"c{state.version}", wire(action.command))
        assert reply["type"] == "ack", reply
    raise AssertionError("the random game did not end")


def check_feed(client: WsClient, audience: Faction | None, oracle: Oracle) -> None:
    """Per-seat numbering without gaps from the client's first message (1, or after the seq it
    resumed from), and exactly the seat's observation of the log."""
    events = client.events()
    observed = oracle.observed(audience)[client.resumed_from :]
    assert [m["seq"] for m in events] == list(
        range(client.resumed_from + 1, client.resumed_from + len(observed) + 1)
    )
    assert [m["event"] for m in events] == [message for _, message in observed]
    for k, seen in observed:  # R8: a sealed commitment stays sealed
        event = oracle.events[k]
        if event.TYPE == "combat_committed":
            after = oracle.states[k + 1]
            sealed = audience is None or (
                audience is not event.faction and not sees_commitment(after, audience)
            )
            assert ("maneuver" not in seen and "energy" not in seen) is sealed, seen


def room_loads(metrics: str, source: str) -> int:
    """``olympus_room_loads_total{source=...}`` from a /metrics text (0 if absent)."""
    line = f'olympus_room_loads_total{{source="{source}"}} '
    return sum(int(float(x.split()[-1])) for x in metrics.splitlines() if x.startswith(line))


async def played_game(
    server: ServerThread, store: EventStore, commands: int, seed: int = 11, **options: Any
) -> tuple[Game, Oracle]:
    """A game created on ``server``, both seats connected there, ``commands`` random commands
    played after the setups."""
    async with httpx.AsyncClient(base_url=server.url, timeout=TIMEOUT) as http:
        game = await create_game(http, **options)
    oracle = Oracle(store, game.room)
    for faction in Faction:
        await seat(server.ws_url, game, faction)
    await drive(game, oracle, random.Random(seed), [], commands=commands)
    return game, oracle


async def move_seats(game: Game, server: ServerThread) -> None:
    """Both players leave their process and connect to ``server`` (a fresh view each)."""
    for faction in Faction:
        await game.seats[faction].close()
        await seat(server.ws_url, game, faction)
