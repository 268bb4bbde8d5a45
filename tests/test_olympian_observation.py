"""What each seat sees of the Olympian powers (R7, R8), through ``olympus.rules.observation``.

Athena sees the opponent's round-1 commitment (and nobody sees hers); with Open Combat the order
of commitments is the variant's, reversed in round 1 when she attacks. A partial group move hides
the units again under re-drawn tokens; eliminated units are shown to both seats; Hera's
succession must not tell the Chthonians that she was picked. The rule scenarios in
tests/scenarios/powers/ check the same powers through the rules alone.
"""

from __future__ import annotations

from typing import Any

from olympus.rules import GameState, evolve, execute, parse_command
from olympus.rules import events as ev
from olympus.rules.characters import Faction
from olympus.rules.combat import first_to_commit, sees_commitment
from olympus.rules.observation import observe_event, view
from olympus.scenario import build

OLY, CHT = Faction.OLYMPIANS, Faction.CHTHONIANS

# Hades 5 attacked Athena 3 in 18 from 17
ATHENA_DEFENDS = {
    "units": {"Hades": 18, "Athena": 18, "Persephone": 1, "Zeus": 35},
    "combat": {"region": 18, "attacker": "chthonians", "origin": 17},
}
# Athena and Ares attacked Cronus and the Harpies in 18 from 19
ATHENA_ATTACKS = {
    "units": {"Athena": 18, "Ares": 18, "Cronus": 18, "Harpies": 18, "Hades": 1, "Zeus": 35},
    "combat": {"region": 18, "attacker": "olympians", "origin": 19},
}


def position(given: dict[str, Any]) -> GameState:
    state, log = build(given, "test")
    for event in log:
        state = evolve(state, event)
    return state


def play(
    state: GameState, side: Faction, command: dict[str, Any]
) -> tuple[GameState, list[tuple[ev.Event, GameState, GameState]]]:
    """The state after ``command`` and each event with the states around it."""
    events, after = execute(state, parse_command({**command, "side": side.value}))
    steps = []
    for event in events:
        following = evolve(state, event)
        steps.append((event, state, following))
        state = following
    assert state == after
    return after, steps


def seen(steps: list[tuple[ev.Event, GameState, GameState]], seat: Faction | None) -> list[Any]:
    """What ``seat`` receives of these events."""
    return [
        o for e, before, after in steps if (o := observe_event(e, seat, before, after)) is not None
    ]


def commit(maneuver: str, energy: int) -> dict[str, Any]:
    return {"type": "commit", "maneuver": maneuver, "energy": energy}


def shown(state: GameState, seat: Faction | None, side: Faction) -> Any:
    return view(state, seat)["combat"]["commitments"][side.value]


# --- Athena -----------------------------------------------------------------------------------


def test_athena_sees_the_chthonian_round_one_commitment() -> None:
    state, steps = play(position(ATHENA_DEFENDS), CHT, commit("all_out_attack", 4))
    assert sees_commitment(state, OLY)
    assert shown(state, OLY, CHT) == {"maneuver": "all_out_attack", "energy": 4}
    [(event, before, after)] = [s for s in steps if isinstance(s[0], ev.CombatCommitted)]
    seen_by_olympians = observe_event(event, OLY, before, after)
    assert seen_by_olympians is not None
    assert (seen_by_olympians["maneuver"], seen_by_olympians["energy"]) == ("all_out_attack", 4)


def test_nobody_else_sees_the_sealed_commitments_with_athena() -> None:
    state, steps = play(position(ATHENA_DEFENDS), CHT, commit("standard", 3))
    assert shown(state, None, CHT) is None  # spectators see no sealed choice (R7)
    assert "maneuver" not in seen(steps, None)[0]
    state, steps = play(position(ATHENA_DEFENDS), OLY, commit("standard", 5))
    assert not sees_commitment(state, CHT)
    assert shown(state, CHT, OLY) is None
    assert all("maneuver" not in o and "energy" not in o for o in seen(steps, CHT))


def test_athena_attacking_sees_the_defender_commitment() -> None:
    state, _ = play(position(ATHENA_ATTACKS), CHT, commit("retreat", 2))
    assert shown(state, OLY, CHT) == {"maneuver": "retreat", "energy": 2}


def test_athena_sees_nothing_from_round_two_on() -> None:
    given = {**ATHENA_ATTACKS, "combat": {**ATHENA_ATTACKS["combat"], "round": 2}}
    state, steps = play(position(given), CHT, commit("standard", 2))
    assert not sees_commitment(state, OLY)
    assert shown(state, OLY, CHT) is None
    assert all("maneuver" not in o for o in seen(steps, OLY))


def test_athena_next_to_the_combat_sees_nothing() -> None:
    given = {
        "units": {"Hades": 18, "Ares": 18, "Athena": 19, "Persephone": 1, "Zeus": 35},
        "combat": {"region": 18, "attacker": "chthonians", "origin": 17},
    }
    state, _ = play(position(given), CHT, commit("standard", 2))
    assert shown(state, OLY, CHT) is None


def test_athena_in_open_combat_reverses_round_one_when_she_attacks() -> None:
    open_combat = {"options": {"open_combat": True}}
    attacking = position({**ATHENA_ATTACKS, **open_combat})
    assert first_to_commit(attacking) is CHT  # the defender commits first, Athena sees it
    state, _ = play(attacking, CHT, commit("standard", 1))
    assert shown(state, OLY, CHT) == {"maneuver": "standard", "energy": 1}
    defending = position({**ATHENA_DEFENDS, **open_combat})
    assert first_to_commit(defending) is CHT  # the attacker, as in every Open Combat round 1
    round_two = {**ATHENA_ATTACKS, **open_combat}
    round_two["combat"] = {**ATHENA_ATTACKS["combat"], "round": 2}
    assert first_to_commit(position(round_two)) is CHT  # the defender, from round 2 on
    round_two["combat"] = {**ATHENA_DEFENDS["combat"], "round": 2}
    round_two["units"] = ATHENA_DEFENDS["units"]
    assert first_to_commit(position(round_two)) is OLY


# --- R7: hiding again, tokens, eliminated units --------------------------------------------------


def test_a_partial_group_move_hides_the_units_under_new_tokens() -> None:
    given = {
        "units": {"Apollo": 19, "Ares": 19, "Hades": 1, "Zeus": 35},
        "revealed": ["Apollo", "Ares"],
        "turn": "olympians",
    }
    start = position(given)
    assert {u["name"] for u in view(start, CHT)["units"] if u["side"] == "olympians"} == {
        "Apollo",
        "Ares",
        None,
    }
    state, steps = play(start, OLY, {"type": "move", "units": ["Ares"], "to": 18})
    hidden = [e for e, _, _ in steps if isinstance(e, ev.UnitsHidden)]
    assert len(hidden) == 1 and set(hidden[0].units) == {"Apollo", "Ares"}
    assert not {"Apollo", "Ares"} & state.revealed
    old = {start.tokens["Apollo"], start.tokens["Ares"]}
    new = {state.tokens["Apollo"], state.tokens["Ares"]}
    assert not old & new  # re-drawn, never reused
    names = {u["token"]: u["name"] for u in view(state, CHT)["units"] if u["side"] == "olympians"}
    assert names[state.tokens["Apollo"]] is None and names[state.tokens["Ares"]] is None
    [hidden_seen] = [o for o in seen(steps, CHT) if o["t"] == "units_hidden"]
    assert "tokens" not in hidden_seen
    assert all(u["name"] is None for u in hidden_seen["units"])


def test_eliminated_olympians_are_shown_to_the_chthonians() -> None:
    given = {
        "units": {"Hades": 18, "Hermes": 18, "Apollo": 20, "Persephone": 1, "Zeus": 35},
        "combat": {"region": 18, "attacker": "chthonians", "origin": 17},
    }
    state, _ = play(position(given), CHT, commit("standard", 0))
    state, steps = play(state, OLY, commit("standard", 0))
    assert "Hermes" in view(state, CHT)["eliminated"]
    assert "Hermes" in view(state, None)["eliminated"]
    [gone] = [o for o in seen(steps, CHT) if o["t"] == "unit_eliminated"]
    assert gone["unit"] == "Hermes" and gone["token"] is not None
    assert not any(u["name"] == "Apollo" for u in view(state, CHT)["units"])


def test_hera_succeeding_does_not_tell_the_chthonians_she_was_picked() -> None:
    """R7: a player never learns which characters the opponent left out, except by elimination
    or at the end. Zeus falls while a hidden unit stands in the Palace: the Chthonians must
    receive the same whether it is Hera (who now leads) or Athena (Hera not picked)."""

    def chthonian_view_of_zeus_falling(in_palace: str) -> list[Any]:
        given = {
            "units": {"Zeus": 18, "Hades": 18, in_palace: 35, "Persephone": 1},
            "combat": {"region": 18, "attacker": "chthonians", "origin": 17},
        }
        state, _ = play(position(given), CHT, commit("standard", 0))
        state, steps = play(state, OLY, commit("standard", 0))
        assert "Zeus" in state.eliminated
        return seen(steps, CHT)

    assert chthonian_view_of_zeus_falling("Hera") == chthonian_view_of_zeus_falling("Athena")
