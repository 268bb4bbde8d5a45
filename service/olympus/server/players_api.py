"""The players' HTTP API (api.md, "Players"): accounts, sessions, a player's seats on any
device, profiles, the leaderboard and a rated game's changes.

A request made with the session cookie that changes anything must carry the session's CSRF
token (sessions.py): ``csrf_required`` here refuses it with ``403 csrf_failed`` otherwise.
"""

from __future__ import annotations

import contextlib
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel, ConfigDict, Field
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from olympus.store import RatingChange, RoomArchived, RoomNotFound

from . import sessions, tokens
from .accounts import SignedIn, public
from .http_base import body_of, handles_errors, required, seated_body, services_of, signed_in
from .lobby import SEATS, LobbyError, seat_accounts

MAX_CLAIMS = 100


class Credentials(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=1024)


class SignOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    everywhere: bool = False


class NewPassword(BaseModel):
    model_config = ConfigDict(extra="forbid")
    old: str = Field(min_length=1, max_length=1024)
    new: str = Field(min_length=1, max_length=1024)


class Claim(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tokens: list[str] = Field(max_length=MAX_CLAIMS)


def _address(request: Request) -> str:
    return request.client.host if request.client is not None else "-"


def _session_answer(request: Request, player: SignedIn, status: int = 200) -> Response:
    """The player and the session's CSRF token, with the session's cookie."""
    secret = services_of(request).secret
    response = JSONResponse(
        {"player": public(player.account), "csrf": sessions.csrf_token(secret, player.claim)},
        status_code=status,
    )
    response.set_cookie(
        sessions.COOKIE,
        sessions.sign(secret, player.claim),
        max_age=sessions.MAX_AGE,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
    )
    return response


@handles_errors
async def sign_up(request: Request) -> Response:
    body = await body_of(request, Credentials)
    accounts = services_of(request).accounts
    player = await accounts.sign_up(body.name, body.password, _address(request))
    return _session_answer(request, player, 201)


@handles_errors
async def sign_in(request: Request) -> Response:
    body = await body_of(request, Credentials)
    accounts = services_of(request).accounts
    return _session_answer(
        request, await accounts.sign_in(body.name, body.password, _address(request))
    )


@handles_errors
async def sign_out(request: Request) -> Response:
    body = await body_of(request, SignOut)
    player = await signed_in(request, changes=True)
    if player is not None:
        await services_of(request).accounts.sign_out(player, body.everywhere)
    response = JSONResponse({"player": None})
    response.delete_cookie(sessions.COOKIE)
    return response


@handles_errors
async def session(request: Request) -> Response:
    """The signed-in player and the CSRF token, or ``{"player": null}`` (an ended session's
    cookie is dropped)."""
    services = services_of(request)
    try:
        player = await signed_in(request, changes=False)
    except LobbyError as error:
        if error.code != "session_ended":
            raise
        player = None
    if player is None:
        response = JSONResponse(
            {"player": None, "csrf": None, "accounts": services.accounts.enabled}
        )
        response.delete_cookie(sessions.COOKIE)
        return response
    return _session_answer(request, player)


@handles_errors
async def change_password(request: Request) -> Response:
    body = await body_of(request, NewPassword)
    player = await required(request, changes=True)
    accounts = services_of(request).accounts
    return _session_answer(request, await accounts.change_password(player, body.old, body.new))


@handles_errors
async def claim_seats(request: Request) -> Response:
    """Bind the seats of a guest's tokens (this browser's games) to the account: the rooms
    now the account's. Tokens that are not valid, not current, or of seats another account
    holds are passed over."""
    body = await body_of(request, Claim)
    player = await required(request, changes=True)
    services = services_of(request)
    claimed = []
    for token in body.tokens:
        try:
            claim = tokens.verify(services.secret, token)
            if claim.seat not in (*SEATS, "host"):
                continue
            await services.lobby.check_generation(claim)
            if await services.accounts.bind(player.account, claim):
                claimed.append(claim.room)
        except (tokens.TokenError, LobbyError, RoomNotFound, RoomArchived):
            continue
    return JSONResponse({"claimed": claimed})


@handles_errors
async def my_games(request: Request) -> Response:
    """The account's rooms (newest first) with its seat and each room's summary."""
    player = await required(request, changes=False)
    services = services_of(request)
    games = await services.accounts.games(player.account)
    summaries = {}
    for room, _ in games:
        with contextlib.suppress(LobbyError):
            summaries[room] = await services.lobby.summary(room)
    return JSONResponse(
        {
            "games": [
                {"room": room, "seat": seat, "summary": summaries[room]}
                for room, seat in games
                if room in summaries
            ]
        }
    )


@handles_errors
async def seat_token(request: Request) -> Response:
    """A token of the account's own seat of the room (a sign-in on another device): the seat's
    current generation, so tokens held elsewhere stay valid. ``403 not_your_seat`` for a room
    the account holds no seat of."""
    player = await required(request, changes=True)
    room = request.path_params["room"]
    services = services_of(request)
    seats = await services.backend.seats.fields(room) if tokens.is_room_id(room) else {}
    if not seats:
        raise LobbyError(404, "room_not_found", "There is no such room.")
    mine = [s for s, a in seat_accounts(seats).items() if a == player.account.id]
    if not mine and seats.get("account:host") == str(player.account.id):
        mine = ["host"]
    if not mine:
        raise LobbyError(403, "not_your_seat", "You hold no seat in this game.")
    seated = await services.lobby.reissue(room, mine[0])
    return JSONResponse(seated_body(seated))


def _change(change: RatingChange) -> dict[str, Any]:
    return {
        "room": change.room_id,
        "seat": change.seat,
        "score": change.score,
        "before": round(change.before.rating),
        "after": round(change.after.rating),
        "deviation": round(change.after.deviation),
        "delta": round(change.after.rating) - round(change.before.rating),
        "at_ms": change.rated_ms,
    }


@handles_errors
async def profile(request: Request) -> Response:
    """A player's public profile: name, rating, the rating's history (oldest first), wins and
    losses by side in rated games, recent games. A request that does not ask for JSON (a
    link followed in a browser) is sent to the client's page of the profile."""
    if "application/json" not in request.headers.get("accept", ""):  # a person: the page
        return RedirectResponse(f"/#/players/{quote(request.path_params['name'])}", 303)
    services = services_of(request)
    account = await services.accounts.find(request.path_params["name"])
    history = await services.accounts.history(account)
    record = {s: {"won": 0, "lost": 0, "drawn": 0} for s in SEATS}
    for change in history:
        key = "won" if change.score == 1 else "lost" if change.score == 0 else "drawn"
        record[change.seat][key] += 1
    recent = []
    for room, seat in await services.accounts.games(account, limit=20):
        with contextlib.suppress(LobbyError):
            summary = await services.lobby.summary(room)
            if summary["status"] == "finished":
                recent.append({"room": room, "seat": seat, "summary": summary})
    return JSONResponse(
        {
            "player": public(account),
            "history": [_change(c) for c in reversed(history)],
            "record": record,
            "recent": recent,
        }
    )


@handles_errors
async def leaderboard(request: Request) -> Response:
    services = services_of(request)
    best = await services.accounts.leaderboard(services.settings.leaderboard_min_games, 100)
    return JSONResponse(
        {"min_games": services.settings.leaderboard_min_games, "players": [public(a) for a in best]}
    )


@handles_errors
async def room_ratings(request: Request) -> Response:
    """A rated game's changes, by seat, once its ratings changed (``{}`` before)."""
    services = services_of(request)
    summary = await services.lobby.summary(request.path_params["room"])
    changes = (
        await services.accounts.changes(summary["room"]) if summary["options"].get("rated") else []
    )
    return JSONResponse(
        {
            "rated": bool(summary["options"].get("rated")),
            "changes": {c.seat: _change(c) for c in changes},
        }
    )


ROUTES = [
    Route("/account", session, methods=["GET"]),
    Route("/account/signup", sign_up, methods=["POST"]),
    Route("/account/signin", sign_in, methods=["POST"]),
    Route("/account/signout", sign_out, methods=["POST"]),
    Route("/account/password", change_password, methods=["POST"]),
    Route("/account/claim", claim_seats, methods=["POST"]),
    Route("/account/games", my_games, methods=["GET"]),
    Route("/rooms/{room}/seat", seat_token, methods=["POST"]),
    Route("/rooms/{room}/ratings", room_ratings, methods=["GET"]),
    Route("/players", leaderboard, methods=["GET"]),
    Route("/players/{name}", profile, methods=["GET"]),
]
