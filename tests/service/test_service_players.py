"""Players over real HTTP (api.md, "Players"): accounts, sessions and their CSRF tokens, limits,
seats bound to accounts on any device, rated games and their ratings, profiles.

Real servers on the session's Redis; the accounts in memory beside a memory archive
(store/memory_accounts.py, whose contract tests/store/test_players_store.py holds against
PostgreSQL's). The ratings across processes and kills: tests/service/test_service_ratings.py.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from service_harness import Game, Oracle, ServerThread, drive, seat
from test_service_archive import until

from olympus.rules import Faction
from olympus.server import sessions
from olympus.server.accounts import LIMITS
from olympus.store import EventStore

PASSWORD = "correct horse battery"


@pytest.fixture
def players_server(start_server: Callable[..., ServerThread]) -> ServerThread:
    return start_server(archive_url="memory://", leaderboard_min_games=1, rating_poll_seconds=0.05)


@pytest.fixture
def browser(
    players_server: ServerThread, browsers: Callable[[ServerThread], httpx.AsyncClient]
) -> Callable[[], httpx.AsyncClient]:
    """New browsers (each its own cookie jar) on the server."""
    return lambda: browsers(players_server)


async def sign_up(client: httpx.AsyncClient, name: str) -> str:
    """Sign up ``name`` in ``client``: the session's CSRF token."""
    answer = await client.post("/account/signup", json={"name": name, "password": PASSWORD})
    assert answer.status_code == 201, answer.text
    return str(answer.json()["csrf"])


async def sign_in(client: httpx.AsyncClient, name: str, password: str = PASSWORD) -> httpx.Response:
    return await client.post("/account/signin", json={"name": name, "password": password})


def error(answer: httpx.Response) -> tuple[int, str]:
    return answer.status_code, answer.json()["code"]


async def test_sign_up_in_and_out_here_or_everywhere(
    browser: Callable[[], httpx.AsyncClient],
) -> None:
    first, second = browser(), browser()
    answer = await first.post("/account/signup", json={"name": "Ann Lee", "password": PASSWORD})
    assert answer.status_code == 201
    cookie = answer.headers["set-cookie"].lower()
    assert sessions.COOKIE in cookie and "httponly" in cookie and "samesite=lax" in cookie
    assert answer.json()["player"] == {
        "name": "Ann Lee",
        "rating": 1500,
        "deviation": 350,
        "provisional": True,
        "rated_games": 0,
    }
    csrf = answer.json()["csrf"]
    assert (await first.get("/account")).json()["player"]["name"] == "Ann Lee"
    # another browser, another session; the name as names are compared
    answer = await sign_in(second, "  ann   LEE ")
    assert answer.status_code == 200 and answer.json()["player"]["name"] == "Ann Lee"
    # signing out is a change made with the cookie: without the CSRF token it is refused
    assert error(await first.post("/account/signout", json={})) == (403, "csrf_failed")
    assert error(
        await first.post("/account/signout", json={}, headers={"x-csrf-token": "x" * 22})
    ) == (403, "csrf_failed")
    kept = first.cookies.get(sessions.COOKIE)
    answer = await first.post("/account/signout", json={}, headers={"x-csrf-token": csrf})
    assert answer.status_code == 200
    assert (await first.get("/account")).json()["player"] is None
    # the old cookie, sent again by someone who kept it, is refused: signed out here only
    stale = {sessions.COOKIE: kept}
    async with httpx.AsyncClient(base_url=first.base_url, cookies=stale) as thief:
        assert (await thief.get("/account")).json()["player"] is None
        assert error(await thief.get("/account/games")) == (401, "session_ended")
    assert (await second.get("/account")).json()["player"]["name"] == "Ann Lee"
    # signed in again here, then out everywhere from here: the second browser is out too
    csrf = (await sign_in(first, "Ann Lee")).json()["csrf"]
    answer = await first.post(
        "/account/signout", json={"everywhere": True}, headers={"x-csrf-token": csrf}
    )
    assert answer.status_code == 200
    assert (await second.get("/account")).json()["player"] is None
    assert (await sign_in(second, "ann lee")).status_code == 200  # a new session works


async def test_a_failed_sign_in_says_nothing_of_the_name(
    browser: Callable[[], httpx.AsyncClient], players_server: ServerThread
) -> None:
    client = browser()
    await sign_up(client, "Bo")
    passwords = players_server.services.passwords
    verified: list[str] = []
    for method in ("verify", "verify_unknown"):
        real = getattr(passwords, method)

        async def counted(*args: str, real: Any = real, method: str = method) -> bool:
            verified.append(method)
            return bool(await real(*args))

        setattr(passwords, method, counted)
    wrong = await sign_in(browser(), "Bo", "not the password")
    unknown = await sign_in(browser(), "Nobody", "not the password")
    assert wrong.status_code == unknown.status_code == 401
    assert (
        wrong.json()
        == unknown.json()
        == {"code": "bad_credentials", "sentence": "The name or the password is wrong."}
    )
    # the same work either way: one Argon2id verification, against a decoy for no account
    assert verified == ["verify", "verify_unknown"]


async def test_sign_ins_are_limited_per_name_then_per_address(
    browser: Callable[[], httpx.AsyncClient],
) -> None:
    client = browser()
    await sign_up(client, "Cy")
    per_name, _ = LIMITS["name"]
    for _ in range(per_name):
        assert error(await sign_in(client, "Cy", "wrong password")) == (401, "bad_credentials")
    limited = await sign_in(client, "Cy")  # even the right password, now
    assert error(limited) == (429, "too_many_attempts")
    assert 1 <= int(limited.headers["retry-after"]) <= LIMITS["name"][1]
    # an unknown name is limited alike (no answer tells whether it exists)
    for _ in range(per_name):
        await sign_in(client, "Nobody Here", "wrong password")
    assert error(await sign_in(client, "Nobody Here", "x")) == (429, "too_many_attempts")
    per_address, _ = LIMITS["address"]
    for n in range(per_address):
        await sign_in(client, f"Someone {n}", "wrong password")
    assert error(await sign_in(client, "Another One", "x")) == (429, "too_many_attempts")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"name": "A", "password": PASSWORD}, (422, "bad_name")),
        ({"name": "Ann<script>", "password": PASSWORD}, (422, "bad_name")),
        ({"name": "C0mputer", "password": PASSWORD}, (422, "reserved_name")),
        ({"name": "Dee", "password": "short"}, (422, "bad_password")),
        ({"name": "Dee", "password": "p" * 129}, (422, "bad_password")),
        ({"name": "Dee", "password": "p" * 2000}, (422, "bad_request")),
        ({"name": "D" * 65, "password": PASSWORD}, (422, "bad_request")),
        ({"name": 12, "password": PASSWORD}, (422, "bad_request")),
        ({"name": "Dee"}, (422, "bad_request")),
        ({"name": "Dee", "password": PASSWORD, "admin": True}, (422, "bad_request")),
    ],
)
async def test_bad_sign_ups_are_refused_with_a_code(
    browser: Callable[[], httpx.AsyncClient], body: dict[str, Any], expected: tuple[int, str]
) -> None:
    client = browser()
    answer = await client.post("/account/signup", json=body)
    assert error(answer) == expected and answer.json()["sentence"]
    assert sessions.COOKIE not in answer.headers.get("set-cookie", "")


async def test_names_are_unique_case_insensitively_and_bad_json_is_refused(
    browser: Callable[[], httpx.AsyncClient],
) -> None:
    client = browser()
    await sign_up(client, "Eve")
    answer = await browser().post("/account/signup", json={"name": "EVE", "password": PASSWORD})
    assert error(answer) == (409, "name_taken")
    answer = await client.post("/account/signin", content=b"{not json")
    assert error(answer) == (400, "bad_json")
    assert error(await client.get("/players/Nobody", headers={"accept": "application/json"})) == (
        404,
        "player_not_found",
    )


async def test_a_password_change_ends_every_other_session(
    browser: Callable[[], httpx.AsyncClient],
) -> None:
    here, there = browser(), browser()
    csrf = await sign_up(here, "Fay")
    await sign_in(there, "Fay")
    change = {"old": "not it at all", "new": "a new password"}
    answer = await here.post("/account/password", json=change, headers={"x-csrf-token": csrf})
    assert error(answer) == (403, "bad_credentials")
    change["old"] = PASSWORD
    assert error(await here.post("/account/password", json=change)) == (403, "csrf_failed")
    answer = await here.post("/account/password", json=change, headers={"x-csrf-token": csrf})
    assert answer.status_code == 200
    assert (await here.get("/account")).json()["player"]["name"] == "Fay"  # a new session
    assert (await there.get("/account")).json()["player"] is None
    assert error(await sign_in(browser(), "Fay")) == (401, "bad_credentials")
    assert (await sign_in(browser(), "Fay", "a new password")).status_code == 200


async def test_seats_follow_the_account_to_another_browser_and_no_one_else(
    browser: Callable[[], httpx.AsyncClient], players_server: ServerThread
) -> None:
    laptop, phone, other = browser(), browser(), browser()
    csrf = await sign_up(laptop, "Gus")
    created = await laptop.post(
        "/rooms", json={"side": "olympians", "name": "Not Gus"}, headers={"x-csrf-token": csrf}
    )
    assert created.status_code == 201
    room = created.json()["room"]
    # a seat is taken with the cookie: the CSRF token is required
    assert error(await laptop.post("/rooms", json={})) == (403, "csrf_failed")
    summary = (await laptop.get(f"/rooms/{room}")).json()
    assert summary["names"]["olympians"] == "Gus"  # the account's name, not the one sent
    assert summary["players"] == {"olympians": True, "chthonians": False}

    phone_csrf = (await sign_in(phone, "gus")).json()["csrf"]
    games = (await phone.get("/account/games")).json()["games"]
    assert [(g["room"], g["seat"]) for g in games] == [(room, "olympians")]
    assert games[0]["summary"]["status"] == "open"
    assert error(await phone.post(f"/rooms/{room}/seat")) == (403, "csrf_failed")
    seated = await phone.post(f"/rooms/{room}/seat", headers={"x-csrf-token": phone_csrf})
    assert seated.status_code == 200 and seated.json()["seat"] == "olympians"
    # both tokens play: the laptop's is not revoked by the phone's sign-in
    for token in (created.json()["token"], seated.json()["token"]):
        game = Game(room, created.json()["epoch"], {Faction.OLYMPIANS: token})
        client = await seat(players_server.ws_url, game, Faction.OLYMPIANS)
        await client.close()

    other_csrf = await sign_up(other, "Hal")
    refused = await other.post(f"/rooms/{room}/seat", headers={"x-csrf-token": other_csrf})
    assert error(refused) == (403, "not_your_seat")
    async with httpx.AsyncClient(base_url=players_server.url) as guest:
        assert error(await guest.post(f"/rooms/{room}/seat")) == (401, "sign_in_required")
        assert error(await guest.get("/account/games")) == (401, "sign_in_required")


async def test_a_guest_who_signs_up_keeps_the_games_of_that_browser(
    browser: Callable[[], httpx.AsyncClient],
) -> None:
    guest = browser()
    created = (await guest.post("/rooms", json={"side": "chthonians", "name": "Ida"})).json()
    csrf = await sign_up(guest, "Ida")
    claim = {"tokens": [created["token"], "t1.nope.olympians.1.xxxx", "garbage"]}
    answer = await guest.post("/account/claim", json=claim, headers={"x-csrf-token": csrf})
    assert answer.json() == {"claimed": [created["room"]]}
    games = (await guest.get("/account/games")).json()["games"]
    assert [(g["room"], g["seat"]) for g in games] == [(created["room"], "chthonians")]
    # the token in someone else's hands: the seat is Ida's now, not theirs
    thief = browser()
    thief_csrf = await sign_up(thief, "Jo")
    answer = await thief.post("/account/claim", json=claim, headers={"x-csrf-token": thief_csrf})
    assert answer.json() == {"claimed": []}
    assert (await thief.get("/account/games")).json()["games"] == []
    too_many = {"tokens": ["x"] * 101}
    answer = await guest.post("/account/claim", json=too_many, headers={"x-csrf-token": csrf})
    assert error(answer) == (422, "bad_request")


async def test_a_guest_may_not_play_under_an_accounts_name(
    browser: Callable[[], httpx.AsyncClient],
) -> None:
    """Creating, joining, or playing the computer as a guest under a name an account has (as
    names are compared) is refused with ``409 account_name``, nothing created or joined; the
    account's owner, signed in, plays under it, and a guest under any other name."""
    owner, guest = browser(), browser()
    csrf = await sign_up(owner, "Kim Ro")

    async def rooms() -> list[Any]:
        return [
            (await guest.get("/rooms", params={"status": status})).json()["rooms"]
            for status in ("open", "live")
        ]

    before = await rooms()
    for path, body in (
        ("/rooms", {"side": "olympians", "name": "kim  RO"}),
        ("/rooms", {"challenge": 2, "name": "Kim Ro"}),
        ("/rooms/computer", {"side": "olympians", "level": "easy", "name": "KIM RO"}),
    ):
        answer = await guest.post(path, json=body)
        assert error(answer) == (409, "account_name"), (path, answer.text)
        assert "sign in" in answer.json()["sentence"]
    assert await rooms() == before

    room = (await browser().post("/rooms", json={"side": "olympians", "name": "Lu"})).json()
    refused = await guest.post(f"/rooms/{room['room']}/join", json={"name": "Kim Ro"})
    assert error(refused) == (409, "account_name")
    summary = (await guest.get(f"/rooms/{room['room']}")).json()
    assert summary["status"] == "open" and summary["names"].get("chthonians") is None
    joined = await guest.post(f"/rooms/{room['room']}/join", json={"name": "Kim Rowe"})
    assert joined.status_code == 200, joined.text

    created = await owner.post(
        "/rooms", json={"side": "olympians", "name": "Kim Ro"}, headers={"x-csrf-token": csrf}
    )
    assert created.status_code == 201, created.text
    summary = (await owner.get(f"/rooms/{created.json()['room']}")).json()
    assert summary["names"]["olympians"] == "Kim Ro" and summary["players"]["olympians"]
    # signed in, another account's name is no way in either: the seat takes the player's own
    other = browser()
    other_csrf = await sign_up(other, "Nell")
    joined = await other.post(
        f"/rooms/{created.json()['room']}/join",
        json={"name": "Kim Ro"},
        headers={"x-csrf-token": other_csrf},
    )
    assert joined.status_code == 200, joined.text
    summary = (await other.get(f"/rooms/{created.json()['room']}")).json()
    assert summary["names"] == {"olympians": "Kim Ro", "chthonians": "Nell"}


async def test_a_rematch_drops_a_guests_name_an_account_has_taken_since(
    browser: Callable[[], httpx.AsyncClient], players_server: ServerThread
) -> None:
    """Two guests play, one resigns; an account is then made under one guest's name: the
    rematch shows that guest without a name, the other under theirs."""
    guest = browser()
    created = (await guest.post("/rooms", json={"side": "olympians", "name": "Oda"})).json()
    joined = (await guest.post(f"/rooms/{created['room']}/join", json={"name": "Pim"})).json()
    tokens = {Faction.OLYMPIANS: created["token"], Faction.CHTHONIANS: joined["token"]}
    game = Game(created["room"], created["epoch"], tokens)
    resigner = await seat(players_server.ws_url, game, Faction.CHTHONIANS)
    ack = await resigner.command("give-up", {"type": "resign"})
    assert ack["type"] == "ack", ack
    await resigner.close()
    await sign_up(browser(), "ODA")
    rematch = await guest.post(
        f"/rooms/{created['room']}/rematch",
        headers={"authorization": f"Bearer {created['token']}"},
    )
    assert rematch.status_code == 200, rematch.text
    summary = (await guest.get(f"/rooms/{rematch.json()['room']}")).json()
    assert summary["names"].get("chthonians") is None  # Oda played the Olympians
    assert summary["names"]["olympians"] == "Pim"


async def test_rated_games_are_for_two_signed_in_players(
    browser: Callable[[], httpx.AsyncClient],
) -> None:
    guest, kim = browser(), browser()
    assert error(await guest.post("/rooms", json={"rated": True})) == (403, "sign_in_required")
    csrf = await sign_up(kim, "Kim")
    headers = {"x-csrf-token": csrf}
    answer = await kim.post("/rooms/computer", json={"rated": True}, headers=headers)
    assert error(answer) == (422, "bad_request")
    answer = await kim.post("/rooms", json={"rated": True, "challenge": 2}, headers=headers)
    assert error(answer) == (422, "bad_request")
    room = (await kim.post("/rooms", json={"rated": True}, headers=headers)).json()["room"]
    assert error(await guest.post(f"/rooms/{room}/join", json={})) == (403, "sign_in_required")
    own = await kim.post(f"/rooms/{room}/join", json={}, headers=headers)
    assert error(own) == (409, "already_seated")  # not against oneself
    assert (await kim.get(f"/rooms/{room}/ratings")).json() == {"rated": True, "changes": {}}


async def play_rated_game(
    servers: tuple[ServerThread, ServerThread],
    store: EventStore,
    first: httpx.AsyncClient,
    second: httpx.AsyncClient,
    csrf: tuple[str, str],
    seed: int = 5,
) -> Game:
    """A rated game of the two signed-in browsers played to its end, the Olympians' seat on
    the first server, the Chthonians' on the second."""
    created = await first.post(
        "/rooms", json={"side": "olympians", "rated": True}, headers={"x-csrf-token": csrf[0]}
    )
    room = created.json()["room"]
    joined = await second.post(f"/rooms/{room}/join", json={}, headers={"x-csrf-token": csrf[1]})
    tokens = {
        Faction.OLYMPIANS: created.json()["token"],
        Faction.CHTHONIANS: joined.json()["token"],
    }
    game = Game(room, created.json()["epoch"], tokens)
    await seat(servers[0].ws_url, game, Faction.OLYMPIANS)
    await seat(servers[1].ws_url, game, Faction.CHTHONIANS)
    await drive(game, Oracle(store, room), random.Random(seed), [])
    for client in game.seats.values():
        await client.close()
    return game


async def test_a_rated_game_changes_both_ratings_and_the_profiles_show_it(
    browser: Callable[[], httpx.AsyncClient], players_server: ServerThread, store: EventStore
) -> None:
    lu, max_ = browser(), browser()
    csrf = (await sign_up(lu, "Lu"), await sign_up(max_, "Max"))
    game = await play_rated_game((players_server, players_server), store, lu, max_, csrf)
    ratings: dict[str, Any] = {}

    async def rated() -> bool:
        ratings.update((await lu.get(f"/rooms/{game.room}/ratings")).json())
        return bool(ratings["changes"])

    await until(rated)
    result = (await lu.get(f"/rooms/{game.room}/log")).json()["result"]
    changes = ratings["changes"]
    assert set(changes) == {"olympians", "chthonians"}
    for seat_, change in changes.items():
        assert change["before"] == 1500
        won = result == seat_
        assert (change["delta"] > 0) == won or result == "draw"
    profile = (await lu.get("/players/lu", headers={"accept": "application/json"})).json()
    assert profile["player"]["name"] == "Lu" and profile["player"]["rated_games"] == 1
    assert profile["player"]["rating"] == changes["olympians"]["after"]
    assert [h["room"] for h in profile["history"]] == [game.room]
    assert [g["room"] for g in profile["recent"]] == [game.room]
    olympians = profile["record"]["olympians"]
    assert sum(olympians.values()) == 1 and sum(profile["record"]["chthonians"].values()) == 0
    assert "password" not in str(profile)
    board = (await lu.get("/players")).json()["players"]
    assert sorted(p["name"] for p in board) == ["Lu", "Max"]
    assert board[0]["rating"] >= board[1]["rating"]
    page = await lu.get("/players/Lu", follow_redirects=False)  # a link followed by a person
    assert page.status_code == 303 and page.headers["location"] == "/#/players/Lu"


async def test_passwords_are_hashed_on_threads_of_lower_priority_than_the_loop(
    players_server: ServerThread,
) -> None:
    """The hash runs on the pool's threads (never the event loop's), each niced below it."""
    import os
    import threading

    from olympus.server.passwords import NICENESS

    passwords = players_server.services.passwords
    seen: list[tuple[int, int]] = []

    def where() -> None:
        native = threading.get_native_id()
        seen.append((native, os.getpriority(os.PRIO_PROCESS, native)))

    await asyncio.wrap_future(passwords._pool.submit(where))
    hashed = await passwords.hash("a password long enough")
    assert await passwords.verify(hashed, "a password long enough")
    assert not await passwords.verify(hashed, "another password")
    loop_thread = players_server.thread.native_id
    assert seen and all(t != loop_thread and nice == NICENESS for t, nice in seen)
