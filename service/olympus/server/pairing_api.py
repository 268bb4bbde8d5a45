"""Quick pairing's HTTP API (api.md, "Quick pairing") and the lobby's counts.

A seek is made, waited for and cancelled with the session cookie (and its CSRF token): a wait
is a long poll that keeps the seek alive while it lasts (pairing.py).
"""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from olympus.ratings.levels import level_ratings

from .http_base import body_of, handles_errors, required, seated_body, services_of
from .pairing import SeekRequest

ONLINE_SECONDS = 300  # a player seen this recently is online
ONLINE_NAMES = 50
COMPUTER_RATINGS = level_ratings()  # the computer's levels on the players' scale


@handles_errors
async def make_seek(request: Request) -> Response:
    """``201 {"seek", "pool"}``: a seek of the signed-in player (its earlier one cancelled)."""
    body = await body_of(request, SeekRequest)
    player = await required(request, changes=True)
    seek = await services_of(request).pairing.seek(player.account, body)
    return JSONResponse({"seek": seek, "pool": body.pool()}, status_code=201)


@handles_errors
async def wait_seek(request: Request) -> Response:
    """A long poll: ``{"status": "paired", room, epoch, seat, token}`` once paired, else
    ``{"status": "waiting"}`` after some seconds (wait again); ``404 seek_gone``."""
    player = await required(request, changes=True)
    pairing = services_of(request).pairing
    seated = await pairing.wait(
        player.account, request.path_params["seek"], request.is_disconnected
    )
    if seated is None:
        return JSONResponse({"status": "waiting"})
    return JSONResponse({"status": "paired", **seated_body(seated)})


@handles_errors
async def cancel_seek(request: Request) -> Response:
    await required(request, changes=True)
    cancelled = await services_of(request).pairing.cancel(request.path_params["seek"])
    return JSONResponse({"cancelled": cancelled})


@handles_errors
async def lobby_counts(request: Request) -> Response:
    """Who is online (signed-in players seen in the last minutes), how many games are live and
    how many seek, and the computer's levels' ratings."""
    services = services_of(request)
    backend = services.backend
    since = time.time_ns() // 1_000_000 - ONLINE_SECONDS * 1000
    online, names = await backend.players.online(since, ONLINE_NAMES)
    seeking = {pool: await backend.seeks.waiting(pool) for pool in await backend.seeks.pools()}
    return JSONResponse(
        {
            "online": online,
            "players": names,
            "live_games": await backend.rooms.count_by_status("live"),
            "seeking": {pool: n for pool, n in seeking.items() if n},
            "computer": COMPUTER_RATINGS,
        }
    )


ROUTES = [
    Route("/seeks", make_seek, methods=["POST"]),
    Route("/seeks/{seek}/wait", wait_seek, methods=["POST"]),
    Route("/seeks/{seek}", cancel_seek, methods=["DELETE"]),
    Route("/lobby", lobby_counts, methods=["GET"]),
]
