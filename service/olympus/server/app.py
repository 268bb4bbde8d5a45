"""The ASGI application: HTTP routes, the ``/ws`` websocket, and the services' lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from starlette.applications import Starlette
from starlette.responses import Response
from starlette.routing import BaseRoute, Mount, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from .connection import websocket_endpoint
from .http_api import ROUTES
from .services import Services
from .settings import Settings

# The browser client (docs/client.md): static files served at "/", found relative to the package.
WEB_CLIENT = Path(__file__).resolve().parents[3] / "web_client"


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

    routes: list[BaseRoute] = [*ROUTES, WebSocketRoute("/ws", websocket_endpoint)]
    if WEB_CLIENT.is_dir():  # last: everything else is the client's
        routes.append(Mount("/", app=_ClientFiles(directory=WEB_CLIENT, html=True), name="client"))
    return Starlette(routes=routes, lifespan=lifespan)
