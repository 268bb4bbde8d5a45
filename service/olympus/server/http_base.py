"""What every HTTP route of the service shares (api.md): its services, the JSON body read
into a model, errors answered as ``{"code", "sentence"}`` with a fitting status (the table of
protocol.md, "Errors"), a seat as answered, and the request's signed-in player."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from olympus.store import EventsTrimmed, RoomArchived, RoomNotFound, StoreUnavailable

from . import sessions, tokens
from .accounts import SignedIn
from .coach import CoachBusy
from .lobby import LobbyError, Seated
from .logs import address
from .registry import RoomNotReady

if TYPE_CHECKING:
    from .services import Services

log = logging.getLogger("olympus.server.http")

Handler = Callable[[Request], Awaitable[Response]]
Body = TypeVar("Body", bound=BaseModel)
ANALYSIS_RETRY = 5  # seconds: the Retry-After of an analysis being made


def services_of(request: Request) -> Services:
    services: Services = request.app.state.services
    return services


def http_error(
    status: int, code: str, sentence: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse({"code": code, "sentence": sentence}, status_code=status, headers=headers)


def handles_errors(handler: Handler) -> Handler:
    @functools.wraps(handler)
    async def wrapper(request: Request) -> Response:
        try:
            return await handler(request)
        except LobbyError as error:
            retry = getattr(error, "retry_after", None)  # accounts.Limited: 429
            headers = {"retry-after": str(retry)} if retry is not None else None
            return http_error(error.status, error.code, error.sentence, headers)
        except tokens.TokenError as error:
            return http_error(401, error.code, error.sentence)
        except (RoomNotFound, RoomNotReady):
            return http_error(404, "room_not_found", "There is no such room.")
        except EventsTrimmed:  # a room restored from a snapshot, its log trimmed by someone
            return http_error(503, "log_unavailable", "The room's whole log cannot be read now.")
        except RoomArchived:
            return http_error(
                409, "archived", "This game is archived: it can be read, not changed."
            )
        except StoreUnavailable:  # e.g. an archived game while the archive is down
            sentence = "The game store cannot be reached now; try again shortly."
            return http_error(503, "unavailable", sentence, {"retry-after": "5"})
        except CoachBusy:
            sentence = "The coach is busy with other games; try again shortly."
            return http_error(503, "busy", sentence, {"retry-after": str(ANALYSIS_RETRY)})
        except ClientDisconnect:  # gone before its body was read: nothing was done, and nobody
            # is there to answer (nginx's "client closed request"). Not an error of ours: an
            # error in the log pages an operator.
            log.info("request abandoned", extra={"client": address(request.client)})
            return Response(status_code=499)

    return wrapper


async def body_of(request: Request, model: type[Body]) -> Body:
    raw = await request.body()
    try:
        data = json.loads(raw) if raw.strip() else {}
        return model.model_validate(data)
    except ValueError as error:  # JSON errors and pydantic's ValidationError alike
        if isinstance(error, ValidationError):
            first = error.errors()[0]
            where = ".".join(str(p) for p in first.get("loc", ())) or "body"
            raise LobbyError(422, "bad_request", f"{where}: {first.get('msg')}") from None
        raise LobbyError(400, "bad_json", "The body is not valid JSON.") from None


def seated_body(seated: Seated) -> dict[str, Any]:
    return {
        "room": seated.room,
        "epoch": str(seated.epoch),
        "seat": seated.seat,
        "token": seated.token,
    }


async def signed_in(request: Request, *, changes: bool) -> SignedIn | None:
    """The request's player (None without a session cookie); ``401 session_ended`` for an
    ended session; ``403 csrf_failed`` when ``changes`` and the CSRF token is not sent."""
    services = services_of(request)
    player = await services.accounts.current(request.cookies.get(sessions.COOKIE))
    if player is not None:
        await services.accounts.seen(player.account)
    if player is not None and changes:
        sent = request.headers.get(sessions.CSRF_HEADER)
        if not sessions.csrf_ok(services.secret, player.claim, sent):
            raise LobbyError(403, "csrf_failed", "Send the session's CSRF token (X-CSRF-Token).")
    return player


async def required(request: Request, *, changes: bool) -> SignedIn:
    player = await signed_in(request, changes=changes)
    if player is None:
        raise LobbyError(401, "sign_in_required", "Sign in first.")
    return player
