"""Rooms played in this process, without sockets: ``RoomRuntime`` driven as the sockets drive
it, for the profile-guided build's training (``olympus.build_native``) and the command path bench
(``bench/command_path_bench.py``). Each room has a subscriber per seat and a spectator, so
that every audience's frames are built as for real sockets; the subscribers only count them."""

from __future__ import annotations

import random

from ..bots import setup_commands
from ..rules import Faction
from .lobby import CreateRoom
from .protocol import MSGPACK, Codec, Frame
from .room import RoomRuntime
from .room_parts import Audience
from .services import Services


class FrameCounter:
    """A socket's end of a room (``room.Subscriber``) that counts what it is sent."""

    def __init__(self, audience: Audience) -> None:
        self.audience = audience
        self.codec: Codec = MSGPACK
        self.sent_seq = 0
        self.generation = 0
        self.frames = 0

    def push(self, frame: Frame) -> None:
        self.frames += 1

    def deliver(self, wire: bytes, frames: list[Frame], seq: int) -> None:
        self.frames += len(frames)
        self.sent_seq = seq

    def close(self, code: int, reason: str) -> None:
        pass


async def open_room(
    services: Services, rng: random.Random
) -> tuple[RoomRuntime, list[FrameCounter]]:
    """A room created and joined through the lobby and loaded through the registry, with a
    counter per seat and one spectating, and its setup submitted (``bots.setup_commands``)."""
    seated = await services.lobby.create(CreateRoom(side="olympians"))
    await services.lobby.join(seated.room, None)
    room = await services.registry.get(seated.room)
    counters = [FrameCounter(audience) for audience in (*Faction, None)]
    for counter in counters:
        room.feed.attach(counter, None, None)
    for n, command in enumerate(setup_commands(rng, room.state.options)):
        await room.submit(command, f"setup:{n}")
    return room, counters
