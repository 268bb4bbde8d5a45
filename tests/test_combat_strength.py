"""A combat round explained term by term (R8): the breakdown the rules attach to
``combat_round_resolved`` and send in ``legal`` during the commitments is the very sum that
decides the round, and it names only revealed units, so every audience may see it (R7)."""

from __future__ import annotations

import random
from typing import Any

from olympus.bots import play_random_game
from olympus.rules import Faction, GameState, Options, evolve, execute, strength_terms
from olympus.rules import events as ev
from olympus.rules.commands import parse_command
from olympus.rules.state import Maneuver
from olympus.scenario import build


def _commit(state: GameState, side: str, maneuver: str, energy: int) -> tuple[list, GameState]:
    command = {"type": "commit", "side": side, "maneuver": maneuver, "energy": energy}
    return execute(state, parse_command(command))


def _resolved(events: list[ev.Event]) -> ev.CombatRoundResolved:
    return next(e for e in events if isinstance(e, ev.CombatRoundResolved))


def test_ares_alone_doubles_his_energy_term_by_term() -> None:
    state, _ = build(
        {
            "units": {"Ares": 18, "Cronus": 18, "Zeus": 35, "Hades": 1},
            "combat": {"region": 18, "attacker": "chthonians", "origin": 17},
        },
        "ares",
    )
    terms = strength_terms(state)
    assert terms is not None
    assert terms["olympians"]["energy_factor"] == 2
    assert terms["olympians"]["factor_powers"] == ["Ares"]
    _, state = _commit(state, "chthonians", "standard", 0)
    events, _ = _commit(state, "olympians", "standard", 2)
    e = _resolved(events)
    ares = e.breakdown["olympians"]
    assert ares == {
        "units": [{"unit": "Ares", "strength": 3}],
        "adjustments": [],
        "bonuses": [],
        "base": 3,
        "energy_factor": 2,
        "factor_powers": ["Ares"],
        "chase": -3,
        "chase_power": None,
        "maneuver": "standard",
        "energy": 2,
        "power": 7,
    }
    assert e.olympian_power == 7 and e.chthonian_power == 6
    assert e.breakdown["chthonians"]["units"] == [{"unit": "Cronus", "strength": 6}]


def test_hypnos_hephaestus_and_a_chase_are_named() -> None:
    state, _ = build(
        {
            "units": {
                "Hypnos": 18,
                "Cronus": 18,
                "Hephaestus": 18,
                "Poseidon": 18,
                "Zeus": 35,
                "Hades": 1,
            },
            "combat": {"region": 18, "attacker": "chthonians", "origin": 17},
        },
        "hypnos",
    )
    _, state = _commit(state, "chthonians", "chase", 1)
    events, _ = _commit(state, "olympians", "all_out_defense", 0)
    e = _resolved(events)
    chthonians, olympians = e.breakdown["chthonians"], e.breakdown["olympians"]
    # Hypnos: every other unit in his combat counts 0 (his own side's too)
    assert {(a["power"], a["unit"], a["delta"]) for a in chthonians["adjustments"]} == {
        ("Hypnos", "Cronus", -6)
    }
    assert {(a["power"], a["unit"], a["delta"]) for a in olympians["adjustments"]} == {
        ("Hypnos", "Hephaestus", -3),
        ("Hypnos", "Poseidon", -5),
    }
    assert olympians["bonuses"] == [{"power": "Hephaestus", "value": 5, "adjacent": False}]
    assert olympians["base"] == 5 and olympians["power"] == 10 == e.olympian_power  # all-out ×2
    assert chthonians["base"] == 2 and chthonians["power"] == 0 == e.chthonian_power  # 2+1−3


def _names(side: dict[str, Any]) -> set[str]:
    return (
        {u["unit"] for u in side["units"]}
        | {a["unit"] for a in side["adjustments"]}
        | {a["power"] for a in side["adjustments"]}
        | {b["power"] for b in side["bonuses"]}
        | set(side["factor_powers"])
        | ({side["chase_power"]} if side["chase_power"] else set())
    )


def test_breakdowns_add_up_and_name_only_revealed_units_in_random_games() -> None:
    """In random games of every variant: each breakdown's power is the round's power, and every
    unit it names is revealed at that moment (the event goes to every audience unredacted).
    The commitment form's rows (``powers``: maneuver → power with 0, 1, … Energy), listed in
    the rulebook's order of the maneuvers, hold the power the round then resolves with (R8)."""
    rounds = 0
    rng = random.Random(14)
    order = [m.value for m in Maneuver]
    for game in range(60):
        options = Options(open_combat=game % 2 == 1, random_setup=game % 3 == 0)
        listed: dict[str, Any] = {}  # the terms of the round's commitments

        def observe(state: GameState, action: object, new: list, after: GameState) -> None:
            nonlocal rounds, listed
            if (terms := strength_terms(state)) is not None:
                listed = terms
                for side in terms.values():
                    assert _names(side) <= state.revealed
                    assert list(side["powers"]) == [m for m in order if m in side["powers"]]
            for event in new:
                if isinstance(event, ev.CombatRoundResolved):
                    rounds += 1
                    assert event.breakdown is not None
                    for faction in Faction:
                        side = event.breakdown[faction.value]
                        power = (
                            event.olympian_power
                            if faction is Faction.OLYMPIANS
                            else event.chthonian_power
                        )
                        assert side["power"] == power
                        assert _names(side) <= state.revealed, (side, state.revealed)
                        row = listed[faction.value]["powers"][side["maneuver"]]
                        assert row[side["energy"]] == power  # R8: as the form said
                state = evolve(state, event)

        play_random_game(rng, options, max_commands=400, observe=observe)
    assert rounds > 30  # the test saw combats
