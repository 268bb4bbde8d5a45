"""Seat tokens: HMAC-signed, bound to a room and a seat, revocable by a generation number.

A token is ``t1.<room>.<seat>.<generation>.<mac>``. The MAC makes it unforgeable and binds
it to its room and seat; the generation makes it revocable without a token database: the
room's seats (store/ports.py, ``RoomSeats``) hold each seat's current generation, revoking
bumps it, and a token whose generation is not the current one is refused. ``host`` is the
seat of the creator of a Challenge room until the opponent picks a side (api.md).

The key is ``OLYMPUS_SECRET`` when set, else one random key the first process keeps in the
store (``SharedKeys``), so every process of a deployment signs and checks with the same key
without configuration.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from typing import TypeGuard

from olympus.store import SharedKeys

VERSION = "t1"
SEATS = ("olympians", "chthonians", "host")
_ROOM = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_MAC_BYTES = 16


class TokenError(Exception):
    def __init__(self, code: str, sentence: str) -> None:
        super().__init__(sentence)
        self.code = code
        self.sentence = sentence


@dataclass(frozen=True, slots=True)
class SeatClaim:
    room: str
    seat: str  # one of SEATS
    generation: int


def _mac(secret: bytes, claim: SeatClaim) -> str:
    message = f"{VERSION}|{claim.room}|{claim.seat}|{claim.generation}".encode()
    digest = hmac.new(secret, message, hashlib.sha256).digest()[:_MAC_BYTES]
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def sign(secret: bytes, claim: SeatClaim) -> str:
    return f"{VERSION}.{claim.room}.{claim.seat}.{claim.generation}.{_mac(secret, claim)}"


def verify(secret: bytes, token: object) -> SeatClaim:
    """The claim of an authentic token; its generation is checked against the seats by the
    caller."""
    parts = token.split(".") if isinstance(token, str) and len(token) <= 256 else []
    if len(parts) != 5 or parts[0] != VERSION:
        raise TokenError("bad_token", "This is not a seat token.")
    _, room, seat, generation, mac = parts
    if not _ROOM.match(room) or seat not in SEATS or not generation.isdigit():
        raise TokenError("bad_token", "This is not a seat token.")
    claim = SeatClaim(room, seat, int(generation))
    if not hmac.compare_digest(mac, _mac(secret, claim)):
        raise TokenError("bad_token", "The seat token is not authentic.")
    return claim


async def shared_secret(keys: SharedKeys, configured: bytes | None) -> bytes:
    """The configured key, or the deployment's key in the store (made by the first process)."""
    if configured:
        return configured
    return await keys.shared_secret(secrets.token_hex(32))


def is_room_id(room: object) -> TypeGuard[str]:
    return isinstance(room, str) and bool(_ROOM.match(room))
