"""One websocket at ``/ws``: hello, commands, pings; and a ``Subscriber`` of at most one room.

Messages out go through a queue, so fan-out never waits for a slow socket: it queues and moves
on. Whatever was queued in one turn of the event loop is written at the next as one frame
(``Codec.batch``): one send per socket per turn, however many messages a command produced,
straight to the transport while it takes them, else by a writer task through ASGI. A room's
new events for a socket with nothing queued go straight to its transport as bytes built once
for every such socket of the audience (``deliver``). Frames in are handled one at a time; each
bad one gets an ``error`` frame, and the connection stays usable unless the error closes it.

Slow readers. What the process holds for one socket is bounded: its transport takes writes up
to ``send_high_water`` bytes unsent (then it is paused, and nothing more is read from the
client either, ws_protocol.py); what follows waits in the socket's queue. A socket whose queue
would pass ``send_buffer_bytes`` while its transport is still paused, or ``send_queue``
messages at any time, is closed with 4413 (``CLOSE_SLOW``): its queue is dropped, and a close
it does not read within ``close_grace_seconds`` drops the TCP connection. So a stalled socket
holds at most ``send_high_water`` + ``send_buffer_bytes`` + one batch. Seats and spectators
alike: a
client resumes from its last seq (or gets a fresh view) when it connects again. Nobody else
waits for it: fan-out only queues, and writes only to transports that take them.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from typing import TYPE_CHECKING, Any

from starlette.websockets import WebSocket

from olympus.rules import Faction
from olympus.store import RoomNotFound

from . import protocol, tokens
from .commentary import Commentary, NoCommentary, delay_of
from .logs import address
from .protocol import Codec, Frame, ProtocolError
from .ratelimit import TokenBucket
from .registry import RoomNotReady
from .room import CommandRejected, RoomRuntime, Submitted
from .ws_protocol import FrameSender, limit_pings, receiver

if TYPE_CHECKING:
    from .services import Services

log = logging.getLogger("olympus.server.connection")

_ids = itertools.count(1)
# Messages per frame at most: a resume's backlog goes out in frames of reasonable size.
BATCH_LIMIT = 256


class Connection:
    def __init__(self, ws: WebSocket, codec: Codec, services: Services) -> None:
        self.ws = ws
        self.sender = FrameSender(ws)
        self.write_wire = self.sender.write_wire
        self.receive = receiver(ws)
        self.codec = codec
        self.services = services
        self.settings = services.settings
        self.id = next(_ids)
        self.client = address(ws.client)
        self.queue: list[Frame] = []  # encoded messages not yet handed to the socket
        self.queued_bytes = 0  # their size
        self.sender.high_water(self.settings.send_high_water, self.settings.socket_send_buffer)
        self._abort_timer: asyncio.TimerHandle | None = None
        self._loop = asyncio.get_running_loop()
        self._flush_due = False  # ``_flush`` is scheduled for this turn of the loop
        self._wake = asyncio.Event()  # set when the writer task has something to do
        self._writing = False  # the writer task is sending: what is queued waits for it
        self.bucket = TokenBucket(self.settings.rate_per_second, self.settings.rate_burst)
        self.strikes = 0
        limit_pings(ws, self.settings.rate_per_second, self.settings.rate_burst)
        self.refusals = 0  # error frames sent: the first is logged, all are counted
        self.room: RoomRuntime | None = None
        self.commentary: Commentary | None = None  # the room's commentary, if it follows that
        # Subscriber fields (room.py)
        self.audience: Faction | None = None
        self.sent_seq = 0
        self.generation = 0
        self.closing: tuple[int, str] | None = None
        self.disconnected = False

    @property
    def kind(self) -> str:
        if self.room is None:
            return "pending"
        return "spectator" if self.audience is None else "seat"

    @property
    def watching(self) -> str | None:
        """The room this socket watches (a spectator's, the commentary's too), or None."""
        return self.room.room_id if self.room is not None and self.audience is None else None

    def _fields(self) -> dict[str, Any]:
        return {
            "conn": self.id,
            "client": self.client,
            "room": self.room.room_id if self.room else None,
            "seat": self.audience.value if self.audience else None,
        }

    # -- Subscriber -------------------------------------------------------------------------

    def push(self, frame: Frame) -> None:
        if self.closing is not None:
            return
        queued = self.queued_bytes + len(frame)
        settings = self.settings
        if len(self.queue) >= settings.send_queue or (
            queued > settings.send_buffer_bytes and self._behind()
        ):
            self._too_slow()
            return
        self.queue.append(frame)
        self.queued_bytes = queued
        if not self._flush_due:
            self._flush_due = True
            self._loop.call_soon(self._flush)

    def deliver(self, wire: bytes, frames: list[Frame], seq: int) -> None:
        """The event frames ``frames``, the socket's messages up to ``seq``, ``wire`` being
        them as one websocket frame built once for many sockets: written at once when nothing
        waits before it and the transport takes it, else queued as by ``push``."""
        self.sent_seq = seq
        if self.queue or self._writing or self.closing is not None or not self.write_wire(wire):
            for frame in frames:
                self.push(frame)

    def _behind(self) -> bool:
        """The client does not read what it is sent: its transport is over its high-water mark
        (or, where the protocol cannot say, the writer task waits for it)."""
        return self._writing or self.sender.paused()

    def _too_slow(self) -> None:
        """Close with 4413: the socket's queue would pass its bound while it reads nothing."""
        fields = {**self._fields(), "queued": len(self.queue), "bytes": self.queued_bytes}
        log.info("slow consumer disconnected", extra=fields)  # the client's doing
        self.services.metrics.slow_closed.inc(self.kind)
        self.queue.clear()
        self.queued_bytes = 0
        self.close(protocol.CLOSE_SLOW, "slow_consumer")

    def close(self, code: int, reason: str) -> None:
        """Close after what is queued has been sent; nothing pushed from now on is. If the
        close is not through within ``close_grace_seconds`` (a client that reads nothing
        never takes it), the connection is dropped."""
        if self.closing is None:
            self.closing = (code, reason)
            self._wake.set()
            grace = self.settings.close_grace_seconds
            self._abort_timer = self._loop.call_later(grace, self.sender.abort)

    # -- lifecycle --------------------------------------------------------------------------

    async def run(self) -> None:
        writer = asyncio.get_running_loop().create_task(self._write())
        try:
            await self._read()
        finally:
            if self.commentary is not None:
                self.commentary.detach(self)
            elif self.room is not None:
                self.room.feed.detach(self)
            if self.disconnected:
                writer.cancel()
            else:
                self.close(1000, "bye")
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(writer, 5)
            if self.disconnected and self._abort_timer is not None:
                self._abort_timer.cancel()

    def _flush(self) -> None:
        """Send what was queued in this turn of the loop, written to the socket at once
        (``FrameSender.write``). A frame the transport does not take now (paused, closing),
        and everything after it, is the writer task's to send, in order."""
        self._flush_due = False
        while self.queue and not self._writing:
            batch = self.queue[:BATCH_LIMIT]
            if not self.sender.write(self.codec.batch(batch)):
                self._wake.set()
                return
            del self.queue[:BATCH_LIMIT]
            self.queued_bytes -= sum(map(len, batch))

    async def _write(self) -> None:
        """The slow way and the end: what ``_flush`` could not write, through ASGI (which
        waits for a paused transport), then the close once everything queued is sent."""
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                self._writing = True
                while self.queue:
                    batch = self.queue[:BATCH_LIMIT]
                    del self.queue[:BATCH_LIMIT]
                    self.queued_bytes -= sum(map(len, batch))
                    await self.sender.send(self.codec.batch(batch))
                self._writing = False
                if self.closing is not None:
                    await self.ws.close(*self.closing)
                    return
        except Exception:  # the client went away mid-send; the reader sees the disconnect
            self.disconnected = True

    async def _read(self) -> None:
        loop = asyncio.get_running_loop()
        hello_by = loop.time() + self.settings.hello_timeout
        while self.closing is None:
            try:
                if self.room is not None:  # no timeout: wait_for would only cost time
                    message = await self.receive()
                else:
                    timeout = max(0.0, hello_by - loop.time())
                    message = await asyncio.wait_for(self.receive(), timeout)
            except TimeoutError:
                self._error("hello_timeout", "Say hello first.", close=protocol.CLOSE_HELLO_TIMEOUT)
                return
            if message["type"] == "websocket.disconnect":
                self.disconnected = True
                return
            frame = message.get("bytes")
            if frame is None:
                frame = message.get("text")
            try:
                await self._handle(frame)
            except ProtocolError as refused:
                self._error(refused.code, refused.sentence, refused.command_id, refused.close)
            except Exception:  # Redis down, a bug: say so, keep the socket
                log.exception("frame failed", extra=self._fields())
                self._error("unavailable", "The server could not handle that; try again.")

    def _error(
        self, code: str, sentence: str, command_id: str | None = None, close: int | None = None
    ) -> None:
        """Send an ``error`` frame (and close with ``close``). Counted in ``ws_errors``; only
        a connection's first is logged at INFO, so that no client can fill the log."""
        self.services.metrics.ws_errors.inc(code)
        self.refusals += 1
        level = logging.INFO if self.refusals == 1 else logging.DEBUG
        log.log(level, "refused: %s", sentence, extra={**self._fields(), "code": code})
        self.push(self.codec.encode(protocol.error(code, sentence, command_id)))
        if close is not None:
            self.close(close, code)

    # -- frames -----------------------------------------------------------------------------

    async def _handle(self, frame: Frame | None) -> None:
        if not self.bucket.take():
            self.strikes += 1
            close = protocol.CLOSE_FLOOD if self.strikes >= self.settings.rate_strikes else None
            raise ProtocolError(
                "rate_limited",
                "Too many messages: slow down.",
                command_id=self._refused_id(frame),
                close=close,
            )
        self.strikes = 0
        if frame is None:
            raise ProtocolError("bad_frame", "Empty frame.")
        size = len(frame) if isinstance(frame, bytes) else len(frame.encode())
        if size > self.settings.max_frame_bytes:
            limit = self.settings.max_frame_bytes
            raise ProtocolError("too_large", f"Frames are limited to {limit} bytes.")
        message = self.codec.decode(frame)
        kind = protocol.message_type(message)
        if kind == "hello":
            await self._hello(protocol.parse_hello(message))
        elif kind == "command":
            await self._command(message)
        elif kind == "steps":
            self._steps(message)
        elif kind == "ping":
            self.push(self.codec.encode(protocol.pong()))
        else:
            raise ProtocolError("unknown_type", f"Unknown message type {kind[:40]!r}.")

    def _refused_id(self, frame: Frame | None) -> str | None:
        """The id of a refused command frame, so that the client knows what to send again;
        None for anything else (a frame too large or malformed is not read for it)."""
        if frame is None or len(frame) > self.settings.max_frame_bytes:
            return None
        try:
            message = self.codec.decode(frame)
            return protocol.command_id(message) if message.get("type") == "command" else None
        except (ProtocolError, AttributeError):
            return None

    async def _hello(self, hello: protocol.Hello) -> None:
        if self.room is not None:
            raise ProtocolError("already_hello", "This connection already said hello.")
        services = self.services
        room_id: str | None
        if hello.token is not None:
            try:
                claim = tokens.verify(services.secret, hello.token)
            except tokens.TokenError as bad:
                close = protocol.CLOSE_BAD_TOKEN
                raise ProtocolError(bad.code, bad.sentence, close=close) from None
            if claim.seat == "host":
                sentence = "Exchange the host token for a seat at POST /rooms/{room}/join."
                raise ProtocolError("host_token", sentence, close=protocol.CLOSE_BAD_TOKEN)
            room_id, audience, close = claim.room, Faction(claim.seat), protocol.CLOSE_NOT_FOUND
        else:
            room_id, audience, close, claim = hello.spectate, None, None, None
        try:
            if not tokens.is_room_id(room_id):
                raise RoomNotFound(str(room_id))
            runtime = await services.registry.fresh(room_id)
        except (RoomNotFound, RoomNotReady):
            raise ProtocolError("room_not_found", "There is no such room.", close=close) from None
        if hello.commentary:
            await self._commentary(runtime, hello)
            return
        if claim is not None:
            if await services.lobby.generation(claim.room, claim.seat) != claim.generation:
                sentence = "This seat token was revoked."
                raise ProtocolError("token_revoked", sentence, close=protocol.CLOSE_REVOKED)
            self.generation = claim.generation
        await runtime.feed.prepare_resume(audience, hello.last_seq, hello.epoch)
        if runtime.gone:  # dropped while we waited (its epoch changed, or its log did)
            raise ProtocolError(
                "resync", "The room was reloaded: connect again.", close=protocol.CLOSE_RESYNC
            )
        self.audience = audience
        resumed = runtime.feed.attach(self, hello.last_seq, hello.epoch)
        self.room = runtime
        log.info("hello", extra={**self._fields(), "version": runtime.version, "resumed": resumed})
        await services.start_random_setup(runtime)  # in case the joiner's process died first

    async def _commentary(self, runtime: RoomRuntime, hello: protocol.Hello) -> None:
        """Follow the room's commentary stream (commentary.py): refused with
        ``no_commentary`` (the socket stays open) for a room created without a broadcast
        delay."""
        try:
            delay = delay_of(await self.services.lobby.meta(runtime.room_id))
        except NoCommentary:
            raise ProtocolError("no_commentary", NoCommentary.sentence) from None
        commentary = await runtime.commentary_stream(delay)
        if runtime.gone:
            raise ProtocolError(
                "resync", "The room was reloaded: connect again.", close=protocol.CLOSE_RESYNC
            )
        self.audience = None
        resumed = commentary.attach(self, hello.last_seq, hello.epoch)
        self.commentary, self.room = commentary, runtime
        runtime.touch()
        log.info("hello", extra={**self._fields(), "kind": "commentary", "resumed": resumed})

    def _steps(self, message: dict[str, Any]) -> None:
        """Answer a seat's ``steps`` request: Hermes' next steps after its walk, priced by
        the rules (``RoomFeed.steps``); refused as a command would be (``hello_first``,
        ``bad_id``, ``spectator``, ``bad_command``) or with the rules' code."""
        if self.room is None:
            echo = message.get("id") if isinstance(message.get("id"), str) else None
            raise ProtocolError("hello_first", "Say hello first.", command_id=echo)
        request_id = protocol.command_id(message)
        seat = self.audience
        try:
            if seat is None:
                raise ProtocolError("spectator", "Spectators have no steps to take.")
            walk = protocol.parse_walk(message, seat)
            answer = self.room.feed.steps(seat, request_id, walk)
        except ProtocolError as refused:
            refused.command_id = request_id
            raise
        self.push(self.codec.encode(answer))

    async def _command(self, message: dict[str, Any]) -> None:
        if self.room is None:
            echo = message.get("id") if isinstance(message.get("id"), str) else None
            raise ProtocolError("hello_first", "Say hello first.", command_id=echo)
        command_id = protocol.command_id(message)
        seat, room = self.audience, self.room
        try:
            if seat is None:
                raise ProtocolError("spectator", "Spectators cannot send commands.")
            command = protocol.parse_client_command(message, seat)
        except ProtocolError as refused:
            refused.command_id = command_id
            raise
        metrics = self.services.metrics

        async def acknowledge(result: Submitted) -> None:  # before the ``legal`` it makes due
            metrics.commands.inc("duplicate" if result.duplicate else "ok")
            seq = await room.feed.seq_at(seat, result.version)
            self.push(self.codec.encode(protocol.ack(command_id, seq)))

        try:
            await room.submit(
                command, f"{seat.value}:{command_id}", protocol.digest(command), acknowledge
            )
        except CommandRejected as rejected:
            metrics.commands.inc(rejected.code)
            raise ProtocolError(rejected.code, rejected.sentence, command_id=command_id) from None
        except Exception:  # e.g. Redis unreachable: the client may resend the same id safely
            metrics.commands.inc("unavailable")
            log.exception("command failed", extra={**self._fields(), "command_id": command_id})
            sentence = "The server could not take the command; send it again."
            raise ProtocolError("unavailable", sentence, command_id=command_id) from None


async def websocket_endpoint(ws: WebSocket) -> None:
    services: Services = ws.app.state.services
    codec, subprotocol = protocol.choose_codec(list(ws.scope.get("subprotocols", [])))
    await ws.accept(subprotocol=subprotocol)
    connection = Connection(ws, codec, services)
    services.connections.add(connection)
    try:
        # A task of its own: the connection's coroutine is resumed at each await it makes
        # (a frame in, an append), and resumed through this one it would also resume every
        # interpreted frame of the ASGI stack above (uvicorn's, its proxy headers middleware,
        # app.ServiceApp). Cancelling this coroutine cancels the task it waits for.
        await asyncio.get_running_loop().create_task(connection.run())
    finally:
        services.connections.discard(connection)
