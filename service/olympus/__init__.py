"""Storm over Olympus: an event-sourced game service.

Importing the package installs ``olympus.native``'s finder, ahead of any of its packages: so
``olympus.rules``, ``olympus.store`` and ``olympus.server`` run their compiled build where it
matches their source, and their source interpreted otherwise.
"""

from .native import install_finder

install_finder()
