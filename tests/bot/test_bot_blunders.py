"""Hard does not throw its games away: positions where a person sees the right move at once.

Each position is a combat or a choice on the board put directly (``olympus.scenario.build``);
hard (its iterations, no time cap) decides from its seat's view on several seeds, and every
decision must keep clear of the blunder: a lone leader that can retreat retreats or wins; a
leader is not removed while another unit can be; no All-out Defense, and no Energy that costs
Honor, while attacking with a won Standard; no Chase against an attacker that cannot retreat;
the setup keeps both Chthonian leaders.
"""

from __future__ import annotations

from typing import Any

import pytest

from olympus.arena import legal_message
from olympus.bot import SeatBot
from olympus.rules import Faction, GameState
from olympus.rules.combat import energy_limit, strengths
from olympus.rules.observation import view
from olympus.rules.state import Maneuver
from olympus.scenario import build

OLY, CHT = Faction.OLYMPIANS, Faction.CHTHONIANS
SEEDS = range(4)


def position(**given: Any) -> GameState:
    state, _ = build(given, "position")
    return state


def decisions(state: GameState, seat: Faction) -> list[dict[str, Any]]:
    """Hard's command in ``state`` on each of ``SEEDS``, from the seat's view only."""
    message = legal_message(state, seat)
    assert message is not None
    made = []
    for seed in SEEDS:
        bot = SeatBot(seat, "hard", seed)
        bot = SeatBot(seat, bot.level.untimed(), seed)
        bot.start(view(state, seat))
        made.append(bot.act(message))
    return made


def wins_outright(state: GameState, seat: Faction, commitment: dict[str, Any]) -> bool:
    """The commitment beats the enemy's Standard with all the Energy it may add (R8), and its
    units live through the round (an All-out Attack kills its own)."""
    if commitment["maneuver"] == "all_out_attack":
        return False
    power = strengths(state)
    enemy = seat.enemy
    theirs = power[enemy].power(Maneuver.STANDARD, energy_limit(state, enemy))
    mine = power[seat].power(Maneuver(commitment["maneuver"]), commitment["energy"])
    attacking = state.combat is not None and state.combat.attacker is seat
    return mine > theirs or (attacking and mine == theirs)


@pytest.mark.parametrize(
    "given",
    [
        pytest.param(  # Persephone alone against Poseidon, Hades far away
            {
                "units": {"Persephone": 18, "Poseidon": 18, "Zeus": 35, "Artemis": 24, "Hades": 1},
                "energy": {"chthonians": 2, "olympians": 18},
                "combat": {"region": 18, "attacker": "olympians", "origin": 19},
            },
            id="Persephone",
        ),
        pytest.param(  # Persephone gone: Hades alone against Poseidon, 6 Energy: a Retreat
            # with it beats a Chase; All-out Defense with it wins the round (for 3 Honor)
            {
                "units": {"Hades": 18, "Poseidon": 18, "Zeus": 35, "Artemis": 24, "Cronus": 2},
                "eliminated": ["Persephone"],
                "energy": {"chthonians": 6, "olympians": 18},
                "combat": {"region": 18, "attacker": "olympians", "origin": 19},
            },
            id="Hades",
        ),
    ],
)
def test_a_lone_leader_that_can_retreat_retreats_or_wins(given: dict[str, Any]) -> None:
    state = position(**given)
    for command in decisions(state, CHT):
        assert command["maneuver"] == "retreat" or wins_outright(state, CHT, command), command


@pytest.mark.parametrize(
    ("given", "seat", "kept"),
    [
        pytest.param(
            {
                "units": {"Persephone": 18, "Cerberus": 18, "Poseidon": 18, "Zeus": 35, "Hades": 3},
                "energy": {"chthonians": 6, "olympians": 10},
                "combat": {"region": 18, "attacker": "chthonians", "origin": 17},
                "pending": ["remove:chthonians"],
            },
            CHT,
            "Persephone",
            id="Persephone-or-Cerberus",
        ),
        pytest.param(
            {
                "units": {"Zeus": 18, "Poseidon": 18, "Cronus": 1, "Cerberus": 18, "Hades": 3},
                "energy": {"chthonians": 0, "olympians": 10},
                "combat": {"region": 18, "attacker": "chthonians", "origin": 17},
                "pending": ["remove:olympians"],
            },
            OLY,
            "Zeus",
            id="Zeus-or-Poseidon",
        ),
    ],
)
def test_a_leader_is_not_removed_while_another_unit_can_be(
    given: dict[str, Any], seat: Faction, kept: str
) -> None:
    for command in decisions(position(**given), seat):
        assert command["unit"] != kept


def test_no_all_out_defense_nor_honor_spent_attacking_with_a_won_standard() -> None:
    """Cronus (6) attacked Artemis (3); the Olympians have no Energy: Standard with 0 wins."""
    state = position(
        units={"Cronus": 18, "Artemis": 18, "Hades": 1, "Persephone": 3, "Zeus": 35},
        energy={"chthonians": 6, "olympians": 0},
        combat={"region": 18, "attacker": "chthonians", "origin": 17},
    )
    for command in decisions(state, CHT):
        assert command["maneuver"] not in ("all_out_defense", "all_out_attack", "retreat")
        assert command["energy"] <= 4, command  # more costs 1 Honor (R8)
        assert wins_outright(state, CHT, command), command


def test_no_energy_above_need_where_it_costs_honor() -> None:
    """Poseidon (5) attacked the lone Harpies (2) of a side without Energy: he wins with none."""
    state = position(
        units={"Poseidon": 18, "Harpies": 18, "Hades": 1, "Persephone": 3, "Zeus": 35},
        energy={"chthonians": 0, "olympians": 24},
        combat={"region": 18, "attacker": "olympians", "origin": 19},
    )
    for command in decisions(state, OLY):
        assert command["energy"] <= 4, command
        assert command["maneuver"] not in ("all_out_defense", "all_out_attack"), command


def test_no_chase_against_an_attacker_that_cannot_retreat() -> None:
    """The Erinyes alone may not Retreat (R8): a Chase only weakens Zeus, who defends."""
    state = position(
        units={"Zeus": 18, "Erinyes": 18, "Hades": 1, "Persephone": 3, "Artemis": 35},
        energy={"chthonians": 4, "olympians": 20},
        combat={"region": 18, "attacker": "chthonians", "origin": 17},
    )
    for command in decisions(state, OLY):
        assert command["maneuver"] != "chase", command


def test_the_setup_keeps_both_chthonian_leaders() -> None:
    for seed in range(40):
        bot = SeatBot(CHT, "hard", seed)
        placements = bot.act({"actions": [], "setup": {"count": 9}})["placements"]
        assert {"Hades", "Persephone"} <= set(placements)
        assert len(placements) == 9


def test_a_side_without_energy_calls_a_liturgy_when_nothing_presses() -> None:
    """The Chthonians at 0 Energy, no enemy next to them: a Liturgy costs 1 Honor (R3) and
    gives the 6 Energy without which every fight is lost."""
    state = position(
        units={
            **{"Hades": 7, "Persephone": 1, "Cronus": 8, "Nyx": 15},
            **{"Zeus": 35, "Poseidon": 20, "Artemis": 27, "Hera": 13},
        },
        energy={"chthonians": 0, "olympians": 18},
        revealed=["Poseidon"],
    )
    made = decisions(state, CHT)
    # The moves around it are close in value: one seed of four may prefer one of them.
    assert sum(c["type"] == "liturgy" for c in made) >= len(made) - 1, made


def test_a_lone_last_leader_does_not_walk_next_to_a_stronger_enemy() -> None:
    """Hades, the last leader, with 2 Energy; Poseidon (revealed) stands in 17 with the
    Olympians' 18 Energy behind him: 9 and 16 are next to him, 2 is not."""
    state = position(
        units={
            **{"Hades": 8, "Cronus": 1, "Nyx": 23},
            **{"Zeus": 35, "Poseidon": 17, "Artemis": 27, "Hera": 13},
        },
        eliminated=["Persephone"],
        energy={"chthonians": 2, "olympians": 18},
        revealed=["Poseidon", "Hades"],
    )
    for command in decisions(state, CHT):
        if command["type"] == "move" and "Hades" in command["units"]:
            assert command["to"] not in (9, 16, 17), command
