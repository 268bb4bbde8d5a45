"""Cronus: meeting Zeus, whoever attacked, eliminates Zeus before any round (R8)."""

from __future__ import annotations

from .. import events as ev
from ..combat import eliminate
from ..decision import Decision
from . import register
from .base import MoveContext, Power


class Cronus(Power):
    unit = "Cronus"

    def on_meeting(self, d: Decision, region: int, move: MoveContext) -> None:
        if d.state.positions.get("Zeus") != region:
            return
        if self.unit not in d.state.revealed:
            d.emit(ev.UnitsRevealed(units=(self.unit,)))
        eliminate(d, ["Zeus"], "cronus")


register(Cronus)
