"""The 24 characters and their printed values (R1).

The order of ``CHARACTERS`` is the order of the R1 table; it breaks ties when a deadline forces
the choice of the weakest unit (R8) and fixes the order in which units are listed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import Final

from .board import PALACE, TARTARUS, Realm


class Faction(StrEnum):
    """The two sides (R1): the Olympians and the Chthonians."""

    OLYMPIANS = "olympians"
    CHTHONIANS = "chthonians"

    @cached_property  # kept on the member after the first use: every candidate move asks it
    def enemy(self) -> Faction:
        return Faction.CHTHONIANS if self is Faction.OLYMPIANS else Faction.OLYMPIANS

    @property
    def base(self) -> int:
        """The faction's home base: the Palace for the Olympians, Tartarus for the Chthonians."""
        return PALACE if self is Faction.OLYMPIANS else TARTARUS

    @property
    def realm(self) -> Realm:
        return Realm.OLYMPUS if self is Faction.OLYMPIANS else Realm.UNDERWORLD

    @property
    def forward(self) -> int:
        """+1 when forward means a higher level (Chthonians), -1 when lower (Olympians)."""
        return 1 if self is Faction.CHTHONIANS else -1


@dataclass(frozen=True, slots=True)
class Character:
    """A character as R1 lists it: nominal strength, male (what Aphrodite affects), flier,
    leader."""

    name: str
    faction: Faction
    strength: int
    male: bool = False
    flier: bool = False
    leader: bool = False


_O, _C = Faction.OLYMPIANS, Faction.CHTHONIANS

CHARACTERS: Final[tuple[Character, ...]] = (
    Character("Zeus", _O, 5, male=True, leader=True),
    Character("Hera", _O, 2),
    Character("Athena", _O, 3),
    Character("Aphrodite", _O, 1),
    Character("Dionysus", _O, 3, male=True),
    Character("Apollo", _O, 3, male=True, flier=True),
    Character("Hermes", _O, 3, male=True),
    Character("Ares", _O, 3, male=True),
    Character("Poseidon", _O, 5, male=True),
    Character("Artemis", _O, 3),
    Character("Hephaestus", _O, 3, male=True),
    Character("Demeter", _O, 2),
    Character("Hades", _C, 5, male=True, leader=True),
    Character("Persephone", _C, 2),
    Character("Cerberus", _C, 5),
    Character("Cronus", _C, 6, male=True),
    Character("Hecate", _C, 2),
    Character("Hypnos", _C, 2, male=True),
    Character("Erinyes", _C, 3),
    Character("Moirae", _C, 2),
    Character("Harpies", _C, 2, flier=True),
    Character("Thanatos", _C, 4, male=True),
    Character("Charon", _C, 2, male=True),
    Character("Nyx", _C, 3),
)

# Both sides, in the enum's order. Loops go over this tuple, not over ``Faction``: iterating an
# Enum class runs enum's own Python every time. (Typed of any length: compiled, a fixed-length
# tuple type would be boxed anew at every use.)
FACTIONS: Final[tuple[Faction, ...]] = (Faction.OLYMPIANS, Faction.CHTHONIANS)
BY_NAME: Final[dict[str, Character]] = {c.name: c for c in CHARACTERS}
ORDER: Final[dict[str, int]] = {c.name: i for i, c in enumerate(CHARACTERS)}
ROSTER: Final[dict[Faction, tuple[str, ...]]] = {
    f: tuple(c.name for c in CHARACTERS if c.faction is f) for f in FACTIONS
}
LEADER: Final[dict[Faction, str]] = {Faction.OLYMPIANS: "Zeus", Faction.CHTHONIANS: "Hades"}
PICKED_PER_SIDE: Final = 9
