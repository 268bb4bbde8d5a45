"""Our board (board.md): regions, levels, realms, adjacency and the Styx.

The data lives in ``olympus/data/board.json`` (a copy of the shared spec, checked by a test) and is
loaded once into immutable lookup tables, because every move and retreat asks these questions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from importlib import resources
from typing import Final


class Realm(StrEnum):
    UNDERWORLD = "underworld"
    EXTERIOR = "exterior"
    OLYMPUS = "olympus"


TARTARUS: Final = 0
PALACE: Final = 35


@dataclass(frozen=True, slots=True)
class Region:
    id: int
    column: int | None
    level: int
    realm: Realm
    neighbours: frozenset[int]
    on_styx: bool


@dataclass(frozen=True, slots=True)
class Board:
    regions: tuple[Region, ...]
    styx_edges: frozenset[frozenset[int]]
    bridge: int
    # crossings[a][b]: whether going from a to b crosses the Styx, the answer of
    # ``crosses_styx`` worked out once by ``load_board``: every candidate move asks it.
    crossings: tuple[tuple[bool, ...], ...]
    # adjacency[a][b]: whether b is next to a, a row per region (a group's moves read their
    # origin's row: ``Movers``)
    adjacency: tuple[tuple[bool, ...], ...]

    def level(self, region: int) -> int:
        return self.regions[region].level

    def realm(self, region: int) -> Realm:
        return self.regions[region].realm

    def neighbours(self, region: int) -> frozenset[int]:
        return self.regions[region].neighbours

    def crosses_styx(self, a: int, b: int) -> bool:
        """True when going from ``a`` to ``b`` crosses the river (R5), adjacent or not (flights)."""
        return self.crossings[a][b]

    def on_styx(self, region: int) -> bool:
        return self.regions[region].on_styx

    def realm_regions(self, realm: Realm) -> tuple[int, ...]:
        return tuple(r.id for r in self.regions if r.realm == realm)


def load_board() -> Board:
    raw = json.loads(resources.files("olympus.data").joinpath("board.json").read_text())
    edges = frozenset(frozenset(e) for e in raw["styx_edges"])
    on_styx = {r for e in edges for r in e}
    regions = tuple(
        Region(
            id=r["id"],
            column=r["column"],
            level=r["level"],
            realm=Realm(r["realm"]),
            neighbours=frozenset(r["neighbours"]),
            on_styx=r["id"] in on_styx,
        )
        for r in sorted(raw["regions"], key=lambda r: r["id"])
    )
    crossings = tuple(tuple(_crosses(a, b, edges) for b in regions) for a in regions)
    adjacency = tuple(tuple(b.id in a.neighbours for b in regions) for a in regions)
    return Board(
        regions=regions,
        styx_edges=edges,
        bridge=raw["bridge"],
        crossings=crossings,
        adjacency=adjacency,
    )


def _crosses(a: Region, b: Region, edges: frozenset[frozenset[int]]) -> bool:
    """Going from ``a`` to ``b`` crosses the river (R5): from one side to the other, along a
    Styx edge or not along an edge at all (a flight)."""
    underworld = Realm.UNDERWORLD
    return (a.realm == underworld) != (b.realm == underworld) and (
        frozenset((a.id, b.id)) in edges or b.id not in a.neighbours
    )


BOARD: Final = load_board()
