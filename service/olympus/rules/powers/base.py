"""The hook points where a character's power changes the rules.

Each character with a power has one module in this package with one ``Power`` subclass that
overrides only the hooks it needs; every hook's default leaves the rules as the rulebook's core
states them. The rules call the hooks through ``olympus.rules.powers`` (the registry), never by
checking a character's name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Final

from mypy_extensions import mypyc_attr

from ..characters import BY_NAME, Faction
from ..state import GameState, Maneuver

if TYPE_CHECKING:
    from ..decision import Decision


NOBODY: Final[frozenset[str]] = frozenset()  # no unit revealed: every action's default
NO_CHARGE: Final[tuple[int, int]] = (0, 0)  # a move's power changes no Honor, no Energy


@mypyc_attr(acyclic=True, free_list_len=1)  # (MoveContext: why)
class Action:
    """What an Honor penalty is charged for (R4, R8): Apollo and Dionysus judge by it.

    ``kind`` is one of ``move``, ``flight``, ``attack``, ``combat``, ``retreat``, ``power``.
    ``units`` are the acting side's units (the movers, or the side's units in the combat);
    ``reveal`` the units revealed by this very action.

    Like ``MoveContext``, a plain class with slots, read-only by convention: the cheapest object
    to make, and ``legal_actions`` makes one per candidate move.
    """

    __slots__ = ("faction", "kind", "reveal", "units")

    def __init__(
        self,
        faction: Faction,
        units: tuple[str, ...],
        kind: str,
        reveal: frozenset[str] = NOBODY,
    ) -> None:
        self.faction = faction
        self.units = units
        self.kind = kind
        self.reveal = reveal

    def alone(self, unit: str) -> bool:
        return _only(self.units, unit)


@mypyc_attr(acyclic=True, free_list_len=1)
class MoveContext:
    """A move being judged: who goes where, how, and who is revealed for it (read-only).

    Made and freed once per candidate move (``legal_actions``): compiled, outside the cyclic
    collector (it holds immutable values only) and from a free list of one, each candidate's
    freed before the next one's is made (docs/performance.md)."""

    __slots__ = ("destination", "faction", "flight", "origin", "reveal", "units", "use_power")

    def __init__(
        self,
        faction: Faction,
        units: tuple[str, ...],
        origin: int,
        destination: int,
        flight: bool,
        reveal: frozenset[str],
        use_power: bool = False,  # the mover's optional power: Demeter's drain, the sneak attack
    ) -> None:
        self.faction = faction
        self.units = units
        self.origin = origin
        self.destination = destination
        self.flight = flight
        self.reveal = reveal
        self.use_power = use_power

    def alone(self, unit: str) -> bool:
        """Whether ``unit`` makes this move alone (asked of every candidate move the powers
        judge)."""
        return _only(self.units, unit)


def _only(units: tuple[str, ...], unit: str) -> bool:
    """``units == (unit,)``, without making the tuple."""
    return len(units) == 1 and units[0] == unit


def alone(state: GameState, unit: str) -> bool:
    """Whether ``unit`` is on the board with no comrade in its region ("fighting alone")."""
    region = state.positions.get(unit)
    return region is not None and state.count_in(region, BY_NAME[unit].faction) == 1


class Power:
    """A character's power. ``unit`` is the character's name; its module sets it. (An
    attribute of the instance, each character having one, ``register``: compiled, read at an
    offset, where a class attribute is looked up by name.)"""

    unit: str = ""
    # Nominal-strength adjustments apply in this order (Hypnos before Aphrodite, R8).
    nominal_priority: ClassVar[int] = 0

    # --- revealing and moving -----------------------------------------------------------------
    def may_reveal_for_move(self, state: GameState, move: MoveContext) -> bool:
        """Whether this unit may be revealed as part of ``move`` to use its power (R3)."""
        return False

    def uses_power_on_move(self, state: GameState, move: MoveContext) -> bool:
        """Whether ``move.use_power`` asks this mover for an optional power it can use here."""
        return False

    def flies(self, state: GameState, move: MoveContext) -> bool:
        """Whether this unit may make ``move`` as a flight (any region, R5 free)."""
        return False

    def styx_free(self, state: GameState, move: MoveContext) -> bool:
        """Whether this unit, anywhere on the board, makes ``move``'s Styx crossing free (R5)."""
        return False

    def after_move(self, d: Decision, move: MoveContext) -> None:
        """Effects of a completed move made by this unit (Poseidon, Demeter)."""

    def move_charges(self, state: GameState, move: MoveContext) -> tuple[int, int]:
        """What this mover's power changes at once in its own side's (Honor, Energy) when
        ``move`` is made in ``state``, as deltas (negative: a loss): the sneak attack's price,
        Demeter's drain, Poseidon's crossing. The power charges exactly these figures, and
        ``legal_actions`` adds them to the move's own costs (R4, R5), so that what a move is
        listed at is what it costs. Made of what the mover's side knows (R7)."""
        return NO_CHARGE

    def takes_extra_steps(self, state: GameState, move: MoveContext) -> bool:
        """Whether this unit, having made ``move`` alone, may take further steps (Hermes)."""
        return False

    # --- Honor ------------------------------------------------------------------------------
    def honor_penalty(self, state: GameState, action: Action, reason: str, penalty: int) -> int:
        """Adjust a penalty (a positive number of Honor points) charged to ``action``."""
        return penalty

    # --- combat: strength ---------------------------------------------------------------------
    def adjust_nominal(
        self, state: GameState, region: int, nominal: dict[str, int]
    ) -> dict[str, int]:
        """Change the nominal strengths of the units in the combat (Hypnos, Aphrodite)."""
        return nominal

    def strength_bonus(self, state: GameState, region: int, faction: Faction) -> int:
        """Bonus to ``faction``'s base strength while this unit is in the combat."""
        return 0

    def adjacent_bonus(self, state: GameState, region: int, faction: Faction) -> int:
        """Bonus while this unit stands, revealed, next to the combat region (Aphrodite)."""
        return 0

    def energy_factor(self, state: GameState, region: int, faction: Faction) -> int:
        """Multiplier of ``faction``'s committed Energy in the effective power (Ares)."""
        return 1

    def chase_modifier(self, state: GameState, region: int, faction: Faction) -> int | None:
        """Replacement for the −3 of a Chase by ``faction`` (Artemis), or None."""
        return None

    # --- combat: commitments --------------------------------------------------------------------
    def energy_limit(self, state: GameState, region: int, faction: Faction, limit: int) -> int:
        """Adjust ``faction``'s Energy limit for a round (Moirae, Nyx)."""
        return limit

    def allowed_maneuvers(
        self, state: GameState, region: int, faction: Faction, allowed: frozenset[Maneuver]
    ) -> frozenset[Maneuver]:
        """Restrict ``faction``'s maneuvers (Cerberus, Erinyes)."""
        return allowed

    def may_reveal_in_commit(self, state: GameState, faction: Faction) -> bool:
        """Whether this unit, outside the combat, may be revealed with a commitment (Aphrodite)."""
        return False

    def sees_opponent_commitment(self, state: GameState, region: int) -> bool:
        """Whether this unit's side sees the opponent's commitment before its own (Athena)."""
        return False

    def round_resolved(self, d: Decision, olympian_energy: int) -> None:
        """Effects at the reveal of a round this unit fights in (Hecate)."""

    # --- combat: retreats ---------------------------------------------------------------------
    def retreats_any_direction(self, state: GameState, units: list[str]) -> bool:
        """Whether ``units`` (this unit among them) may retreat to any adjacent region (R9)."""
        return False

    def retreats_across_styx(self, state: GameState, units: list[str]) -> bool:
        return False

    def retreat_unstoppable(self, state: GameState, units: list[str]) -> bool:
        """Whether a Retreat of ``units`` succeeds even against a Chase (Persephone)."""
        return False

    def stops_unstoppable_retreat(self, state: GameState) -> bool:
        """Whether this unit's Chase stops even an unstoppable retreat (Hermes)."""
        return False

    # --- meetings and eliminations ------------------------------------------------------------
    def on_meeting(self, d: Decision, region: int, move: MoveContext) -> None:
        """Effects when ``move`` brings enemies together in ``region`` with this unit there,
        before the game-end check and the first round (Cronus, Demeter, the sneak attack)."""

    def cancels_sneak_attack(self, state: GameState) -> bool:
        """Whether this unit, in the targeted region, cancels a sneak attack (Hephaestus)."""
        return False

    def on_thunderbolt(self, d: Decision, region: int) -> None:
        """Effects of a thunderbolt on this unit's region (Hecate)."""

    def thunderbolt_immune(self, state: GameState, region: int) -> bool:
        """Whether this unit cannot be the thunderbolt's victim (Cerberus, R10)."""
        return False

    def on_eliminated(self, d: Decision, region: int, cause: str) -> None:
        """Effects of this unit's elimination from ``region`` (Thanatos, succession)."""
