"""What a snapshot saves when a process loads a room: CPU of folding the whole log into a
``RoomRuntime`` (state and the three audiences' feeds) against decoding the latest snapshot and
folding the events after it, and the bytes each reads from Redis. No Redis: the stored bytes are
built here, exactly as the service stores them.

    .venv/bin/python bench/room_load_bench.py [--games 40] [--every 100]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from redis.asyncio import Redis

from olympus.bots import play_random_game
from olympus.rules import Options, encode
from olympus.server import snapshots
from olympus.server.metrics import ServiceMetrics
from olympus.server.room import RoomRuntime
from olympus.server.settings import Settings
from olympus.store import EventStore, Snapshot, StoredEvent


def runtime() -> RoomRuntime:
    """A room as a process holds it; its store is never called (a client connects on first
    use, and loading a room from bytes at hand uses none)."""
    settings = Settings(redis_url="redis://unused")
    store = EventStore(Redis.from_url(settings.redis_url))
    return RoomRuntime("bench", 1, store, settings, ServiceMetrics())


def load_whole(stored: list[StoredEvent]) -> RoomRuntime:
    room = runtime()
    room.load(stored)
    return room


def load_restored(snapshot: Snapshot, tail: list[StoredEvent]) -> RoomRuntime:
    room = runtime()
    room.restore(snapshots.decode(snapshot), tail)
    return room


def best_ms(load: Callable[..., RoomRuntime], *args: object) -> tuple[float, RoomRuntime]:
    """Best of 5 in process CPU time (other jobs on the machine do not count), and the room."""
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        room = load(*args)
        best = min(best, time.process_time() - start)
    return best * 1000, room


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="random games (default 40)")
    parser.add_argument("--every", type=int, default=100, help="snapshot_every (default 100)")
    args = parser.parse_args()
    rows = []
    for seed in range(args.games):
        events, _, _ = play_random_game(random.Random(seed), Options(), 400)
        stored = [StoredEvent(k + 1, encode(e)) for k, e in enumerate(events)]
        at = (len(stored) - 1) // args.every * args.every  # the latest snapshot's version
        if at == 0:
            continue
        snapshot = Snapshot(at, snapshots.encode(load_whole(stored[:at]).snapshot()))
        tail = stored[at:]
        whole_ms, whole = best_ms(load_whole, stored)
        snap_ms, restored = best_ms(load_restored, snapshot, tail)
        assert restored.state == whole.state
        log_bytes = sum(len(s.data) for s in stored)
        checked = len(stored[at - 1].data)  # the entry at the snapshot's version (its chain)
        read_bytes = len(snapshot.data) + checked + sum(len(s.data) for s in tail)
        rows.append((len(stored), len(tail), whole_ms, snap_ms, log_bytes, read_bytes))
    if not rows:
        raise SystemExit(f"no game reached {args.every} events: lower --every")
    med = [statistics.median(column) for column in zip(*rows, strict=True)]
    print(f"games with a snapshot: {len(rows)} of {args.games} (snapshot every {args.every})")
    print(f"events per game, median: {med[0]:.0f}; after the snapshot: {med[1]:.0f}")
    print(f"load, whole log:        {med[2]:.2f} ms CPU, {med[4] / 1024:.1f} KiB read")
    print(f"load, snapshot + tail:  {med[3]:.2f} ms CPU, {med[5] / 1024:.1f} KiB read")


if __name__ == "__main__":
    main()
