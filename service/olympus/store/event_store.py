"""Per-room event store on Redis Streams, with optimistic concurrency and idempotent appends.

Model: a room is an append-only log of opaque ``bytes`` events (the caller msgpack-encodes
them). The room's *version* is the number of events ever appended; the k-th event (1-based)
is the stream entry with id ``<k>-0``. The version is always derived from entry ids (the last
entry, or the stream's ``last-generated-id`` once trimmed empty), never from XLEN, so it stays
right after old events are trimmed away behind a snapshot.

Each entry also records the room's *chain* at that event (``chain_next``: SHA-1 over the
previous chain and the event), as its writer gives it. An append may name the writer's chain at
the expected version, and is refused if the room's last entry records another: after Redis lost
acknowledged writes, a room can grow back to the same version with other events, and a writer
whose cache still holds the lost ones must not append on top (readers check the same way).

Every multi-step operation is a single Lua script (log_scripts.py): Redis runs a script
atomically, so "check the expected version, then write" cannot interleave with another writer.

Keys of one room share the ``{room_id}`` hash tag, hence one cluster slot, so the scripts stay
legal on Redis Cluster. The lobby index lives under its own tag and is updated separately. On a
cluster every command on a room's keys goes through ``cluster_calls.call``, so that a migration
of the room's slot delays it instead of failing it; and while a slot migrates Redis runs a
script only where every key it names is, so those keys exist from early on: the meta and the
snapshot hash from the room's creation (the snapshot hash with a placeholder field), the events
and the commands hash from its first append (the service's first append has a command id).

Under ``Replicated`` (batching.py) a result that lets a caller acknowledge a command, an
append's (first or duplicate) or ``confirm``'s, comes only once the replicas asked for have the
events it names: a resent command's ack promises what its first ack would have
(``EventStore.append``).

The append's wake-up hint: on one Redis a classic ``PUBLISH``; on a Redis Cluster an ``SPUBLISH``
to a channel with the room's hash tag (in the script's own slot), which reaches only the master
of that slot (and its replicas) and the processes subscribed there (``EventStore.sharded``).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from .batching import Replicated, ScriptBatcher
from .log_scripts import (
    LUA_CONFIRM,
    LUA_CREATE,
    LUA_DROP_SNAPSHOT_AHEAD,
    LUA_READ,
    LUA_SAVE_SNAPSHOT,
    LUA_SET_STATUS,
    LUA_TRIM,
    append_script,
)
from .records import (
    AppendResult,
    Applied,
    EventsTrimmed,
    IdReused,
    LogDiverged,
    RoomExists,
    RoomLoad,
    RoomNotFound,
    Snapshot,
    SnapshotAhead,
    StoredEvent,
    TrimBeyondSnapshot,
    VersionConflict,
    chain_next,
    check_append,
    check_read,
    check_room_id,
    check_status,
    text,
)
from .redis_calls import StoreScript, redis_calls
from .redis_errors import REDIS_FAILURES, store_error
from .resp_connection import Command

_HELD_KEYS = 1 << 14  # rooms whose keys a store holds at most (``EventStore.keys``)


@dataclass(frozen=True, slots=True)
class RoomKeys:
    """Redis keys of one room; all carry the ``{room_id}`` hash tag (one cluster slot)."""

    meta: str  # hash: epoch, meta
    events: str  # stream: entry <k>-0 holds event k in field "e" (its chain "h", time "t")
    commands: str  # hash: command id -> "<first>:<last>:<digest>" (``LUA_APPEND``)
    snapshot: str  # hash: v, d


def _applied(value: bytes | None) -> Applied | None:
    """A command id's record in the commands hash (``LUA_APPEND``), read."""
    if value is None:
        return None
    start, end, *digest = value.decode().split(":")
    return Applied(int(start), int(end), digest[0] if digest else "")


def _entry_version(entry_id: bytes) -> int:
    return int(entry_id.split(b"-", 1)[0])


def _to_events(entries: list[Any]) -> list[StoredEvent]:
    events = []
    for entry_id, fields in entries:
        values = dict(zip(fields[::2], fields[1::2], strict=True))
        chain = values.get(b"h", b"").decode()
        at_ms = int(values.get(b"t", 0))
        events.append(StoredEvent(_entry_version(entry_id), values[b"e"], chain, at_ms))
    return events


class EventStore:
    """Event store over a ``redis.asyncio.Redis`` created with ``decode_responses=False``.

    Retries: redis-py retries a command after a connection error by default, and after a
    lost reply the append may already have been applied. Pass a ``command_id`` to make such
    a retry (redis-py's or yours) return ``duplicate=True`` instead of ``VersionConflict``.
    Applied command ids are kept for the whole life of the room (bounded games, so bounded).
    """

    def __init__(
        self,
        redis: Redis | RedisCluster,
        prefix: str = "olympus",
        replicated: Replicated | None = None,
    ) -> None:
        """``replicated``: appends wait for that many replicas (``NotReplicated`` otherwise:
        the append is on the master, unconfirmed; send it again), batching.py; so do the
        duplicates of appends and ``confirm``, which vouch for an earlier append (``append``).
        """
        self.redis = redis
        self.prefix = prefix
        # How to call it, one Redis or a Cluster: chosen here, once (redis_calls.py).
        self._calls = redis_calls(redis)
        self.sharded = self._calls.sharded  # the hints: sharded pub/sub, or classic
        self._append = ScriptBatcher(
            redis, append_script(self.sharded, confirm=replicated is not None), replicated
        )
        # ``confirm`` under ``Replicated``: its script and WAIT on a connection of their own (on
        # one Redis), so that a WAIT that blocks holds up no other call of the store.
        self._confirm = (
            None if replicated is None else ScriptBatcher(redis, LUA_CONFIRM, replicated)
        )
        self._read = self.room_script(LUA_READ)
        self._save_snapshot = self.room_script(LUA_SAVE_SNAPSHOT)
        self._drop_snapshot_ahead = self.room_script(LUA_DROP_SNAPSHOT_AHEAD)
        self._trim = self.room_script(LUA_TRIM)
        self._create = self.room_script(LUA_CREATE)
        self._set_status = self._calls.script(LUA_SET_STATUS)
        self._status_key = f"{prefix}:{{rooms}}:status"
        self._by_status_key = f"{prefix}:{{rooms}}:by-status"
        self._keys: dict[str, RoomKeys] = {}  # ``keys``, at most _HELD_KEYS (then forgotten)

    async def aclose(self) -> None:
        """Close the store's own connections (batching.py, resp_connection.py; ``redis`` is the
        caller's to close). The store may still be used: its next call connects again."""
        await self._append.aclose()
        if self._confirm is not None:
            await self._confirm.aclose()
        await self._calls.aclose()

    def room_script(self, script: str) -> StoreScript:
        """A script on a room's keys (the store's, or the seats' on the room's slot)."""
        return self._calls.room_script(script)

    async def call(self, key: str, *command: Any) -> Any:
        """One command on a room's ``key`` (the store's, or the seats' on the room's slot),
        as ``redis_calls`` sends it; for commands whose reply is the same on one Redis and on
        a cluster. Raises ``StoreUnavailable`` for what Redis fails or refuses."""
        try:
            return await self._calls.call(key, command)
        except REDIS_FAILURES as error:
            raise store_error(error) from error

    async def calls(self, commands: Sequence[Command]) -> None:
        """Commands on many rooms' keys, for their effect only (the lobby's times of the last
        moves), as ``redis_calls`` sends them. Raises the first error (``StoreUnavailable``)."""
        try:
            replies = await self._calls.calls(commands)
        except REDIS_FAILURES as error:
            raise store_error(error) from error
        for reply in replies:
            if isinstance(reply, Exception):
                raise store_error(reply) from reply

    # -- naming ---------------------------------------------------------------------------

    def keys(self, room_id: str) -> RoomKeys:
        """The room's keys, made once per room while held (every call of the store asks them,
        and making them checks the id and formats four strings)."""
        keys = self._keys.get(room_id)
        if keys is None:
            check_room_id(room_id)
            base = f"{self.prefix}:room:{{{room_id}}}"
            keys = RoomKeys(f"{base}:meta", f"{base}:events", f"{base}:cmds", f"{base}:snap")
            if len(self._keys) >= _HELD_KEYS:
                self._keys.clear()
            self._keys[room_id] = keys
        return keys

    def seats_key(self, room_id: str) -> str:
        """The hash of the room's seats (redis_seats.py), in the room's hash slot."""
        return f"{self.prefix}:room:{{{room_id}}}:seats"

    def analysis_key(self, room_id: str) -> str:
        """The room's analysis (redis_indexes.py, ``RedisAnalyses``), in the room's hash slot."""
        check_room_id(room_id)
        return f"{self.prefix}:room:{{{room_id}}}:analysis"

    def hint_channel(self, room_id: str) -> str:
        """Pub/sub channel that gets the new version (ASCII) after each append: a shard channel
        in the room's slot (``{room_id}``, SSUBSCRIBE) if ``sharded``, else a classic one.

        A hint, not a delivery guarantee: pub/sub is fire-and-forget, so subscribers must
        ``read(room, last_seen)`` on each hint (and on reconnect) rather than trust payloads.
        """
        check_room_id(room_id)
        return self._calls.hint_channel(self.prefix, room_id)

    # -- rooms ----------------------------------------------------------------------------

    async def create_room(self, room_id: str, meta: bytes) -> int:
        """Create the room and return its random 63-bit epoch (never 0).

        The epoch tells incarnations of a room id apart: a client holding (epoch, version)
        from a deleted-and-recreated room sees a different epoch and must resync, instead of
        trusting a version number that now refers to different events.
        """
        k = self.keys(room_id)
        epoch = secrets.randbelow(2**63 - 1) + 1
        created = await self._create(
            keys=[k.meta, k.events, k.commands, k.snapshot], args=[epoch, meta]
        )
        if not created:
            raise RoomExists(room_id)
        return epoch

    async def epoch(self, room_id: str) -> int:
        meta = self.keys(room_id).meta
        value = await self.call(meta, "HGET", meta, "epoch")
        if value is None:
            raise RoomNotFound(room_id)
        return int(value)

    async def room_meta(self, room_id: str) -> bytes:
        meta = self.keys(room_id).meta
        value = await self.call(meta, "HGET", meta, "meta")
        if value is None:
            raise RoomNotFound(room_id)
        return bytes(value)

    async def room_exists(self, room_id: str) -> bool:
        meta = self.keys(room_id).meta
        return bool(await self.call(meta, "EXISTS", meta))

    async def delete_room(self, room_id: str) -> bool:
        """Delete all of the room's keys atomically (one DEL: its seats too), then its lobby
        entry.

        Returns whether the room existed. Appends then raise ``RoomNotFound``; the id can be
        reused by ``create_room``, which gives a fresh epoch and starts again at version 0.
        """
        k = self.keys(room_id)
        seats, analysis = self.seats_key(room_id), self.analysis_key(room_id)
        existed = await self.call(
            k.meta, "DEL", k.meta, k.events, k.commands, k.snapshot, seats, analysis
        )
        await self._set_status(keys=[self._status_key, self._by_status_key], args=[room_id, ""])
        return bool(existed)

    # -- events ---------------------------------------------------------------------------

    async def append(
        self,
        room_id: str,
        expected_version: int,
        events: list[bytes],
        command_id: str | None = None,
        chain: str | None = None,
        digest: str | None = None,
        at_ms: int | None = None,
    ) -> AppendResult:
        """Append ``events`` atomically iff the room is at ``expected_version``, and (given
        ``chain``, the caller's ``chain_next`` chain at ``expected_version``: "" at 0) iff the
        room's history is the caller's; each new entry then records its own chain, and (given
        ``at_ms``) the time the caller applied them at (``StoredEvent.at_ms``).

        Order of checks in the script: room exists, then command id already applied
        (-> ``duplicate=True``, even if the room has moved on since; ``IdReused`` if it was
        applied to a command of another ``digest``: ``command_digest``), then version, then
        the chain of the last entry (entries written without one are not checked). Raises
        ``RoomNotFound``, ``IdReused``, ``VersionConflict`` or ``LogDiverged``. Without the
        chain, a writer whose cache still holds events Redis lost could append on top of
        another history that happens to have the same length: a forked log.

        Under ``Replicated(n)`` a result, a first append's or a duplicate's alike, is returned
        only once ``n`` replicas have its events; else ``NotReplicated`` (the events are on the
        master, maybe on no replica: send the append again). A duplicate finds events another
        call wrote (on another connection, maybe in another process), and WAIT counts the
        replicas that have the writes of its own connection: so the script's duplicate sets
        the command id's record again to the value it holds (``REWRITE_RECORD``), a write
        after the original append in the master's replication stream, and the WAIT behind it
        on the same connection confirms both (batching.py).
        """
        check_append(expected_version, events, command_id, chain, digest, at_ms)
        k = self.keys(room_id)
        pairs: list[bytes | str] = []
        chains: list[str] = []
        running = chain
        for data in events:
            if running is not None:
                running = chain_next(running, data)
                chains.append(running)
            pairs += [data, running or ""]
        code, a, b = await self._append(
            keys=[k.meta, k.events, k.commands],
            args=[
                expected_version,
                command_id or "",
                self.hint_channel(room_id),
                chain or "",
                digest or "",
                "" if at_ms is None else at_ms,
                *pairs,
            ],
        )
        if code == 0:
            return AppendResult(version=a, first_version=b, duplicate=False, chains=tuple(chains))
        if code == 1:
            return AppendResult(version=a, first_version=b, duplicate=True)
        if code == 5:
            raise IdReused(room_id, command_id or "")
        if code == 2:
            raise VersionConflict(room_id, expected_version, a)
        if code == 4:
            raise LogDiverged(room_id, a)
        raise RoomNotFound(room_id)

    async def applied(self, room_id: str, command_id: str) -> Applied | None:
        """What a command id was applied as, if it was: its versions and digest, as the master
        has them. A plain read: under ``Replicated`` the record may be on no replica yet (its
        append got ``NotReplicated``), so a caller that acknowledges the command on the
        strength of it ``confirm``s it first."""
        commands = self.keys(room_id).commands
        return _applied(await self.call(commands, "HGET", commands, command_id))

    async def confirm(self, room_id: str, command_id: str, seen: Applied) -> Applied | None:
        """``seen`` (what ``applied`` read of ``command_id``), vouched for as ``append``
        vouches for a duplicate: a caller may acknowledge the command on it as it would on an
        append's result.

        Without ``Replicated``, the record read again: the master has it, all an append
        promises then. Under ``Replicated(n)``, the record is set again to the value it holds
        (a write after the original append in the master's replication stream, no data
        changed) and WAIT follows on the same connection (one of its own on one Redis; on a
        cluster, the master of the room's slot, batching.py): the record is returned once
        ``n`` replicas have it, and so the events it names; ``NotReplicated`` if they do not
        confirm in time.
        None if the master no longer holds ``seen`` (it lost the record since: a failover).
        """
        if self._confirm is None:
            confirmed = await self.applied(room_id, command_id)
        else:
            commands = self.keys(room_id).commands
            confirmed = _applied(await self._confirm(keys=[commands], args=[command_id]))
        return confirmed if confirmed == seen else None

    async def _run_read(
        self, room_id: str, after_version: int, count: int | None, use_snapshot: bool
    ) -> tuple[int, int, Snapshot | None, list[StoredEvent]]:
        check_read(after_version, count)
        k = self.keys(room_id)
        reply = await self._read(
            keys=[k.meta, k.events, k.snapshot],
            args=[after_version, count or 0, "1" if use_snapshot else "0"],
        )
        if reply is None:
            raise RoomNotFound(room_id)
        epoch, version, snap, entries = reply
        snapshot = Snapshot(int(snap[0]), bytes(snap[1])) if snap else None
        events = _to_events(entries)
        start = after_version
        if use_snapshot:
            start = snapshot.version if snapshot else 0
        # The events must continue exactly where the caller (or snapshot) left off; anything
        # else means they were trimmed, and silently skipping them would corrupt the state.
        if start < version and (not events or events[0].version != start + 1):
            raise EventsTrimmed(room_id, start, events[0].version if events else None)
        return int(epoch), int(version), snapshot, events

    async def read(
        self, room_id: str, after_version: int = 0, count: int | None = None
    ) -> list[StoredEvent]:
        """Events with version > ``after_version``, oldest first, at most ``count``.

        Raises ``RoomNotFound``, or ``EventsTrimmed`` if the first requested event is gone.
        """
        _, _, _, events = await self._run_read(room_id, after_version, count, False)
        return events

    async def version(self, room_id: str) -> int:
        """Number of events ever appended (from entry ids, so trimming does not change it)."""
        # Reading "after" a version no room reaches returns no entries, just the version.
        _, version, _, _ = await self._run_read(room_id, 2**53, 1, False)
        return version

    async def load(self, room_id: str) -> RoomLoad:
        """Latest snapshot plus every event after it, read atomically (one script)."""
        epoch, version, snapshot, events = await self._run_read(room_id, 0, None, True)
        return RoomLoad(snapshot=snapshot, events=events, version=version, epoch=epoch)

    # -- snapshots and trimming -----------------------------------------------------------

    async def save_snapshot(self, room_id: str, version: int, data: bytes) -> bool:
        """Store ``data`` as the state after event ``version``; only the latest is kept.

        Returns False (and keeps the existing one) if a snapshot at ``version`` or newer is
        already stored, so slow snapshotters cannot move the room backwards. Raises
        ``SnapshotAhead`` if ``version`` exceeds the stream's version.
        """
        if version < 1:
            raise ValueError("snapshot version must be >= 1")
        k = self.keys(room_id)
        code, x = await self._save_snapshot(
            keys=[k.meta, k.events, k.snapshot], args=[version, data]
        )
        if code == 3:
            raise RoomNotFound(room_id)
        if code == 2:
            raise SnapshotAhead(room_id, version, x)
        return bool(code == 0)

    async def drop_snapshot_if_ahead(self, room_id: str) -> bool:
        """Delete the room's snapshot if it claims more events than the stream has: Redis lost
        the writes it was folded from, and once the room grows past it again, it would describe
        a history that is not the log's. True if one was dropped. Atomic, so a newer snapshot
        saved meanwhile by a process that knows the current log is never the one dropped."""
        k = self.keys(room_id)
        return bool(await self._drop_snapshot_ahead(keys=[k.events, k.snapshot]))

    async def load_snapshot(self, room_id: str) -> Snapshot | None:
        snapshot = self.keys(room_id).snapshot
        version, data = await self.call(snapshot, "HMGET", snapshot, "v", "d")
        if version is None:
            return None
        return Snapshot(int(version), bytes(data))

    async def trim(self, room_id: str, keep_after_version: int) -> int:
        """Drop events with version <= ``keep_after_version`` (XTRIM MINID); return the count.

        Refuses (``TrimBeyondSnapshot``) to trim past the latest snapshot, so ``load`` can
        always rebuild the room. Versions and appends are unaffected.
        """
        if keep_after_version < 0:
            raise ValueError("keep_after_version must be >= 0")
        k = self.keys(room_id)
        code, x = await self._trim(keys=[k.meta, k.events, k.snapshot], args=[keep_after_version])
        if code == 3:
            raise RoomNotFound(room_id)
        if code == 1:
            raise TrimBeyondSnapshot(room_id, keep_after_version, x)
        return int(x)

    # -- lobby index ----------------------------------------------------------------------

    async def set_room_status(self, room_id: str, status: str, seen: bool = False) -> str | None:
        """Record the room's lobby status (e.g. open/live/finished); return the previous one.
        A room that does not exist is refused (``RoomNotFound``); ``seen``: the caller has
        just seen it exist (it created or joined it), and it is not looked up again.

        The index is a separate key (another slot), so it is updated after, not atomically
        with, the room: listings are advisory and readers must tolerate a missing room.
        """
        check_status(status)
        if not seen and not await self.room_exists(room_id):
            raise RoomNotFound(room_id)
        old = await self._set_status(
            keys=[self._status_key, self._by_status_key], args=[room_id, status]
        )
        return text(old) if old is not None else None

    async def room_status(self, room_id: str) -> str | None:
        check_room_id(room_id)
        try:
            value = await self.redis.hget(self._status_key, room_id)
        except REDIS_FAILURES as error:
            raise store_error(error) from error
        return text(value) if value is not None else None

    async def rooms_by_status(
        self, status: str, *, offset: int = 0, limit: int | None = None
    ) -> list[str]:
        """Room ids with ``status``, sorted by id (ZRANGEBYLEX, so pagination is cheap)."""
        check_status(status)
        prefix = status.encode()
        try:
            members = await self.redis.zrangebylex(
                self._by_status_key,
                b"[" + prefix + b"\x00",
                b"(" + prefix + b"\x01",
                start=offset,
                num=limit if limit is not None else -1,  # LIMIT offset -1: all the rest
            )
        except REDIS_FAILURES as error:
            raise store_error(error) from error
        return [text(m)[len(prefix) + 1 :] for m in members]

    async def count_by_status(self, status: str) -> int:
        check_status(status)
        prefix = status.encode()
        try:
            return int(
                await self.redis.zlexcount(
                    self._by_status_key, b"[" + prefix + b"\x00", b"(" + prefix + b"\x01"
                )
            )
        except REDIS_FAILURES as error:
            raise store_error(error) from error

    async def list_rooms(self) -> dict[str, str]:
        """All indexed rooms: room id -> status."""
        try:
            raw = await self.redis.hgetall(self._status_key)
        except REDIS_FAILURES as error:
            raise store_error(error) from error
        return {text(k): text(v) for k, v in raw.items()}
