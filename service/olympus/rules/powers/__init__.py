"""Character powers: one module per character, one ``Power`` per module, in ``registry``."""

from __future__ import annotations

from .base import NOBODY, Action, MoveContext, Power
from .registry import POWERS, GroupPowers, group_powers, powers_of, register


def _load_characters() -> None:
    """Import every character module of this package; each registers its power."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        if module.name not in ("base", "flight", "registry"):
            importlib.import_module(f"{__name__}.{module.name}")


__all__ = [
    "NOBODY",
    "POWERS",
    "Action",
    "GroupPowers",
    "MoveContext",
    "Power",
    "group_powers",
    "powers_of",
    "register",
]
