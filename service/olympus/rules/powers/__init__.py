"""The registry of character powers: one module per character, one ``Power`` per module."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from ..characters import ORDER
from .base import Action, MoveContext, Power

POWERS: dict[str, Power] = {}


def register(cls: type[Power]) -> type[Power]:
    """Class decorator of each character module: one instance per character."""
    POWERS[cls.unit] = cls()
    _powers_of.cache_clear()
    return cls


def powers_of(units: Iterable[str], hook: str | None = None) -> tuple[Power, ...]:
    """The powers of ``units`` in a stable order (R1 order), skipping characters without one.

    With ``hook`` (the name of a ``Power`` method), only the powers that override it: the
    others leave the rules as they are there, so a hot loop need not ask them.
    """
    return _powers_of(tuple(units), hook)


# Asked for every candidate move (legal_actions): the answers are remembered, a bounded number.
@lru_cache(maxsize=4096)
def _powers_of(units: tuple[str, ...], hook: str | None) -> tuple[Power, ...]:
    return tuple(
        POWERS[u]
        for u in sorted(units, key=ORDER.__getitem__)
        if u in POWERS and (hook is None or _overrides(POWERS[u], hook))
    )


def _overrides(power: Power, hook: str) -> bool:
    """Whether ``power`` changes the rules at ``hook`` (the name of a ``Power`` method)."""
    return getattr(type(power), hook) is not getattr(Power, hook)


def _load_characters() -> None:
    """Import every character module of this package; each registers its power."""
    import importlib
    import pkgutil

    for module in pkgutil.iter_modules(__path__):
        if module.name not in ("base", "flight"):
            importlib.import_module(f"{__name__}.{module.name}")


__all__ = ["POWERS", "Action", "MoveContext", "Power", "powers_of", "register"]
