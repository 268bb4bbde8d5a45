"""The game service: HTTP rooms API and the ``/ws`` websocket protocol over the event store.

``olympus serve`` calls ``cli_serve``; tests build the app with ``create_app(Settings(...))``.
"""

from .app import create_app
from .serve import cli_serve
from .settings import Settings

__all__ = ["Settings", "cli_serve", "create_app"]
