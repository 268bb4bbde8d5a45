"""The ASGI application: HTTP routes, the ``/ws`` websocket, and the services' lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.datastructures import State
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket

from olympus import native

from .connection import websocket_endpoint
from .http_api import ROUTES
from .pairing_api import ROUTES as PAIRING_ROUTES
from .players_api import ROUTES as PLAYER_ROUTES
from .services import Services
from .settings import Settings

# The browser client (docs/client.md): static files served at "/", found relative to the package
# (its source, not the compiled copy this module may run from: olympus.native).
WEB_CLIENT = native.PACKAGE.resolve().parents[1] / "web_client"


class _ClientFiles(StaticFiles):
    async def get_response(self, path: str, scope: Scope) -> Response:
        response = await super().get_response(path, scope)
        response.headers["Cache-Control"] = "no-cache"
        return response


class ServiceApp:
    """The service's ASGI application: ``/ws`` straight to the connection's endpoint, all else
    (the HTTP routes, the client's files, the lifespan) Starlette's.

    Why not a ``WebSocketRoute``: through Starlette a websocket passes its two middlewares,
    its router and its exception wrapper, which also wraps the ``send`` of the socket's ASGI
    messages, all interpreted, once per socket and a game has three (docs/performance.md,
    "The websocket's frames"). The endpoint needs none of it: it answers bad input itself, in
    frames (docs/protocol.md), and raises no ``WebSocketException`` for Starlette to turn
    into a close; what it does raise reaches uvicorn as it did through Starlette. (The path is
    compared whole: ``olympus serve`` sets no ``root_path``.)"""

    def __init__(self, starlette: Starlette) -> None:
        self.starlette = starlette

    @property
    def state(self) -> State:
        return self.starlette.state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and scope["path"] == "/ws":
            scope["app"] = self.starlette  # as Starlette sets it: the services are its state
            await websocket_endpoint(WebSocket(scope, receive, send))
        else:
            await self.starlette(scope, receive, send)


def create_app(settings: Settings) -> ServiceApp:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        services = Services(settings)
        await services.start()
        app.state.services = services
        try:
            yield
        finally:
            await services.stop()

    routes: list[BaseRoute] = [*ROUTES, *PLAYER_ROUTES, *PAIRING_ROUTES]
    if WEB_CLIENT.is_dir():  # last: everything else is the client's
        routes.append(Mount("/", app=_ClientFiles(directory=WEB_CLIENT, html=True), name="client"))
    return ServiceApp(Starlette(routes=routes, lifespan=lifespan))
