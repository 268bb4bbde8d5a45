"""The registry of character powers and ``powers_of``, the question every rule asks of it.

A module of its own, not the package's ``__init__`` (which is not compiled): the rules ask
``powers_of`` for every candidate move.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from mypy_extensions import mypyc_attr

from ..characters import ORDER
from .base import Power

POWERS: Final[dict[str, Power]] = {}


def register(cls: type[Power]) -> None:
    """Each character module calls this after its class: one instance per character. (A call,
    not a class decorator: only undecorated classes compile to native classes.)"""
    power = cls()
    POWERS[power.unit] = power
    _POWERS_OF.clear()
    _GROUPS.clear()


def powers_of(units: Iterable[str], hook: str | None = None) -> tuple[Power, ...]:
    """The powers of ``units`` in a stable order (R1 order), skipping characters without one.

    With ``hook`` (the name of a ``Power`` method), only the powers that override it: the
    others leave the rules as they are there, so a hot loop need not ask them.

    Asked for every candidate move (legal_actions): the answers are remembered, one dict per
    hook, keyed by the units. They stay small: the units asked about are one side's (12
    characters), so there are at most 2 × 2¹² sets per hook, and in play far fewer.
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


@mypyc_attr(acyclic=True)  # holds only powers, which refer to nothing of it
class GroupPowers:
    """What moving a group asks of its units' powers, whatever the state: who may fly, who
    adjusts its Honor penalties, who may use a power on the move, who may take further steps.
    ``legal_actions`` forms a few dozen groups per position, each asked all of these: one
    lookup (``group_powers``) answers them."""

    __slots__ = ("flier", "honor_penalty", "takes_extra_steps", "uses_power_on_move")

    def __init__(self, units: tuple[str, ...]) -> None:
        self.flier = POWERS.get(units[0]) if len(units) == 1 else None  # a flier flies alone
        self.honor_penalty = powers_of(units, "honor_penalty")
        self.uses_power_on_move = powers_of(units, "uses_power_on_move")
        self.takes_extra_steps = powers_of(units, "takes_extra_steps")


def group_powers(units: tuple[str, ...]) -> GroupPowers:
    """The ``GroupPowers`` of ``units`` (R1-ordered), remembered as ``powers_of``'s answers
    are: a group of one by its unit's name."""
    key: str | tuple[str, ...] = units[0] if len(units) == 1 else units
    found = _GROUPS.get(key)
    if found is None:
        found = _GROUPS[key] = GroupPowers(units)
    return found


_GROUPS: Final[dict[str | tuple[str, ...], GroupPowers]] = {}
