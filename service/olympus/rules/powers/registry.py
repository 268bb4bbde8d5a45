"""The registry of character powers and ``powers_of``, the question every rule asks of it.

A module of its own (not the package's ``__init__``) so that mypyc compiles it: the rules ask
``powers_of`` for every candidate move.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from ..characters import ORDER
from .base import Power

POWERS: Final[dict[str, Power]] = {}


def register(cls: type[Power]) -> None:
    """Each character module calls this after its class: one instance per character. (A call,
    not a class decorator: mypyc compiles only undecorated classes to native classes.)"""
    power = cls()
    POWERS[power.unit] = power
    _POWERS_OF.clear()


def powers_of(units: Iterable[str], hook: str | None = None) -> tuple[Power, ...]:
    """The powers of ``units`` in a stable order (R1 order), skipping characters without one.

    With ``hook`` (the name of a ``Power`` method), only the powers that override it: the
    others leave the rules as they are there, so a hot loop need not ask them.

    Asked for every candidate move (legal_actions): the answers are remembered in plain dicts,
    one per hook, keyed by the units (cheaper to ask than ``lru_cache`` or a (units, hook)
    key). They stay small: the units asked about are one side's (12 characters), so there are
    at most 2 × 2¹² sets per hook, and in play far fewer (groups of up to 4, a side's hidden or
    revealed units).
    """
    group = units if isinstance(units, tuple) else tuple(units)
    known = _POWERS_OF.get(hook)
    if known is None:
        known = _POWERS_OF[hook] = {}
    # One unit (most groups) is looked up by its name, whose hash the str keeps: a tuple's
    # is worked out again at every lookup, and two equal tuples compared item by item.
    key: str | tuple[str, ...] = group[0] if len(group) == 1 else group
    found = known.get(key)
    if found is None:
        found = known[key] = tuple(
            POWERS[u]
            for u in sorted(group, key=ORDER.__getitem__)
            if u in POWERS and (hook is None or _overrides(POWERS[u], hook))
        )
    return found


_POWERS_OF: Final[dict[str | None, dict[str | tuple[str, ...], tuple[Power, ...]]]] = {}


def _overrides(power: Power, hook: str) -> bool:
    """Whether ``power`` changes the rules at ``hook`` (the name of a ``Power`` method)."""
    return getattr(type(power), hook) is not getattr(Power, hook)
