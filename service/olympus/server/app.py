"""The ASGI application: HTTP routes, the ``/ws`` websocket, and the services' lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import Scope
from starlette.websockets import WebSocket

from olympus import native

from .connection import websocket_endpoint
from .http_api import ROUTES
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


def create_app(settings: Settings) -> Starlette:
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        services = Services(settings)
        await services.start()
        app.state.services = services
        try:
            yield
        finally:
            await services.stop()

    routes: list[BaseRoute] = [*ROUTES, WebSocketRoute("/ws", _websocket)]
    if WEB_CLIENT.is_dir():  # last: everything else is the client's
        routes.append(Mount("/", app=_ClientFiles(directory=WEB_CLIENT, html=True), name="client"))
    return Starlette(routes=routes, lifespan=lifespan)


async def _websocket(ws: WebSocket) -> None:
    """``/ws``. A function of this module, which runs interpreted: Starlette hands a websocket
    to what ``inspect.isfunction`` says is a function, and a compiled one is not
    (``olympus.native``); it would be called as an ASGI application instead."""
    await websocket_endpoint(ws)
