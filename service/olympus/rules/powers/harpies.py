"""The Harpies: they fly, with no disadvantage."""

from __future__ import annotations

from . import register
from .flight import Flier


class Harpies(Flier):
    unit = "Harpies"


register(Harpies)
