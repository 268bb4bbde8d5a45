"""The registry of character powers: one module per character, one ``Power`` per module."""

from __future__ import annotations

from collections.abc import Iterable

from ..characters import ORDER
from .base import Action, MoveContext, Power

POWERS: dict[str, Power] = {}


def register(cls: type[Power]) -> type[Power]:
    """Class decorator of each character module: one instance per character."""
    POWERS[cls.unit] = cls()
    return cls


def powers_of(units: Iterable[str]) -> list[Power]:
    """The powers of ``units`` in a stable order (R1 order), skipping characters without one."""
    return [POWERS[u] for u in sorted(units, key=ORDER.__getitem__) if u in POWERS]


def _load_characters() -> None:
    """Import every character module of this package; each registers its power."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        if module.name not in ("base", "flight"):
            importlib.import_module(f"{__name__}.{module.name}")


__all__ = ["POWERS", "Action", "MoveContext", "Power", "powers_of", "register"]
