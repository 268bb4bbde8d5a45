"""The ASGI application: HTTP routes, the ``/ws`` websocket, and the services' lifespan."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.routing import WebSocketRoute

from .connection import websocket_endpoint
from .http_api import ROUTES
from .services import Services
from .settings import Settings


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

    return Starlette(routes=[*ROUTES, WebSocketRoute("/ws", websocket_endpoint)], lifespan=lifespan)
