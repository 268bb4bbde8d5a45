"""The game service: HTTP rooms API and the ``/ws`` websocket protocol over the event store.

``olympus serve`` calls ``cli_serve``; tests build the app with ``create_app(Settings(...))``.

``COMPILED`` says whether the modules a command runs through run compiled by mypyc
(``olympus.native``) or as source.
"""

from ..native import runs_compiled
from .app import create_app
from .serve import cli_serve
from .settings import Settings

# Where the package's modules came from: olympus.native chose it before this module ran.
COMPILED = runs_compiled(__path__)

__all__ = ["COMPILED", "Settings", "cli_serve", "create_app"]
