"""The HTTP JSON API (docs/api.md): rooms, seats, logs, health and metrics.

Errors are ``{"code", "sentence"}`` with a fitting status, like the websocket's error frames.
"""

from __future__ import annotations

import json
import logging
import math
import os
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from olympus.rules import IllegalCommand
from olympus.rules.observation import view
from olympus.store import Account, RoomNotFound

from . import tokens
from .commentary import NoCommentary, delay_of
from .computer import (
    CreateComputerRoom,
    CreateWatchRoom,
    against_computer,
    computer_against_itself,
)
from .http_base import (
    ANALYSIS_RETRY,
    body_of,
    handles_errors,
    http_error,
    seated_body,
    services_of,
    signed_in,
)
from .lobby import STATUSES, CreateRoom, JoinRoom, LobbyError
from .metrics import CONTENT_TYPE
from .room import RoomRuntime

if TYPE_CHECKING:
    from .services import Services

log = logging.getLogger("olympus.server.http_api")

MAX_LIST = 100


def _bearer(request: Request) -> tokens.SeatClaim:
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token:
        raise LobbyError(401, "token_required", "Send the seat token as 'Authorization: Bearer'.")
    claim = tokens.verify(services_of(request).secret, token.strip())
    if claim.room != request.path_params["room"]:
        raise LobbyError(403, "wrong_room", "This token is for another room.")
    return claim


async def _player(request: Request) -> Account | None:
    """The signed-in player's account of a request that takes a seat (its CSRF token
    checked), or None for a guest."""
    player = await signed_in(request, changes=True)
    return None if player is None else player.account


def _overloaded(services: Services) -> Response:
    services.metrics.shed.inc("create_room")
    retry = str(min(30, max(1, math.ceil(services.loop_lag.lag()))))
    sentence = "The server is too busy to open a room now; try again shortly."
    return http_error(503, "overloaded", sentence, {"retry-after": retry})


@handles_errors
async def create_room(request: Request) -> Response:
    """A new room, unless the process is overloaded: a game not yet begun is the load to shed
    (the games under way keep their pace; another process of the deployment may take it)."""
    services = services_of(request)
    if services.overloaded:
        return _overloaded(services)
    spec = await body_of(request, CreateRoom)
    player = await _player(request)
    name = await services.accounts.seat_name(spec.name, player)
    try:
        seated = await services.lobby.create(spec, name, account=player)
    except IllegalCommand as illegal:
        raise LobbyError(422, illegal.code, illegal.sentence) from None
    return JSONResponse(seated_body(seated), status_code=201)


@handles_errors
async def create_computer_room(request: Request) -> Response:
    """A room against the computer: the person's seat; the computer takes the other."""
    services = services_of(request)
    if services.overloaded:
        return _overloaded(services)
    spec = await body_of(request, CreateComputerRoom)
    seated = await against_computer(services, spec, await _player(request))
    return JSONResponse(seated_body(seated), status_code=201)


@handles_errors
async def create_watch_room(request: Request) -> Response:
    """A room where the computer plays itself, for spectators."""
    services = services_of(request)
    if services.overloaded:
        return _overloaded(services)
    seated = await computer_against_itself(services, await body_of(request, CreateWatchRoom))
    return JSONResponse({"room": seated.room, "epoch": str(seated.epoch)}, status_code=201)


@handles_errors
async def join_room(request: Request) -> Response:
    services, room = services_of(request), request.path_params["room"]
    if "authorization" in request.headers:  # a Challenge creator exchanging the host token
        claim = _bearer(request)
        if claim.seat != "host":
            raise LobbyError(409, "already_seated", "This token already holds a seat.")
        seated = await services.lobby.host_seat(claim)
    else:
        spec = await body_of(request, JoinRoom)
        player = await _player(request)
        name = await services.accounts.seat_name(spec.name, player)
        delay = spec.expected_delay()
        seated = await services.lobby.join(room, spec.side, name, player, delay)
        if seated.draws_setup:  # else the room is loaded by its first hello
            await services.start_random_setup(await services.registry.get(room))
    return JSONResponse(seated_body(seated))


@handles_errors
async def revoke_seat(request: Request) -> Response:
    claim = _bearer(request)
    if claim.seat == "host":
        raise LobbyError(409, "no_seat", "A host token holds no seat yet.")
    return JSONResponse(seated_body(await services_of(request).revoke(claim)))


@handles_errors
async def rematch(request: Request) -> Response:
    """A finished game's rematch for the seat of the token (api.md): same options, sides
    swapped; created by the first of the two players to ask."""
    services = services_of(request)
    seated = await services.lobby.rematch(_bearer(request), services.accounts.guest_name)
    await services.start_random_setup(await services.registry.get(seated.room))
    return JSONResponse(seated_body(seated))


@handles_errors
async def list_rooms(request: Request) -> Response:
    status = request.query_params.get("status", "open")
    if status not in STATUSES:
        raise LobbyError(422, "bad_status", f"status is one of {', '.join(STATUSES)}.")
    try:
        offset = max(0, int(request.query_params.get("offset", 0)))
        limit = min(MAX_LIST, max(1, int(request.query_params.get("limit", MAX_LIST))))
    except ValueError:
        raise LobbyError(422, "bad_request", "offset and limit are integers.") from None
    services = services_of(request)
    rooms = await services.backend.rooms.rooms_by_status(status, offset=offset, limit=limit)
    watching = await services.watchers.totals()
    return JSONResponse({"rooms": await services.lobby.summaries(rooms, status, watching)})


@handles_errors
async def get_room(request: Request) -> Response:
    services = services_of(request)
    watching = await services.watchers.totals()
    return JSONResponse(await services.lobby.summary(request.path_params["room"], watching))


@handles_errors
async def featured_room(request: Request) -> Response:
    """The lobby's featured live game (watchers.py): ``{"room": summary or null}``."""
    services = services_of(request)
    return JSONResponse({"room": await services.watchers.featured(services.lobby)})


async def _room(request: Request) -> RoomRuntime:
    room = request.path_params["room"]
    if not tokens.is_room_id(room):
        raise RoomNotFound(room)
    return await services_of(request).registry.get(room)


@handles_errors
async def room_log(request: Request) -> Response:
    """The unredacted log once the game is over; before that, what a spectator sees (R7)."""
    runtime = await _room(request)
    await runtime.reader.complete()  # restored from a snapshot: read the events before it
    body: dict[str, Any] = {"room": runtime.room_id, "epoch": str(runtime.epoch)}
    body["over"] = runtime.over
    if runtime.over:
        body["result"] = runtime.state.result
        body["events"] = runtime.feed.full_log()
    else:
        feed = runtime.feed.feeds[None]
        body["messages"] = [{"seq": i + 1, "event": m} for i, m in enumerate(feed.messages)]
    return JSONResponse(body)


@handles_errors
async def room_commentary(request: Request) -> Response:
    """The room's commentary stream (commentary.py) after message ``after``: the messages
    released now, in order; ``403 no_commentary`` for a room without a broadcast delay."""
    try:
        after = int(request.query_params.get("after", 0))
    except ValueError:
        raise LobbyError(422, "bad_request", "after is a message number (an integer).") from None
    if after < 0:
        raise LobbyError(422, "bad_request", "after is a message number, 0 or more.")
    runtime = await _room(request)
    services = services_of(request)
    try:
        delay = delay_of(await services.lobby.meta(runtime.room_id))
    except NoCommentary:
        raise LobbyError(403, "no_commentary", NoCommentary.sentence) from None
    commentary = await runtime.commentary_stream(delay)
    released = commentary.due(commentary.clock())
    return JSONResponse(
        {
            "room": runtime.room_id,
            "epoch": str(runtime.epoch),
            "delay_seconds": delay,
            "seq": released,
            "messages": commentary.messages(min(after, released), released),
            "next_ms": commentary.next_due_ms(released),
            "over": commentary.complete(released),
            "result": runtime.state.result if commentary.complete(released) else None,
        }
    )


@handles_errors
async def room_view(request: Request) -> Response:
    """The position as a spectator sees it now (R7), and the spectators' message number."""
    runtime = await _room(request)
    return JSONResponse(
        {
            "room": runtime.room_id,
            "epoch": str(runtime.epoch),
            "seq": runtime.feed.feeds[None].seq,
            "view": view(runtime.state, None),
        }
    )


@handles_errors
async def room_analysis(request: Request) -> Response:
    """The finished game's analysis by the coach (bots.md): 200 with it, 202 while it is
    being made (ask again after Retry-After), 409 before the end."""
    runtime = await _room(request)
    if not runtime.over:
        raise LobbyError(409, "not_finished", "The game is not over: it is analysed once over.")
    kept = await services_of(request).coach.analysis(runtime)
    if kept is None:
        return http_error(
            202,
            "analysis_pending",
            "The game is being analysed; ask again shortly.",
            {"retry-after": str(ANALYSIS_RETRY)},
        )
    body = json.loads(kept)
    return JSONResponse({"room": runtime.room_id, "epoch": str(runtime.epoch), **body})


@handles_errors
async def room_hint(request: Request) -> Response:
    """The move the search would play for the token's seat now, from its view (bots.md):
    in a game against the computer only."""
    claim = _bearer(request)
    services = services_of(request)
    if claim.seat == "host":
        raise LobbyError(409, "no_seat", "A host token holds no seat yet.")
    await services.lobby.check_generation(claim)
    runtime = await _room(request)
    meta = await services.lobby.meta(runtime.room_id)
    return JSONResponse(await services.coach.hint(runtime, claim.seat, meta))


async def healthz(request: Request) -> Response:
    """Readiness: 200 while the process can serve games, 503 when it can serve none.

    Ready: some Redis node answers a PING (on a cluster, one master of three is enough: the
    rooms of the others play on) and the classic pub/sub connection is up (the control channel;
    on one Redis, every room's hints), or has been down for less than ``CLASSIC_GRACE`` (it is
    moving to another node). ``shards_down`` names the masters that do not answer and those
    whose rooms' hints the process cannot hear now: their rooms' commands get ``unavailable``
    until the cluster has promoted a replica, and a 503 for them would take every process out
    of the balancer at once for a part of the rooms. ``status`` is ``ok`` with nothing down,
    ``degraded`` while ready with something down, ``unavailable`` with the 503.

    Overload is reported, not failed: an overloaded process still serves its games, and a
    readiness that failed on load would take every busy process out of the balancer at once.
    """
    services = services_of(request)
    fanout = services.fanout
    readiness = await fanout.readiness(timeout=2.0)
    ready = readiness.ready
    whole = fanout.connected and not readiness.shards_down
    body: dict[str, object] = {
        "status": "unavailable" if not ready else "ok" if whole else "degraded",
        "pid": os.getpid(),  # which process answered (olympus serve --workers N)
        "pubsub": fanout.connected,  # every subscription up: the classic one and the shards'
        "classic": readiness.hints,
        "shards_down": readiness.shards_down,
        "rooms": len(services.rooms),
        "connections": len(services.connections),
        "loop_lag_seconds": round(services.loop_lag.lag(), 3),
        "overloaded": services.overloaded,
    }
    if readiness.down is not None:
        body["redis"] = readiness.down
    return JSONResponse(body, status_code=200 if ready else 503)


async def metrics(request: Request) -> Response:
    text = services_of(request).metrics.registry.render()
    return PlainTextResponse(text, headers={"content-type": CONTENT_TYPE})


ROUTES = [
    Route("/rooms", create_room, methods=["POST"]),
    Route("/rooms/computer", create_computer_room, methods=["POST"]),
    Route("/rooms/watch", create_watch_room, methods=["POST"]),
    Route("/rooms", list_rooms, methods=["GET"]),
    Route("/rooms/featured", featured_room, methods=["GET"]),  # (not a room id: 8 characters)
    Route("/rooms/{room}", get_room, methods=["GET"]),
    Route("/rooms/{room}/join", join_room, methods=["POST"]),
    Route("/rooms/{room}/revoke", revoke_seat, methods=["POST"]),
    Route("/rooms/{room}/rematch", rematch, methods=["POST"]),
    Route("/rooms/{room}/log", room_log, methods=["GET"]),
    Route("/rooms/{room}/view", room_view, methods=["GET"]),
    Route("/rooms/{room}/commentary", room_commentary, methods=["GET"]),
    Route("/rooms/{room}/analysis", room_analysis, methods=["GET"]),
    Route("/rooms/{room}/hint", room_hint, methods=["POST"]),
    Route("/healthz", healthz, methods=["GET"]),
    Route("/metrics", metrics, methods=["GET"]),
]
