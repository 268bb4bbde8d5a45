"""The game service: HTTP rooms API and the ``/ws`` websocket protocol over the event store.

``olympus serve`` calls ``cli_serve``; tests build the app with ``create_app(Settings(...))``.

``COMPILED`` says whether the modules a command runs through run compiled by mypyc
(``olympus.native``) or as source.
"""

from ..native import activate

# Before any module of the package is imported (so the imports below come after code).
COMPILED = activate(__path__, "server")

from .app import create_app
from .serve import cli_serve
from .settings import Settings

__all__ = ["COMPILED", "Settings", "cli_serve", "create_app"]
