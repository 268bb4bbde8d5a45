"""Room snapshots: the folded state every ``Settings.snapshot_every`` events, so that loading a
room is its latest snapshot plus the events after it, not a replay of the whole log.

A snapshot is a cache of the fold, never the truth: it holds the game state (the rules' own
codec, ``olympus.rules.snapshot``) and each audience's message count at that version, which the
feeds continue from (feed.py). Anything that does not fit, an unknown format, a state whose
version is not the snapshot's, is ignored with a warning and the room is replayed from its log
(registry.py). The store keeps only the newest snapshot of a room and refuses older ones, so
processes saving concurrently cannot move a room backwards.

Writing is off the command's path: after an own append that leaves the room ``snapshot_every``
events past its last snapshot, the snapshot is encoded at once (the state of that moment, ~25 µs)
and written by a background task; a failed write is logged and tried again at the next append.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Protocol

import msgpack

from olympus.background import cancel
from olympus.rules import Faction, GameState
from olympus.rules.characters import FACTIONS
from olympus.rules.snapshot import SnapshotError, decode_state, encode_state
from olympus.store import EventLog, EventsTrimmed, RoomLoad, Snapshot, chain_next


class Snapshotted(Protocol):
    """A room as the snapshotter reads it (``room.RoomRuntime``)."""

    room_id: str
    snapshot_version: int  # the newest snapshot known of (set here)

    @property
    def version(self) -> int: ...

    def snapshot(self) -> RoomSnapshot: ...


log = logging.getLogger("olympus.server.snapshots")

FORMAT = 1  # of the envelope; the state inside carries the rules' own format number
SPECTATORS = "spectators"  # the key of the neutral audience's count


@dataclass(frozen=True, slots=True)
class RoomSnapshot:
    state: GameState
    seqs: dict[Faction | None, int]  # each audience's last message number (None: spectators)
    # the room's chain at the snapshot's version (``chain_next``): what ties it to the log it
    # was folded from, for after Redis lost writes the version can come back with other events
    last: str


def encode(snapshot: RoomSnapshot) -> bytes:
    seqs = {SPECTATORS if a is None else a.value: n for a, n in snapshot.seqs.items()}
    state = encode_state(snapshot.state)
    envelope = {"f": FORMAT, "state": state, "seqs": seqs, "last": snapshot.last}
    packed: bytes = msgpack.packb(envelope, use_bin_type=True)
    return packed


def decode(stored: Snapshot) -> RoomSnapshot:
    """The snapshot as stored at ``stored.version``; ``SnapshotError`` if it cannot be used."""
    try:
        envelope = msgpack.unpackb(stored.data, raw=False)
    except (ValueError, msgpack.UnpackException) as error:
        raise SnapshotError(f"not a snapshot: {error}") from None
    if not isinstance(envelope, dict) or envelope.get("f") != FORMAT:
        raise SnapshotError(f"not a snapshot of format {FORMAT}")
    seqs, state, last = envelope.get("seqs"), envelope.get("state"), envelope.get("last")
    audiences = {f.value: f for f in FACTIONS} | {SPECTATORS: None}
    if (
        not isinstance(seqs, dict)
        or set(seqs) != set(audiences)
        or not all(type(n) is int and n >= 0 for n in seqs.values())
    ):
        raise SnapshotError(f"not a snapshot of format {FORMAT}")
    if not isinstance(state, bytes) or not isinstance(last, str):
        raise SnapshotError("the snapshot holds no state or no chain")
    decoded = decode_state(state)
    if decoded.version != stored.version:
        raise SnapshotError(f"state at {decoded.version}, stored as {stored.version}")
    return RoomSnapshot(decoded, {audiences[key]: n for key, n in seqs.items()}, last)


async def usable(store: EventLog, room_id: str, loaded: RoomLoad) -> RoomSnapshot:
    """The loaded snapshot, if it belongs to the room's log as it is now; else
    ``SnapshotError``. The first event after it must continue its chain; with no event after
    it, the entry at its version must carry it (one more read). Entries without a chain (of
    older writers), or trimmed away, cannot be checked and are taken on trust."""
    assert loaded.snapshot is not None
    version = loaded.snapshot.version
    snapshot = decode(loaded.snapshot)
    if not snapshot.last:
        raise SnapshotError("the snapshot names no history")
    if version > loaded.version:  # the log lost the writes it was folded from
        dropped = await store.drop_snapshot_if_ahead(room_id)
        raise SnapshotError(
            f"snapshot at {version}, ahead of the log ({loaded.version}), {dropped=}"
        )
    if loaded.events:
        first = loaded.events[0]
        if first.chain and first.chain != chain_next(snapshot.last, first.data):
            raise SnapshotError(f"the events after {version} do not continue the snapshot's log")
        return snapshot
    with contextlib.suppress(EventsTrimmed):
        [at] = await store.read(room_id, version - 1, count=1)
        if at.chain and at.chain != snapshot.last:
            raise SnapshotError(f"the log up to {version} is not the snapshot's")
    return snapshot


class Snapshotter:
    """Saves a room's snapshot once an own append leaves it ``every`` events past its last."""

    def __init__(self, store: EventLog, every: int) -> None:
        self.store = store
        self.every = every
        self.stopped = False  # set at shutdown: no new writes
        self._saving: set[asyncio.Task[None]] = set()

    async def after_append(self, runtime: Snapshotted, over: bool) -> None:
        """An append listener (room.py): encodes at once (~25 µs), writes in the background."""
        due = runtime.version - runtime.snapshot_version >= self.every > 0
        if over or self.stopped or not due:
            return
        previous, version = runtime.snapshot_version, runtime.version
        runtime.snapshot_version = version  # also when encoding fails: not at every append
        try:
            data = encode(runtime.snapshot())
        except SnapshotError as error:  # a state the codec cannot carry: no snapshot, no harm
            extra = {"room": runtime.room_id, "error": str(error)}
            log.warning("encoding a snapshot failed", extra=extra)
            return
        task = asyncio.get_running_loop().create_task(self._save(runtime, previous, version, data))
        self._saving.add(task)
        task.add_done_callback(self._saving.discard)

    async def _save(self, runtime: Snapshotted, previous: int, version: int, data: bytes) -> None:
        try:
            await self.store.save_snapshot(runtime.room_id, version, data)
        except Exception as error:  # the next append tries again: a snapshot is only a cache
            if runtime.snapshot_version == version:
                runtime.snapshot_version = previous
            extra = {"room": runtime.room_id, "version": version, "error": repr(error)}
            log.warning("saving a snapshot failed", extra=extra)

    async def stop(self) -> None:
        self.stopped = True
        await cancel(*self._saving)
