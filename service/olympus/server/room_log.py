"""A room's events as it holds them: each event to fold (``NewEvent``), with what its append
computed already; each audience's view of it, packed once for the audiences that read it alike
(``packed_view``, for the feeds: room_feed.py); and the log as stored (``HeldLog``)."""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any

from olympus.rules import Event, GameState, decode
from olympus.rules.events import encode, stored_dict, to_dict

from . import protocol


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event to fold: its version, the event and its encoding; for our own append's, also
    the state after it (``execute_steps``), its chain (the append's) and its ``to_dict``
    (``fields``, which ``data`` packs), which folding would otherwise compute again; and when
    it was applied (``at_ms``, as stored: 0 when its writer gave no time)."""

    version: int
    event: Event
    data: bytes
    after: GameState | None = None
    chain: str | None = None
    fields: dict[str, Any] | None = None
    at_ms: int = 0

    def __init__(
        self,
        version: int,
        event: Event,
        data: bytes,
        after: GameState | None = None,
        chain: str | None = None,
        fields: dict[str, Any] | None = None,
        at_ms: int = 0,
    ) -> None:
        """Spelled out, as ``GameState.__init__`` is and for its reason: one is made per
        event."""
        object.__setattr__(self, "version", version)
        object.__setattr__(self, "event", event)
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "after", after)
        object.__setattr__(self, "chain", chain)
        object.__setattr__(self, "fields", fields)
        object.__setattr__(self, "at_ms", at_ms)


def packed_view(
    new: NewEvent,
    data: dict[str, Any],
    message: protocol.Message,
    shown: list[tuple[protocol.Message, bytes]],
) -> bytes:
    """``message``, one audience's view of ``new`` (``data``: its fields; an audience shown
    the event as it is gets ``data`` itself), packed once per event: the bytes of an equal view
    packed before for another audience (``shown``, kept here), or those of the stored event
    when the view is the event as it is and ``new`` was packed from ``data`` (our own
    append's; an event read back may be of an older version).

    An event hidden from the opponent reads alike for the opponent and the spectator, and a
    Chthonian's such events come apart in ``AUDIENCES`` (Olympians, Chthonians, spectators):
    each view is compared with every one before it, not only the last (docs/performance.md,
    "Service")."""
    for seen, packed in shown:
        if message is seen or message == seen:
            return packed
    if new.fields is not None and (message is data or message == data):
        packed = new.data
    else:
        packed = protocol.pack(message)
    shown.append((message, packed))
    return packed


class HeldLog:
    """A room's log as stored: msgpack bytes, not Event objects (feed.py says why: memory and
    the garbage collector), each marked if this process encoded it (``encode`` of an event it
    decided: its own append's).

    Only the unredacted log at a game's end reads it. An entry encoded here is its event's
    ``to_dict`` as it is, so it is only unpacked, or for a msgpack ``game_over`` not even
    that (``packed``); any other is decoded, which upcasts an older version's shape. Decoding
    every event built each with its dataclass's interpreted ``__init__``: 2.7 % of a busy
    server's CPU (docs/performance.md)."""

    __slots__ = ("_data", "_here", "_times")

    def __init__(self) -> None:
        self._data: list[bytes] = []
        self._here = bytearray()  # 1: the entry was encoded here
        self._times = array("q")  # when each was applied (ms; 0: not known)

    def __len__(self) -> int:
        return len(self._data)

    def append(self, data: bytes, encoded_here: bool, at_ms: int = 0) -> None:
        self._data.append(data)
        self._here.append(encoded_here)
        self._times.append(at_ms)

    def time(self, index: int) -> int:
        """When entry ``index`` (from 0) was applied, in ms (0: not known)."""
        return self._times[index]

    def entry(self, index: int) -> protocol.Message:
        """Entry ``index`` (from 0) unredacted: its event's ``to_dict``."""
        data = self._data[index]
        return stored_dict(data) if self._here[index] else to_dict(decode(data))

    def unredacted(self) -> list[protocol.Message]:
        """Every event's ``to_dict``, in order."""
        return [
            stored_dict(data) if here else to_dict(decode(data))
            for data, here in zip(self._data, self._here, strict=True)
        ]

    def packed(self) -> list[bytes]:
        """Every event's ``to_dict`` in msgpack (``encode_dict``): an entry encoded here is
        those very bytes (``encode`` packs as the msgpack codec does), any other is decoded
        and packed anew."""
        return [
            data if here else encode(decode(data))
            for data, here in zip(self._data, self._here, strict=True)
        ]
