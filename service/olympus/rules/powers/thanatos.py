"""Thanatos: eliminated in combat, he takes every other unit in his region with him (R8)."""

from __future__ import annotations

from ..combat import COMBAT_CAUSES, eliminate
from ..decision import Decision
from . import register
from .base import Power


class Thanatos(Power):
    unit = "Thanatos"

    def on_eliminated(self, d: Decision, region: int, cause: str) -> None:
        if cause in COMBAT_CAUSES:
            others = d.state.units_in(region)
            if others:
                eliminate(d, others, "thanatos")


register(Thanatos)
