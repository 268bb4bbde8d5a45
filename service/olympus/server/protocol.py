"""The websocket wire protocol (docs/protocol.md): codecs, server messages, client parsing.

Two subprotocols carry the same messages: ``olympus.json`` (JSON text frames) and
``olympus.msgpack`` (msgpack binary frames). Every message is a map with a ``type``. A server
frame holds one message, or an array of messages (in order) when several were ready to go at
once (``Codec.batch``). The builders here are the only place a server message's shape is
written down.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, cast

import msgpack
from pydantic import ValidationError

from olympus.rules import Command, Faction, LegalAction, Listing, SetupRules, parse_command
from olympus.rules.commands import SERVICE_FIELDS, Move
from olympus.rules.legal import listed_key, listed_move
from olympus.rules.powers import MoveContext
from olympus.store import command_digest

Message = dict[str, Any]
Frame = str | bytes

# msgpack's packing, as ``msgpack.packb(value, use_bin_type=True)`` without making a packer per
# call (which is most of a small value's cost). Frames are built on the event loop's thread
# only: one packer serves them all.
pack: Callable[[object], bytes] = msgpack.Packer(use_bin_type=True).pack

# msgpack's positive fixints, packed: a message's ``seq`` is packed for every event frame.
_FIXINTS: Final[tuple[bytes, ...]] = tuple([bytes([n]) for n in range(0x80)])
# The first byte of an array, of a map, of fewer than 16 items (msgpack's fixarray, fixmap).
_FIXARRAYS: Final[tuple[bytes, ...]] = tuple([bytes([0x90 | n]) for n in range(16)])
_FIXMAPS: Final[tuple[bytes, ...]] = tuple([bytes([0x80 | n]) for n in range(16)])


def pack_count(n: int) -> bytes:
    """``pack(n)`` for a count (an ``event``'s or a ``legal``'s ``seq``: an int, not a bool),
    written here: each call into msgpack's packer costs ~1,000 instructions, more than the
    frame's other work. msgpack's smallest form of a non-negative int: a fixint, then uint 8,
    16 or 32."""
    if n < 0 or n >= 0x100000000:
        return pack(n)
    if n < 0x80:
        return _FIXINTS[n]
    if n < 0x100:
        return b"\xcc" + n.to_bytes(1, "big")
    if n < 0x10000:
        return b"\xcd" + n.to_bytes(2, "big")
    return b"\xce" + n.to_bytes(4, "big")


# The keys of the messages ``encode_with`` encodes, and their types' names (a ``legal``'s
# "legal"), packed: a few names, in every frame.
_PACKED_NAMES: Final[dict[str, bytes]] = {}


def _packed_name(name: str) -> bytes:
    packed = _PACKED_NAMES.get(name)
    if packed is None:
        packed = _PACKED_NAMES[name] = pack(name)
    return packed


# Commands only the service may issue (R2 Random Setup, R12 clocks).
SYSTEM_COMMANDS = frozenset({"draw_random_setup", "timeout"})
_COMMAND_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


class ProtocolError(Exception):
    """A refused frame: sent back as an ``error`` message; ``close`` ends the connection."""

    def __init__(
        self, code: str, sentence: str, *, close: int | None = None, command_id: str | None = None
    ) -> None:
        super().__init__(f"{code}: {sentence}")
        self.code = code
        self.sentence = sentence
        self.close = close
        self.command_id = command_id


# Close codes (4000-4999 are the application's, RFC 6455 §7.4.2).
CLOSE_BAD_TOKEN = 4401
CLOSE_REVOKED = 4403
CLOSE_NOT_FOUND = 4404
CLOSE_HELLO_TIMEOUT = 4408
CLOSE_FLOOD = 4429
CLOSE_SLOW = 4413  # fell too far behind; reconnect with last_seq
CLOSE_RESYNC = 4409  # the room's log changed under the cache (Redis loss): reconnect


@dataclass(frozen=True, slots=True)
class Codec:
    name: str
    binary: bool

    def encode(self, value: object) -> Frame:
        """A message, or any value of one (``encode_with`` encodes a message's fields)."""
        if self.binary:
            return pack(value)
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)

    def array(self, items: Sequence[Frame]) -> Frame:
        """The array of ``items``, each an encoded value, without encoding them again: the
        same bytes as encoding the values as a list, since msgpack and compact JSON encode a
        list value by value."""
        if self.binary:
            n = len(items)
            if n < 16:
                head = _FIXARRAYS[n]
            elif n < 1 << 16:
                head = b"\xdc" + n.to_bytes(2, "big")
            else:
                head = b"\xdd" + n.to_bytes(4, "big")
            return head + b"".join(cast(Sequence[bytes], items))
        return "[" + ",".join(cast(Sequence[str], items)) + "]"

    def batch(self, frames: list[Frame]) -> Frame:
        """One frame for several encoded messages, without encoding them again: an array.

        Each websocket frame costs a send (and a syscall) on the server and a receive on the
        client; a command's events, its ``ack`` and the next ``legal`` travel together.
        """
        return frames[0] if len(frames) == 1 else self.array(frames)

    def encode_with(self, message: Message, encoded: dict[str, Frame]) -> Frame:
        """``encode(message)`` where the value of each key in ``encoded`` (a placeholder in
        ``message``) is that one, already encoded (``array`` of encoded entries, a value
        shared by several frames); a map of fewer than 16 keys. Its keys and its ``type``
        (every message's, a name of the protocol like the keys) are packed once and kept
        (``_packed_name``), its counts by ``pack_count``, other values by msgpack."""
        if self.binary:
            parts: list[bytes] = [_FIXMAPS[len(message)]]
            for name, value in message.items():
                parts.append(_packed_name(name))
                given = encoded.get(name)
                if given is not None:
                    parts.append(cast(bytes, given))
                elif name == "type":  # (a name: "legal", "game_over")
                    parts.append(_packed_name(cast(str, value)))
                elif type(value) is int:  # (not a bool)
                    parts.append(pack_count(value))
                else:
                    parts.append(pack(value))
            return b"".join(parts)
        fields = [
            json.dumps(name) + ":" + cast(str, encoded[name] if name in encoded else self.encode(v))
            for name, v in message.items()
        ]
        return "{" + ",".join(fields) + "}"

    def decode(self, frame: Frame) -> Any:
        if isinstance(frame, bytes) is not self.binary:
            kind = "binary" if self.binary else "text"
            raise ProtocolError("bad_frame", f"{self.name} uses {kind} frames only.")
        try:
            if self.binary:
                return msgpack.unpackb(frame, raw=False)
            return json.loads(frame)
        except Exception as error:  # any decoder failure is the client's malformed frame
            what = "msgpack" if self.binary else "JSON"
            raise ProtocolError("bad_frame", f"The frame is not valid {what}.") from error


JSON = Codec("olympus.json", binary=False)
MSGPACK = Codec("olympus.msgpack", binary=True)
CODECS = {c.name: c for c in (JSON, MSGPACK)}


def choose_codec(offered: list[str]) -> tuple[Codec, str | None]:
    """The client's first offered subprotocol we speak; JSON (and none echoed) otherwise."""
    for name in offered:
        if name in CODECS:
            return CODECS[name], name
    return JSON, None


# --- server → client ------------------------------------------------------------------------


def welcome(room: str, epoch: int, seat: str | None, seq: int, resumed: bool) -> Message:
    # The epoch is a 63-bit number: a string, so that JavaScript clients keep it exact.
    return {
        "type": "welcome",
        "room": room,
        "epoch": str(epoch),
        "seat": seat,
        "seq": seq,
        "resumed": resumed,
    }


def event(seq: int, payload: Message) -> Message:
    return {"type": "event", "seq": seq, "event": payload}


def view(seq: int, position: Message) -> Message:
    return {"type": "view", "seq": seq, "view": position}


def legal(
    seq: int,
    actions: list[LegalAction],
    setup: SetupRules | None = None,
    waiting: str | None = None,
    *,
    can_resign: bool = False,
    can_abort: bool = False,
) -> Message:
    """A seat's options as of its message ``seq``: ``actions``; or, while it may submit its
    setup, what a setup is made of (``setup``); or, with nothing to do, why (``waiting``).
    Always whether it may resign or abort now (``can_resign``, ``can_abort``:
    rules.may_resign, rules.may_abort, of public facts only), which ``actions`` never lists.
    During a combat the room adds both sides' ``strength`` while they commit
    (rules.strength_terms), and what follows each removal to the side choosing one
    (``after_removal``, rules.removal_outcomes). The room encodes it with its actions
    already encoded (``encoded_actions``, ``Codec.encode_with``), and its ``strength``
    (the same in both seats' frames) encoded once."""
    message: Message = {
        "type": "legal",
        "seq": seq,
        "actions": [action(a) for a in actions],
        "can_resign": can_resign,
        "can_abort": can_abort,
    }
    if setup is not None:
        message["setup"] = {
            "characters": [{"name": c, "leader": c == setup.leader} for c in setup.characters],
            "regions": list(setup.regions),
            "count": setup.count,
        }
    if waiting is not None:
        message["waiting"] = waiting
    return message


def action(a: LegalAction) -> Message:
    """One of ``legal``'s actions: the command as a client sends it (no side, no clock) and
    what it costs at once; for a move whose meeting eliminates units at once, its ``outcome``
    (``LegalAction.outcome``: the units eliminated, the game's result if it ends it)."""
    message: Message = {"command": a.wire, "honor": a.honor, "energy": a.energy}
    if a.outcome is not None:
        eliminated, result = a.outcome
        message["outcome"] = {"eliminated": list(eliminated), "result": result}
    return message


# Encoded actions held per codec, at most this many each (then forgotten all at once).
_HELD_ACTIONS = 1 << 16
_ENCODED: dict[str, dict[object, Frame]] = {name: {} for name in CODECS}


def encoded_actions(codec: Codec, actions: list[LegalAction]) -> list[Frame]:
    """``action(a)`` of each action, encoded. An entry is encoded once and reused while the
    process holds it (keyed by ``LegalAction.key``): a position lists
    mostly the moves of the positions before it, a combat the commitments of others, and most
    of a ``legal`` frame's cost was building and encoding the same entries again
    (docs/performance.md). An action without a key (made ``of`` a command) is encoded anew."""
    held = _ENCODED[codec.name]
    entries: list[Frame] = []
    for a in actions:
        if (key := a.key) is None:
            entries.append(codec.encode(action(a)))
            continue
        if (entry := held.get(key)) is None:
            entry = _hold(codec, held, key, a)
        entries.append(entry)
    return entries


def _hold(codec: Codec, held: dict[object, Frame], key: object, a: LegalAction) -> Frame:
    """``a``'s entry, encoded and held under ``key`` (all forgotten once too many are)."""
    if len(held) >= _HELD_ACTIONS:
        held.clear()
    entry = held[key] = codec.encode(action(a))
    return entry


class EncodedListing(Listing):
    """A seat's legal actions as its ``legal`` frame's entries (``encoded_actions``), in
    order: each move's looked up by its key as the listing finds it, so that no
    ``LegalAction`` is made for a move whose entry is held (``rules.legal.Listing``)."""

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        self.held = _ENCODED[codec.name]  # (emptied when full, never replaced)
        self.entries: list[Frame] = []

    def move(
        self,
        move: MoveContext,
        group_key: int,
        reveal: tuple[str, ...],
        steps: tuple[int, ...],
        honor: int,
        energy: int,
    ) -> None:
        held = self.held
        key = listed_key(move, group_key, reveal, steps, honor, energy)
        entry = held.get(key)
        if entry is None:
            action = listed_move(move, group_key, reveal, steps, honor, energy)
            entry = _hold(self.codec, held, key, action)
        self.entries.append(entry)

    def extend(self, actions: list[LegalAction]) -> None:
        self.entries += encoded_actions(self.codec, actions)


def steps(request_id: str, seq: int, actions: list[LegalAction]) -> Message:
    """The answer to a seat's ``steps`` request ``request_id``: Hermes' next steps after the
    walk it sent (``rules.further_steps``), each as one of ``legal``'s actions (the walk with
    the step added, at what the whole command costs at once), judged on the position of the
    seat's message ``seq``."""
    return {"type": "steps", "id": request_id, "seq": seq, "actions": [action(a) for a in actions]}


def game_over(result: str | None, log: list[Message]) -> Message:
    return {"type": "game_over", "result": result, "log": log}


def ack(command_id: str, seq: int) -> Message:
    return {"type": "ack", "id": command_id, "seq": seq}


def error(code: str, sentence: str, command_id: str | None = None) -> Message:
    return {"type": "error", "id": command_id, "code": code, "sentence": sentence}


def pong() -> Message:
    return {"type": "pong"}


# --- client → server ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Hello:
    token: str | None
    spectate: str | None
    last_seq: int | None
    epoch: int | None
    commentary: bool = False  # a spectator asks for the room's delayed commentary stream


def message_type(message: Any) -> str:
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise ProtocolError("bad_frame", "A message is a map with a string 'type'.")
    kind: str = message["type"]
    return kind


def _optional_int(message: Message, key: str) -> int | None:
    value = message.get(key)
    if value is None:
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
        raise ProtocolError("bad_hello", f"'{key}' must be a non-negative integer.")
    return value


def parse_hello(message: Message) -> Hello:
    token, spectate = message.get("token"), message.get("spectate")
    if (token is None) == (spectate is None):
        raise ProtocolError("bad_hello", "Say hello with either a 'token' or 'spectate'.")
    if spectate is not None and not isinstance(spectate, str):
        raise ProtocolError("bad_hello", "'spectate' is a room id.")
    commentary = message.get("commentary", False)
    if not isinstance(commentary, bool) or (commentary and spectate is None):
        raise ProtocolError("bad_hello", "'commentary' is true or false, with 'spectate' only.")
    last_seq, epoch = _optional_int(message, "last_seq"), _optional_int(message, "epoch")
    return Hello(token, spectate, last_seq, epoch, commentary)


def command_id(message: Message) -> str:
    value = message.get("id")
    if not isinstance(value, str) or not _COMMAND_ID.match(value):
        raise ProtocolError("bad_id", "A command needs an 'id' of 1-64 letters, digits or _.:-")
    return value


_NOT_SENT: Final = set(SERVICE_FIELDS)
# The same, in the order a refusal names them (the first found): sorted once, not per command.
_SERVICE_ORDER: Final = tuple(sorted(SERVICE_FIELDS))


def digest(command: Command) -> str:
    """The digest stored with a seat's command id: of the command as the seat sent it, in its
    canonical form (every field, defaults included, in declaration order; not the fields the
    service fills in), so that the same command sent again digests alike."""
    # pydantic's serializer itself: ``model_dump_json`` gives the same bytes, decoded to a str
    return command_digest(command.__pydantic_serializer__.to_json(command, exclude=_NOT_SENT))


def parse_walk(message: Message, side: Faction) -> Move:
    """A ``steps`` request's walk: a seat's move command (``parse_client_command``), else
    ``bad_command``."""
    command = parse_client_command(message, side)
    if not isinstance(command, Move):
        raise ProtocolError("bad_command", "Only a move has further steps.")
    return command


def parse_client_command(message: Message, side: Faction) -> Command:
    """A seat's command, refusing what only the service may say (side, clock, system), made
    for the seat's ``side`` (validated with it: not copied after, which cost as much again)."""
    body = message.get("command")
    if not isinstance(body, dict):
        raise ProtocolError("bad_command", "'command' must be a map with a 'type'.")
    for name in _SERVICE_ORDER:  # filled in from the seat and the service's clock
        if name in body:
            raise ProtocolError("side_not_allowed", f"The server sets '{name}'; do not send it.")
    if body.get("type") in SYSTEM_COMMANDS:
        raise ProtocolError("system_command", "Only the service issues this command.")
    try:
        return parse_command({**body, "side": side})
    except ValidationError as invalid:
        first = invalid.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "command"
        raise ProtocolError("bad_command", f"{where}: {first.get('msg', 'invalid')}") from None
