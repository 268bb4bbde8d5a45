"""Hecate: in each round she fights in, the Energy the Olympians commit also goes to the
Chthonian stock; a thunderbolt on her region gives the Chthonians 6 Energy (R8)."""

from __future__ import annotations

from .. import events as ev
from ..characters import Faction
from ..decision import Decision
from . import register
from .base import Power

THUNDERBOLT_ENERGY = 6


class Hecate(Power):
    unit = "Hecate"

    def round_resolved(self, d: Decision, olympian_energy: int) -> None:
        if olympian_energy:
            d.emit(ev.EnergyChanged(Faction.CHTHONIANS, olympian_energy, "hecate"))

    def on_thunderbolt(self, d: Decision, region: int) -> None:
        d.emit(ev.EnergyChanged(Faction.CHTHONIANS, THUNDERBOLT_ENERGY, "hecate"))


register(Hecate)
