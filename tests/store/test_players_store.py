"""The players' ports (store/ports.py): ``Accounts`` on PostgreSQL (a real server, a database of
the test's own) and memory; ``Players`` and ``SeekPool`` on memory, one Redis and a Redis
Cluster. A game is rated once, however many tries race or repeat; a seek is paired once."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Mapping

import pytest

from olympus.store import Backend, Seek, StoreConfig, open_archive
from olympus.store.players import Account, NameTaken, RatedGame, Standing
from olympus.store.ports import Accounts
from olympus.store.seeks import first_side, range_of, room_of
from olympus.store.wiring import open_accounts

START = Standing(1500.0, 350.0, 0.06)


@pytest.fixture(params=["memory", "postgres"])
async def accounts(request: pytest.FixtureRequest) -> AsyncIterator[Accounts]:
    prefix = f"p-{uuid.uuid4().hex}"
    url = "memory://" if request.param == "memory" else request.getfixturevalue("database_url")
    config = StoreConfig("memory://", prefix=prefix, archive_url=url)
    archive = open_archive(config)
    await archive.migrate()
    yield open_accounts(archive, config)
    await archive.aclose()


async def test_names_are_unique_as_they_are_compared(accounts: Accounts) -> None:
    ann = await accounts.create("Ann", "ann", "hash-1", 1_000, START)
    with pytest.raises(NameTaken):
        await accounts.create("ANN", "ann", "hash-2", 2_000, START)
    assert await accounts.find("ann") == ann
    assert await accounts.get(ann.id) == ann
    assert await accounts.find("bo") is None
    assert await accounts.get(ann.id + 1000) is None
    await accounts.set_password(ann.id, "hash-3")
    changed = await accounts.get(ann.id)
    assert changed is not None and changed.password_hash == "hash-3" and changed.name == "Ann"


async def test_an_accounts_games_newest_first_each_once(accounts: Accounts) -> None:
    ann = await accounts.create("Ann", "ann", "h", 1, START)
    await accounts.add_game(ann.id, "room-old", "olympians", 1_000)
    await accounts.add_game(ann.id, "room-new", "chthonians", 3_000)
    await accounts.add_game(ann.id, "room-old", "chthonians", 5_000)  # again: nothing changes
    assert await accounts.games(ann.id) == [("room-new", "chthonians"), ("room-old", "olympians")]
    assert await accounts.games(ann.id, limit=1) == [("room-new", "chthonians")]


def _plus(delta: float) -> object:
    calls = []

    def rate(before: Mapping[str, Account]) -> dict[str, Standing]:
        calls.append(dict(before))
        sign = {"olympians": 1, "chthonians": -1}
        return {
            seat: Standing(
                a.standing.rating + sign[seat] * delta,
                a.standing.deviation - 10,
                a.standing.volatility,
            )
            for seat, a in before.items()
        }

    rate.calls = calls  # type: ignore[attr-defined]
    return rate


async def test_a_game_is_rated_once_however_often_and_however_many_at_once(
    accounts: Accounts,
) -> None:
    ann = await accounts.create("Ann", "ann", "h", 1, START)
    bo = await accounts.create("Bo", "bo", "h", 1, START)
    game = RatedGame(
        "room-1",
        {"olympians": ann.id, "chthonians": bo.id},
        {"olympians": 1.0, "chthonians": 0.0},
        "olympians",
        9_000,
    )
    rate = _plus(20)
    tries = await asyncio.gather(*(accounts.rate(game, rate) for _ in range(5)))  # type: ignore[arg-type]
    assert len(rate.calls) == 1  # type: ignore[attr-defined]
    assert all(t == tries[0] for t in tries)
    again = await accounts.rate(game, _plus(999))  # type: ignore[arg-type]
    assert again == tries[0] == await accounts.changes("room-1")
    by_seat = {c.seat: c for c in again}
    assert by_seat["olympians"].before.rating == 1500 and by_seat["olympians"].after.rating == 1520
    assert by_seat["chthonians"].after.rating == 1480 and by_seat["chthonians"].score == 0.0
    ann_now, bo_now = await accounts.get(ann.id), await accounts.get(bo.id)
    assert ann_now is not None and bo_now is not None
    assert (ann_now.standing.rating, ann_now.rated_games, ann_now.rated_ms) == (1520, 1, 9_000)
    assert (bo_now.standing.rating, bo_now.standing.deviation) == (1480, 340)
    assert await accounts.changes("room-2") == []


async def test_a_rating_is_given_both_accounts_as_they_stand(accounts: Accounts) -> None:
    """What a game's rating computes from: each seat's account after the games rated before it,
    its standing, count and the time of the last (the deviation widens with the time since)."""
    ann = await accounts.create("Ann", "ann", "h", 1, START)
    bo = await accounts.create("Bo", "bo", "h", 1, START)
    seats = {"olympians": ann.id, "chthonians": bo.id}
    score = {"olympians": 1.0, "chthonians": 0.0}
    first, second = _plus(10), _plus(10)
    await accounts.rate(RatedGame("r0", seats, score, "olympians", 4_000), first)  # type: ignore[arg-type]
    await accounts.rate(RatedGame("r1", seats, score, "olympians", 7_000), second)  # type: ignore[arg-type]
    for rate, games, last, rating in ((first, 0, None, 1500), (second, 1, 4_000, 1510)):
        (held,) = rate.calls  # type: ignore[attr-defined]
        assert {s: (a.id, a.rated_games, a.rated_ms) for s, a in held.items()} == {
            "olympians": (ann.id, games, last),
            "chthonians": (bo.id, games, last),
        }
        assert held["olympians"].standing.rating == rating


async def test_history_and_leaderboard(accounts: Accounts) -> None:
    ann = await accounts.create("Ann", "ann", "h", 1, START)
    bo = await accounts.create("Bo", "bo", "h", 1, START)
    await accounts.create("Cy", "cy", "h", 1, START)  # never rated: on no leaderboard
    seats = {"olympians": ann.id, "chthonians": bo.id}
    score = {"olympians": 1.0, "chthonians": 0.0}
    for n in range(3):
        await accounts.rate(
            RatedGame(f"r{n}", seats, score, "olympians", 1_000 * (n + 1)), _plus(10)
        )  # type: ignore[arg-type]
    history = await accounts.history(ann.id)
    assert [c.room_id for c in history] == ["r2", "r1", "r0"]
    assert [round(c.after.rating) for c in history] == [1530, 1520, 1510]
    assert await accounts.history(ann.id, limit=1) == history[:1]
    board = await accounts.leaderboard(min_games=3, limit=10)
    assert [a.name for a in board] == ["Ann", "Bo"]
    assert await accounts.leaderboard(min_games=4, limit=10) == []
    assert [a.name for a in await accounts.leaderboard(min_games=0, limit=1)] == ["Ann"]


async def test_sessions_end_one_by_one_or_all_at_once(backend: Backend) -> None:
    players = backend.players
    assert await players.session(7, "s-one") == (0, False)
    await players.end_session(7, "s-one", 60)
    assert await players.session(7, "s-one") == (0, True)
    assert await players.session(7, "s-two") == (0, False)
    assert await players.session(8, "s-one") == (0, False)  # another account's
    assert await players.bump_generation(7) == 1
    assert await players.bump_generation(7) == 2
    assert await players.session(7, "s-two") == (2, False)
    assert await players.session(8, "s-two") == (0, False)


async def test_attempts_are_counted_in_a_window(backend: Backend) -> None:
    players = backend.players
    first = await players.attempt("name:ann", 60)
    assert first[0] == 1 and 0 < first[1] <= 60_000
    assert (await players.attempt("name:ann", 60))[0] == 2
    assert (await players.attempt("name:bo", 60))[0] == 1
    count, left = await players.attempt("name:ann", 60)
    assert count == 3 and left <= first[1]


def _seek(
    n: int, account: int, rating: float, since: int = 0, alive: int = 10_000, pool: str = "p"
) -> Seek:
    return Seek(f"seek-{n}", account, pool, rating, since, alive)


async def test_seeks_pair_by_rating_once_and_only_alive(backend: Backend) -> None:
    seeks = backend.seeks
    for seek in (
        _seek(1, 1, 1500),
        _seek(2, 2, 1550),
        _seek(3, 3, 1900),
        _seek(4, 4, 1520, pool="q"),
        _seek(5, 5, 1510, alive=500),  # not kept alive: dead at 1000
    ):
        await seeks.add(seek)
    assert await seeks.pools() == ["p", "q"]
    pairs = await seeks.pair("p", 1_000)
    assert pairs == [("seek-1", "seek-2", room_of("seek-1", "seek-2"))]  # 1900 is too far
    first, second = await seeks.match("seek-1"), await seeks.match("seek-2")
    assert first is not None and second is not None
    assert first.room == second.room == pairs[0][2]
    assert {first.seat, second.seat} == {"olympians", "chthonians"}
    assert first.seat == first_side(first.room)
    assert first.accounts == second.accounts == {first.seat: 1, second.seat: 2}
    assert await seeks.pair("p", 1_000) == []  # nobody is paired twice
    assert not await seeks.keep_alive("seek-1", 20_000)  # paired: no longer waiting
    assert not await seeks.keep_alive("seek-5", 20_000)  # dropped dead
    assert await seeks.waiting("p") == 1 and await seeks.waiting("q") == 1
    # the range widens with the waiting: 400 apart, paired after 15 s of waiting
    await seeks.add(_seek(6, 6, 1500, since=0, alive=10**9))
    assert await seeks.keep_alive("seek-3", 10**9)
    assert await seeks.pair("p", 5_000) == []
    assert [p[:2] for p in await seeks.pair("p", 15_000)] == [("seek-6", "seek-3")]
    assert range_of(0) == 100 and range_of(15_000) == 400 and range_of(10**9) == 600


async def test_a_seek_is_cancelled_or_replaced_and_never_meets_itself(backend: Backend) -> None:
    seeks = backend.seeks
    await seeks.add(_seek(1, 1, 1500))
    await seeks.add(_seek(2, 1, 1500))  # the same account again: the first one goes
    assert await seeks.waiting("p") == 1
    assert not await seeks.keep_alive("seek-1", 5_000)
    await seeks.add(_seek(3, 2, 1500))
    assert await seeks.cancel("seek-3") and not await seeks.cancel("seek-3")
    assert await seeks.pair("p", 1_000) == []
    assert await seeks.match("seek-2") is None


async def test_players_seen_lately_latest_first(backend: Backend) -> None:
    players = backend.players
    for n, name in enumerate(["Ann", "Bo", "Cy", "Ann"]):
        await players.note_online(name, 1_000 * (n + 1))
    assert await players.online(0, 10) == (3, ["Ann", "Cy", "Bo"])
    assert await players.online(2_500, 10) == (2, ["Ann", "Cy"])
    assert await players.online(0, 1) == (2, ["Ann"])  # Bo was forgotten by the call before
