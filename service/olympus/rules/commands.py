"""Commands: what a seat (or the service, for system commands) asks the rules to do.

Pydantic v2 models, validated at the edge. ``side`` is filled in by the service from the seat's
token, never trusted from the client.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from .characters import Faction
from .state import Maneuver

Region = Annotated[int, Field(ge=0, le=35)]
UnitName = Annotated[str, Field(min_length=1, max_length=20)]


# The fields the service fills in, never part of what a client sends or is offered.
SERVICE_FIELDS = frozenset({"side", "at_ms"})


class _Command(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
    side: Faction | None = None
    at_ms: int | None = None  # the service's clock, set like ``side`` (R12)


class SubmitSetup(_Command):
    """R2: the 9 picked characters and their regions, sealed until both sides are in."""

    type: Literal["submit_setup"] = "submit_setup"
    placements: dict[UnitName, Region]


class DrawRandomSetup(_Command):
    """System command for the Random Setup variant: the service supplies the seed (R2)."""

    type: Literal["draw_random_setup"] = "draw_random_setup"
    seed: int = Field(ge=0, lt=2**63)


class Move(_Command):
    """Move one unit or a group from one region to another (R3); ``fly`` for a flight."""

    type: Literal["move"] = "move"
    units: list[UnitName] = Field(min_length=1, max_length=4)
    to: Region
    fly: bool = False
    reveal: list[UnitName] = Field(default_factory=list, max_length=4)
    use_power: bool = False  # optional powers of a move: Demeter's drain, sneak attack (R3)
    # Hermes' further single steps in the same turn (R3), judged and charged one by one. One
    # command, so that no pause between steps tells the opponent who is moving.
    steps: list[Region] = Field(default_factory=list, max_length=35)


class Liturgy(_Command):
    type: Literal["liturgy"] = "liturgy"


class Pass(_Command):
    type: Literal["pass"] = "pass"


class Thunderbolt(_Command):
    type: Literal["thunderbolt"] = "thunderbolt"
    region: Region


class Recall(_Command):
    type: Literal["recall"] = "recall"
    unit: UnitName


class Commit(_Command):
    """A sealed combat commitment (R8); ``reveal`` may name Aphrodite next to the combat."""

    type: Literal["commit"] = "commit"
    maneuver: Maneuver
    energy: int = Field(ge=0, le=999)
    reveal: list[UnitName] = Field(default_factory=list, max_length=1)


class RemoveUnit(_Command):
    type: Literal["remove_unit"] = "remove_unit"
    unit: UnitName


class Retreat(_Command):
    type: Literal["retreat"] = "retreat"
    region: Region


class Stay(_Command):
    type: Literal["stay"] = "stay"


class Resign(_Command):
    """The seat gives the game up (the service's addition, not the rulebook's: docs/rules.md):
    at any time before the end, whatever is awaited, its opponent wins at once."""

    type: Literal["resign"] = "resign"


class Abort(_Command):
    """The seat calls the game off before both sides have made their first move
    (``rules.resignation.may_abort``): it ends at once with no result (the service's
    addition, docs/rules.md)."""

    type: Literal["abort"] = "abort"


class Timeout(_Command):
    """System command (R12): ``side`` missed its deadline; apply the fallback."""

    type: Literal["timeout"] = "timeout"
    seed: int = Field(default=0, ge=0, lt=2**63)  # draws a missed setup (R2's Random Setup)


Command = Annotated[
    SubmitSetup
    | DrawRandomSetup
    | Move
    | Liturgy
    | Pass
    | Thunderbolt
    | Recall
    | Commit
    | RemoveUnit
    | Retreat
    | Stay
    | Resign
    | Abort
    | Timeout,
    Field(discriminator="type"),
]

COMMAND_ADAPTER: TypeAdapter[Command] = TypeAdapter(Command)


def parse_command(data: object) -> Command:
    """Validate untrusted input into a command (raises pydantic.ValidationError). Through the
    adapter's validator itself: the adapter's own method only adds Python around it."""
    command: Command = COMMAND_ADAPTER.validator.validate_python(data)
    return command
