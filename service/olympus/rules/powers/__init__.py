"""The registry of character powers: one module per character, one ``Power`` per module."""

from __future__ import annotations

from collections.abc import Iterable

from ..characters import ORDER
from .base import Action, MoveContext, Power

POWERS: dict[str, Power] = {}


def register(cls: type[Power]) -> None:
    """Each character module calls this after its class: one instance per character. (A call,
    not a class decorator: mypyc compiles only undecorated classes to native classes.)"""
    POWERS[cls.unit] = cls()
    _POWERS_OF.clear()


def powers_of(units: Iterable[str], hook: str | None = None) -> tuple[Power, ...]:
    """The powers of ``units`` in a stable order (R1 order), skipping characters without one.

    With ``hook`` (the name of a ``Power`` method), only the powers that override it: the
    others leave the rules as they are there, so a hot loop need not ask them.

    Asked for every candidate move (legal_actions): the answers are remembered in a plain dict,
    which is cheaper to ask than ``lru_cache``. It stays small: the units asked about are one
    side's (12 characters), so there are at most 2 × 2¹² sets × the hooks, and in play far fewer
    (groups of up to 4, a side's hidden or revealed units).
    """
    key = (units if isinstance(units, tuple) else tuple(units), hook)
    found = _POWERS_OF.get(key)
    if found is None:
        found = _POWERS_OF[key] = tuple(
            POWERS[u]
            for u in sorted(key[0], key=ORDER.__getitem__)
            if u in POWERS and (hook is None or _overrides(POWERS[u], hook))
        )
    return found


_POWERS_OF: dict[tuple[tuple[str, ...], str | None], tuple[Power, ...]] = {}


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
