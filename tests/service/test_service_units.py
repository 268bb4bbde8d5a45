"""The server's pieces on their own: metrics exposition, rate limiting, feed numbering, codecs,
the loop's lag, a room's frames, and the clocks' timers."""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field

import msgpack
import prometheus_client
import pytest
from prometheus_client import CollectorRegistry
from service_harness import split_frame

from olympus import background, bots
from olympus.rules import (
    Faction,
    GameState,
    Maneuver,
    Options,
    create,
    encode,
    execute,
    legal_actions,
    list_legal,
    may_abort,
    removal_outcomes,
    replay,
    setup_options,
    strength_terms,
    waiting_reason,
)
from olympus.rules.commands import SERVICE_FIELDS, Command, parse_command
from olympus.rules.events import CombatCommitted, GameEnded, decode, encode_dict, to_dict
from olympus.rules.evolve import evolve
from olympus.rules.observation import observe_event
from olympus.server import Settings, protocol
from olympus.server.clocks import Clocks
from olympus.server.feed import Feed
from olympus.server.loop_lag import LoopLag
from olympus.server.metrics import Counter, Histogram, Registry, ServiceMetrics, exposition
from olympus.server.protocol import JSON, MSGPACK, Codec, Frame, ProtocolError, choose_codec
from olympus.server.ratelimit import TokenBucket
from olympus.server.room import RoomRuntime, now_ms
from olympus.server.room_feed import AUDIENCES
from olympus.server.room_log import HeldLog, NewEvent, packed_view
from olympus.server.services import Services
from olympus.store import EventStore, command_digest

# The service's own logic: on the memory backend (tests/store shows both backends alike).
pytestmark = pytest.mark.memory_store


def test_prometheus_text_format() -> None:
    registry = Registry()
    commands = registry.add(Counter("x_commands_total", "Commands.", ("result",)))
    latency = registry.add(Histogram("x_seconds", "Latency.", buckets=(0.01, 0.1)))
    commands.inc("ok")
    commands.inc("ok")
    commands.inc('we"ird\n')
    for value in (0.005, 0.05, 3.0):
        latency.observe(value)
    text = registry.render()
    assert "# TYPE x_commands_total counter\n" in text
    assert 'x_commands_total{result="ok"} 2\n' in text
    assert 'x_commands_total{result="we\\"ird\\n"} 1\n' in text
    assert 'x_seconds_bucket{le="0.01"} 1\n' in text
    assert 'x_seconds_bucket{le="0.1"} 2\n' in text  # cumulative
    assert 'x_seconds_bucket{le="+Inf"} 3\n' in text
    assert "x_seconds_count 3\n" in text and "x_seconds_sum 3.055" in text


@pytest.mark.parametrize("buffered", [False, True])
def test_tallied_metrics_expose_what_prometheus_client_would(buffered: bool) -> None:
    """A buffered counter and a histogram (tallied here, added to prometheus-client's values
    by ``refresh``) expose, on a bound and between bounds, exactly what prometheus-client's
    own ``inc``/``observe`` give; the histogram adds to its internals (``_buckets``, ``_sum``),
    and a change of their shape fails here."""
    ours = Registry()
    counter = ours.add(Counter("y_total", "C.", ("result",), buffered=buffered))
    histogram = ours.add(Histogram("y_seconds", "H.", buckets=(0.01, 0.1, 1.0)))
    plain = CollectorRegistry()
    theirs_counter = prometheus_client.Counter("y", "C.", ("result",), registry=plain)
    theirs = prometheus_client.Histogram(
        "y_seconds", "H.", buckets=(0.01, 0.1, 1.0), registry=plain
    )
    values = (0.0, 0.01, 0.0100001, 0.1, 0.5, 1.0, 7.0)
    for round_ in range(2):  # a flush between: tallies are not added twice
        for value in values:
            histogram.observe(value)
            theirs.observe(value)
            counter.inc("ok")
            theirs_counter.labels("ok").inc()
        mine, expected = ours.render().splitlines(), exposition(plain.collect()).splitlines()
        # the sum as a float added in another order: equal but for the last digits
        assert [line for line in mine if "_sum " not in line] == [
            line for line in expected if "_sum " not in line
        ], round_
        [sum_line] = [line for line in mine if "_sum " in line]
        [expected_sum] = [line for line in expected if "_sum " in line]
        assert float(sum_line.split()[1]) == pytest.approx(float(expected_sum.split()[1]))
    assert counter.get("ok") == 2 * len(values)


def test_token_bucket_allows_bursts_and_refills() -> None:
    now = [100.0]
    bucket = TokenBucket(rate=50.0, burst=5, clock=lambda: now[0])
    assert [bucket.take() for _ in range(6)] == [True] * 5 + [False]
    now[0] += 0.05  # 2.5 tokens come back
    assert [bucket.take() for _ in range(3)] == [True, True, False]


def test_feed_numbers_only_what_the_audience_is_sent() -> None:
    feed = Feed()
    for version in (1, 2, 4, 7):  # events 3, 5 and 6 were not for this audience
        feed.append(version, protocol.pack({"t": "x", "v": version}))
    assert feed.seq == 4
    assert [feed.seq_at(v) for v in range(0, 9)] == [0, 1, 2, 2, 3, 3, 3, 4, 4]
    third = {"type": "event", "seq": 3, "event": feed.messages[2]}
    assert JSON.decode(feed.frame(JSON, 3)) == third
    assert feed.frame(JSON, 3) is feed.frame(JSON, 3)  # encoded once


def test_a_feed_from_a_snapshot_continues_the_numbering() -> None:
    """A feed that starts after a snapshot's 2 messages numbers and encodes the later ones
    exactly as the whole feed does, and has nothing before them."""
    whole, restored = Feed(), Feed(base=2)
    for version in (1, 2, 4, 7):
        packed = protocol.pack({"t": "x", "v": version})
        whole.append(version, packed)
        if version > 2:
            restored.append(version, packed)
    assert restored.seq == whole.seq == 4
    assert [restored.seq_at(v) for v in range(2, 9)] == [whole.seq_at(v) for v in range(2, 9)]
    for codec in (JSON, MSGPACK):
        assert [restored.frame(codec, n) for n in (3, 4)] == [whole.frame(codec, n) for n in (3, 4)]
    with pytest.raises(IndexError):
        restored.frame(JSON, 2)


def test_codecs() -> None:
    assert choose_codec(["x", "olympus.msgpack", "olympus.json"]) == (MSGPACK, "olympus.msgpack")
    assert choose_codec([]) == (JSON, None)
    message = {"type": "ping", "n": [1, "é"]}
    for codec in (JSON, MSGPACK):
        assert codec.decode(codec.encode(message)) == message
    for codec, frame in ((JSON, "{"), (JSON, b"{}"), (MSGPACK, b"\xc1"), (MSGPACK, "{}")):
        with pytest.raises(ProtocolError) as refused:
            codec.decode(frame)
        assert refused.value.code == "bad_frame"


def test_a_count_is_packed_as_msgpack_packs_it() -> None:
    """``pack_count`` writes a ``seq`` in msgpack itself: the same bytes as msgpack's, in every
    form (fixint, uint 8/16/32) and beyond them (negative, 64-bit: msgpack's own)."""
    edges = [0x7F, 0x80, 0xFF, 0x100, 0xFFFF, 0x10000, 2**32 - 1, 2**32, 2**63 - 1, -1, -33]
    for n in [*range(70_000), *edges]:
        assert protocol.pack_count(n) == msgpack.packb(n, use_bin_type=True), n


@pytest.mark.parametrize("count", [1, 2, 15, 16, 256])
def test_a_batch_frame_is_the_array_of_its_messages(count: int) -> None:
    """Batching joins encoded messages without re-encoding them; each keeps its own bytes
    (the header of a msgpack array changes at 16 elements)."""
    messages = [
        {"type": "event", "seq": k, "event": {"t": "x", "é": [k, None]}} for k in range(count)
    ]
    for codec in (JSON, MSGPACK):
        frames = [codec.encode(m) for m in messages]
        batch = codec.batch(frames)
        if count == 1:
            assert batch == frames[0]
        else:
            assert codec.decode(batch) == messages
            assert split_frame(batch) == frames


@pytest.mark.parametrize("count", [0, 1, 15, 16, 65535, 65536])
def test_an_array_of_encoded_values_is_their_list_encoded(count: int) -> None:
    """msgpack's array header has three sizes (16 and 65536 elements change it)."""
    values = [k % 7 - 3 for k in range(count)]
    for codec in (JSON, MSGPACK):
        assert codec.array([codec.encode(v) for v in values]) == codec.encode(values)  # type: ignore[arg-type]


@pytest.mark.parametrize("held", [protocol._HELD_ACTIONS, 8])
def test_a_legal_frame_from_encoded_actions_is_the_message_encoded(
    monkeypatch: pytest.MonkeyPatch, held: int
) -> None:
    """The room encodes ``legal`` with its actions' entries held encoded across positions
    (``encoded_actions``, or as they are listed: ``EncodedListing``, the same entries) and the
    strength terms encoded once for both seats, spliced in
    (``encode_with``): the same bytes as encoding the message anew, in every position of
    random games, for each seat and codec, also when the held entries are forgotten often."""
    monkeypatch.setattr(protocol, "_HELD_ACTIONS", held)
    monkeypatch.setattr(protocol, "_ENCODED", {name: {} for name in protocol.CODECS})
    rng = random.Random(11)
    positions = 0

    def check(state: GameState, *_: object) -> None:
        nonlocal positions
        for seat in Faction:
            actions = legal_actions(state, seat)
            extra = {"strength": strength_terms(state)} if state.combat else {}
            for codec in (JSON, MSGPACK):
                whole = protocol.legal(state.version, actions) | extra
                placeholders = protocol.legal(state.version, []) | dict.fromkeys(extra)
                entries = protocol.encoded_actions(codec, actions)
                listing = protocol.EncodedListing(codec)  # the room's way: no object per move
                list_legal(listing, state, seat)
                assert listing.entries == entries
                encoded = {"actions": codec.array(entries)}
                encoded |= {name: codec.encode(value) for name, value in extra.items()}
                assert codec.encode_with(placeholders, encoded) == codec.encode(whole)
        positions += 1

    for k in range(6):
        options = Options(open_combat=k % 2 == 1, random_setup=k % 3 == 0)
        bots.play_random_game(rng, options, max_commands=300, observe=check)
    assert positions > 300
    assert all(len(held_) <= held for held_ in protocol._ENCODED.values())


def test_a_commands_digest_is_of_its_canonical_json_without_the_services_fields() -> None:
    """The digest stored with a command id (``id_reused``) is of the command as
    ``model_dump_json`` writes it, the service's fields left out, for each type of command
    random games give (setups, moves, commitments…): records made before stay comparable, and
    the seat, the clock or the order of the command's fields change nothing."""
    rng = random.Random(5)
    commands: dict[str, Command] = {}

    def note(state: GameState, *_: object) -> None:
        for seat in Faction:
            for action in legal_actions(state, seat):
                commands.setdefault(action.command.type, action.command)

    for k in range(4):
        options = Options(open_combat=k % 2 == 1, random_setup=k % 3 == 0)
        for command in bots.setup_commands(rng, options):
            commands.setdefault(command.type, command)
        bots.play_random_game(rng, options, max_commands=300, observe=note)
    assert {"submit_setup", "draw_random_setup", "move", "commit"} <= set(commands)
    for command in commands.values():
        canonical = command.model_dump_json(exclude=set(SERVICE_FIELDS)).encode()
        expected = command_digest(canonical)
        assert protocol.digest(command) == expected
        stamped = command.model_copy(update={"side": Faction.CHTHONIANS, "at_ms": 12345})
        assert protocol.digest(stamped) == expected
        reordered = parse_command(dict(reversed(list(command.model_dump().items()))))
        assert protocol.digest(reordered) == expected
    # the form records were made in, written out: a change of pydantic's must not move it
    move = parse_command({"type": "move", "units": ["Zeus", "Hermes"], "to": 27, "at_ms": 5})
    canonical = (
        b'{"type":"move","units":["Zeus","Hermes"],"to":27,"fly":false,"reveal":[],'
        b'"use_power":false,"steps":[]}'
    )
    assert protocol.digest(move) == command_digest(canonical)
    setup = parse_command({"type": "submit_setup", "placements": {"Zeus": 27, "Hermes": 28}})
    canonical = b'{"type":"submit_setup","placements":{"Zeus":27,"Hermes":28}}'
    assert protocol.digest(setup) == command_digest(canonical)


async def test_stopping_background_tasks_is_bounded(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A task that does not unwind when cancelled (stuck in a Redis call) must not hold up the
    shutdown: the others are stopped, it is reported and left to asyncio's final cleanup."""
    monkeypatch.setattr(background, "GRACE_SECONDS", 0.1)
    release = asyncio.Event()

    async def stubborn() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            await release.wait()  # swallows the cancellation until released
            raise

    stuck = asyncio.get_running_loop().create_task(stubborn(), name="stubborn")
    polite = asyncio.get_running_loop().create_task(asyncio.sleep(60))
    await asyncio.sleep(0)
    async with asyncio.timeout(5):
        await background.cancel(stuck, polite, None)
    assert polite.cancelled() and not stuck.done()
    assert "did not stop in time" in caplog.text
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await stuck


async def test_loop_lag_is_how_late_the_heartbeat_runs() -> None:
    """The overload measure: how late the last heartbeat ran, or how overdue the next one is
    when that is more (asked from work holding the loop); no lag when stopped."""
    now = [100.0]
    lag = LoopLag(interval=1.0, clock=lambda: now[0])
    assert lag.lag() == 0.0
    await lag.start()
    try:
        assert lag.lag() == 0.0  # the first heartbeat is due at 101.0
        now[0] = 101.5
        assert lag.lag() == 0.5  # overdue now
        lag.beat()  # as the loop's timer does, late
        assert lag.lag() == 0.5  # it came 0.5 s late; the next is due at 102.5
        now[0] = 102.0
        assert lag.lag() == 0.5  # the last one's lateness still counts
        now[0] = 102.5
        lag.beat()  # on time: the lag is gone
        assert lag.lag() == 0.0
    finally:
        await lag.stop()
    assert lag.lag() == 0.0


async def test_the_loop_runs_the_heartbeat_and_the_next_one_is_due_after_it() -> None:
    """The loop's timer calls ``beat`` (before a later timer: the sleep's), which schedules
    the next heartbeat from its own time: without it the heartbeat due at 0.01 would count."""
    now = [0.0]
    lag = LoopLag(interval=0.01, clock=lambda: now[0])
    await lag.start()
    try:
        now[0] = 5.0
        await asyncio.sleep(0.05)  # the heartbeat's timer is due first
        now[0] = 100.0
        assert lag.lag() < 99.0  # due again at 5.01 or later (not at 0.01: 99.99)
    finally:
        await lag.stop()


async def test_a_busy_loop_lags() -> None:
    """Work that holds the loop makes it late by as much, whatever the machine's speed."""
    lag = LoopLag(interval=0.05)
    await lag.start()
    try:
        await asyncio.sleep(0.1)  # a heartbeat ran
        time.sleep(0.4)  # holds the loop: the next heartbeat (due within 0.05 s) waits
        assert lag.lag() >= 0.35
    finally:
        await lag.stop()


async def test_a_process_is_overloaded_while_its_loop_lags_more_than_the_threshold() -> None:
    services = Services(Settings(redis_url="redis://127.0.0.1:1", overload_seconds=0.5))
    now = [10.0]
    services.loop_lag = LoopLag(interval=60, clock=lambda: now[0])  # due at 70.0
    await services.loop_lag.start()
    try:
        assert not services.overloaded
        now[0] = 70.5
        assert not services.overloaded  # at the threshold: not yet
        now[0] = 70.6
        assert services.overloaded
    finally:
        await services.loop_lag.stop()
        await services.backend.aclose()


def test_overload_threshold_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLYMPUS_OVERLOAD_SECONDS", "1.5")
    assert Settings.from_env(redis_url="redis://x").overload_seconds == 1.5
    monkeypatch.delenv("OLYMPUS_OVERLOAD_SECONDS")
    default = Settings(redis_url="redis://x").overload_seconds
    assert Settings.from_env(redis_url="redis://x").overload_seconds == default


async def test_an_evicted_runtime_leaves_the_newer_runtimes_timer_alone(
    store: EventStore, settings: Settings, clocks: Clocks
) -> None:
    """R12: a runtime evicted while a submit on it was under way may still be rebuilt (and
    re-armed) when that submit learns the log changed; the room's newer runtime keeps its
    timer. Its own timer is cancelled."""
    options = Options(move_seconds=30, commit_seconds=30)
    state = replay(create(options, token_seed=1))
    for command in bots.setup_commands(random.Random(1), options):
        _, state = execute(state, command.model_copy(update={"at_ms": now_ms()}))
    metrics = clocks.metrics
    old, new = (RoomRuntime("r", 1, store, settings, metrics) for _ in range(2))
    old.state = new.state = state
    clocks.arm(old)
    [(_, old_timer)] = clocks._timers.values()
    old.gone = True  # evicted: the registry's hook disarms it
    clocks.disarm(old)
    assert old_timer.cancelled()
    clocks.arm(new)
    [(held, timer)] = clocks._timers.values()
    clocks.arm(old)  # the old runtime rebuilt after its eviction
    clocks.disarm(old)
    assert held is new and clocks._timers["r"] == (new, timer) and not timer.cancelled()
    await clocks.stop()
    assert timer.cancelled()


async def test_a_hint_that_comes_during_a_submit_is_read_when_it_ends(
    store: EventStore, settings: Settings
) -> None:
    """Hints that come while a submit is under way are looked at when it ends
    (``RoomRuntime._after_submits``), not by a catch-up task of their own: one from another
    process, announcing events we do not have, must still be read then."""
    room_id, rng, options = "hinted", random.Random(5), Options()
    epoch = await store.create_room(room_id, b"")
    await store.append(room_id, 0, [encode(e) for e in create(options, token_seed=5)], chain="")

    async def runtime() -> RoomRuntime:
        loaded = RoomRuntime(room_id, epoch, store, settings, ServiceMetrics())
        loaded.load(await store.read(room_id, 0))
        return loaded

    ours = await runtime()
    for command in bots.setup_commands(rng, options):
        await ours.submit(command, f"setup:{command.side.value}")
    theirs = await runtime()  # another process's copy of the room

    async def theirs_move_meanwhile(room: RoomRuntime, over: bool) -> None:
        action = bots.choose(rng, room.state)
        assert action is not None
        await theirs.submit(action.command, "theirs")
        room.reader.request(theirs.version)  # their hint, while our submit is under way

    ours.append_listeners.append(theirs_move_meanwhile)
    action = bots.choose(rng, ours.state)
    assert action is not None
    await ours.submit(action.command, "ours")
    assert ours.reader.task is not None and ours.version < theirs.version
    await ours.reader.task
    assert (ours.version, ours.chain) == (theirs.version, theirs.chain)


async def _set_up_room(
    store: EventStore, settings: Settings, room_id: str, options: Options, seed: int
) -> tuple[RoomRuntime, random.Random]:
    """A room created in the store, loaded, and past its setup (random, from ``seed``); and
    the random numbers to play on with."""
    rng = random.Random(seed)
    epoch = await store.create_room(room_id, b"")
    await store.append(room_id, 0, [encode(e) for e in create(options, token_seed=seed)], chain="")
    room = RoomRuntime(room_id, epoch, store, settings, ServiceMetrics())
    room.load(await store.read(room_id, 0))
    for command in bots.setup_commands(rng, options):
        await room.submit(command, f"setup:{command.type}:{command.side}")
    return room, rng


@pytest.mark.parametrize(
    "options", [Options(), Options(open_combat=True), Options(random_setup=True)], ids=repr
)
async def test_each_audience_is_sent_exactly_its_own_view_of_each_event(
    store: EventStore, settings: Settings, options: Options
) -> None:
    """R7: a room packs a message once when every audience reads it alike and shares the
    bytes; what each feed holds is still, byte for byte, its own ``observe_event`` of each
    event, as the rules give it, event by event of a whole random game (hidden units,
    sealed or open commitments, a setup seen by its side alone or drawn)."""
    room_id = f"views{options.open_combat:d}{options.random_setup:d}"
    room, rng = await _set_up_room(store, settings, room_id, options, seed=11)
    for n in range(400):
        action = bots.choose(rng, room.state)
        if action is None:
            break
        await room.submit(action.command, f"c{n}")
    events = [decode(stored.data) for stored in await store.read(room_id, 0)]
    for audience, feed in room.feed.feeds.items():
        expected, state = [], GameState()
        for e in events:
            after = evolve(state, e)
            if (message := observe_event(e, audience, state, after)) is not None:
                expected.append(message)
            state = after
        assert feed.seq == len(expected)
        for seq, message in enumerate(expected, 1):
            assert feed.frame(MSGPACK, seq) == MSGPACK.encode(protocol.event(seq, message))


@dataclass(eq=False)
class Socket:
    """A room's subscriber that keeps what it is sent (room.py's ``Subscriber``)."""

    audience: Faction | None
    codec: Codec = MSGPACK
    sent_seq: int = 0
    generation: int = 0
    frames: list[Frame] = field(default_factory=list)

    def push(self, frame: Frame) -> None:
        self.frames.append(frame)

    def deliver(self, wire: bytes, frames: list[Frame], seq: int) -> None:
        self.frames.extend(frames)
        self.sent_seq = seq

    def close(self, code: int, reason: str) -> None:
        pass


@pytest.mark.parametrize("options", [Options(), Options(open_combat=True)], ids=repr)
async def test_each_legal_frame_is_the_seats_options_as_the_rules_list_them(
    store: EventStore, settings: Settings, options: Options
) -> None:
    """The ``legal`` frame a seat gets after each command, in either codec, is its message
    made anew from the rules (actions, setup, waiting, both sides' strength terms during a
    combat's commitments, what follows each removal), although the room splices in entries
    held encoded and encodes the strength terms once for both seats and codecs."""
    room, rng = await _set_up_room(store, settings, f"legal{options.open_combat:d}", options, 5)
    sockets = [Socket(seat, codec) for seat in Faction for codec in (JSON, MSGPACK)]
    for socket in sockets:
        room.feed.attach(socket, None, None)
    combats = 0
    for n in range(300):
        action = bots.choose(rng, room.state)
        if action is None:
            break
        await room.submit(action.command, f"c{n}")
        if room.over:  # the last frame is ``game_over``
            break
        state = room.state
        combats += (terms := strength_terms(state)) is not None
        for socket in sockets:
            seat = socket.audience
            assert seat is not None
            actions = legal_actions(state, seat)
            setup = None if actions else setup_options(state, seat)
            waiting = None if actions or setup else waiting_reason(state, seat)
            message = protocol.legal(
                room.feed.feeds[seat].seq,
                actions,
                setup,
                waiting,
                can_resign=True,
                can_abort=may_abort(state),
            )
            if terms is not None:
                message["strength"] = terms
            if (outcomes := removal_outcomes(state, seat)) is not None:
                message["after_removal"] = outcomes
            assert socket.frames[-1] == socket.codec.encode(message)
    assert combats > 0


def test_a_held_log_packs_its_entries_as_the_codec_packs_their_dicts() -> None:
    """``HeldLog.packed``, which ``game_over`` splices in: an entry encoded here is its bytes
    as they are (events pack as the codec does, bin, floats and big ints included); any other
    is decoded and packed anew, so an entry stored in another shape (here its keys in another
    order) comes out as its event's ``to_dict`` packed."""
    varied = {"t": "x", "bin": b"\x00\xff", "float": 0.5, "big": 2**63 - 1, "list": [1, "a"]}
    assert encode_dict(varied) == protocol.pack(varied)
    ended = to_dict(GameEnded(result="draw", reason="honor"))
    other_shape = protocol.pack(dict(reversed(ended.items())))
    log = HeldLog()
    log.append(encode_dict(ended), encoded_here=True)
    log.append(other_shape, encoded_here=False)
    assert other_shape != encode_dict(ended)
    assert log.packed() == [encode_dict(ended), encode_dict(ended)]
    assert MSGPACK.array(log.packed()) == protocol.pack(log.unredacted())


async def test_game_over_is_the_whole_log_in_either_codec(
    store: EventStore, settings: Settings
) -> None:
    """R7: the ``game_over`` frame, to each seat and a spectator, in either codec, is its
    message encoded anew from the whole unredacted log, although in msgpack the room splices
    in the bytes it stored (``HeldLog.packed``); and so it is from a room that read the log
    back from the store, whose entries it did not encode (each decoded and packed anew)."""
    room, rng = await _set_up_room(store, settings, "over", Options(), seed=3)
    for n in range(5000):
        action = bots.choose(rng, room.state)
        assert action is not None
        await room.submit(action.command, f"c{n}")
        if room.over:
            break
    assert room.over
    log = room.feed.full_log()
    assert len(log) > 100 and log == [to_dict(decode(s.data)) for s in await store.read("over", 0)]
    again = RoomRuntime("over", room.epoch, store, settings, ServiceMetrics())
    again.load(await store.read("over", 0))
    for runtime in (room, again):
        for audience in (*Faction, None):
            for codec in (JSON, MSGPACK):
                socket = Socket(audience, codec)
                runtime.feed.attach(socket, None, None)
                over = codec.encode(protocol.game_over(room.state.result, log))
                assert socket.frames[-1] == over


async def test_a_frame_that_fails_to_build_is_logged_and_the_others_go_out(
    store: EventStore, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    """``push_due``: a ``legal`` frame that cannot be built (here for a codec the service has
    no encoded entries for) is logged; the command it follows is still taken, and the other
    sockets still get theirs, after its events."""
    room, rng = await _set_up_room(store, settings, "broken", Options(), seed=6)
    good, broken = Socket(Faction.OLYMPIANS), Socket(Faction.OLYMPIANS)
    for socket in (good, broken):
        room.feed.attach(socket, None, None)
    broken.codec = Codec("nameless", binary=True)
    sent = {socket: len(socket.frames) for socket in (good, broken)}
    action = bots.choose(rng, room.state)
    assert action is not None
    assert not (await room.submit(action.command, "c1")).duplicate
    assert "building a frame failed" in caplog.text
    told = [msgpack.unpackb(f) for f in good.frames[sent[good] :]]
    assert [m["type"] for m in told][-1] == "legal" and told[-1]["seq"] == told[-2]["seq"]
    assert {m["type"] for m in told[:-1]} == {"event"}
    assert {msgpack.unpackb(f)["type"] for f in broken.frames[sent[broken] :]} == {"event"}


def test_a_view_two_audiences_share_is_packed_once() -> None:
    """A Chthonian commitment is hidden alike from the Olympians and the spectators, whom the
    Chthonians come between in ``AUDIENCES``: the two get the same bytes, packed once (not
    once per audience); the Chthonians, shown the event as it is, the stored event's bytes."""
    event = CombatCommitted(Faction.CHTHONIANS, 1, Maneuver.STANDARD, 3)
    data = to_dict(event)
    new = NewEvent(7, event, encode_dict(data), fields=data)
    state = GameState()  # (no combat under way: nobody sees the sealed commitment, R8)
    shown: list[tuple[protocol.Message, bytes]] = []
    views = [observe_event(event, a, state, state, data) for a in AUDIENCES]
    packed = [packed_view(new, data, view, shown) for view in views if view is not None]
    olympians, chthonians, spectators = packed
    assert views[1] is data and chthonians is new.data
    assert views[0] is not views[2] and olympians is spectators
    assert [msgpack.unpackb(p) for p in packed] == views
    assert olympians == protocol.pack(views[0]) != chthonians
