"""The Game Variants where a scenario cannot look (R2, R8): the Challenge range at game creation,
the Random Setup over many seeds and the secrecy of its seed, and what each seat sees of the
other's commitment under Open Combat. The rest is in tests/scenarios/variants.yaml.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from olympus.rules import (
    BOARD,
    BY_NAME,
    Faction,
    GameState,
    IllegalCommand,
    Options,
    Phase,
    create,
    execute,
    replay,
)
from olympus.rules import commands as cmd
from olympus.rules import events as ev
from olympus.rules.characters import LEADER, PICKED_PER_SIDE
from olympus.rules.observation import observe_event, view
from olympus.rules.setup import CHALLENGE_RANGE
from olympus.rules.state import Combat

_O, _C = Faction.OLYMPIANS, Faction.CHTHONIANS
SEATS = (_O, _C, None)  # None: a spectator


def _json(data: object) -> str:
    return json.dumps(data, sort_keys=True, default=str)


# --- Challenge --------------------------------------------------------------------------------


@pytest.mark.parametrize("adjustment", [-5, -1, 0, 3, 5])
def test_challenge_in_range_is_the_chthonians_starting_bonus(adjustment: int) -> None:
    state = replay(create(Options(chthonian_honor=adjustment)))
    assert state.honor == {_O: 16, _C: 16 + adjustment}
    state = replay(create(Options(chthonian_honor=adjustment, open_combat=True)))
    assert state.honor == {_O: 10, _C: 10 + adjustment}


@pytest.mark.parametrize("adjustment", [-6, 6, -50, 100])
def test_challenge_out_of_range_is_rejected_at_creation(adjustment: int) -> None:
    with pytest.raises(IllegalCommand) as error:
        create(Options(chthonian_honor=adjustment))
    assert error.value.code == "bad_challenge"


def test_challenge_range_is_minus_five_to_plus_five() -> None:
    assert list(CHALLENGE_RANGE) == list(range(-5, 6))


# --- Random Setup -----------------------------------------------------------------------------


def _draw(seed: int, token_seed: int = 0, **options: object) -> tuple[list[ev.Event], GameState]:
    created = create(Options(random_setup=True, **options), token_seed=token_seed)  # type: ignore[arg-type]
    events, state = execute(replay(created), cmd.DrawRandomSetup(seed=seed))
    return created + events, state


SEEDS = st.integers(0, 2**63 - 1)


@settings(max_examples=150, deadline=None)
@given(seed=SEEDS, token_seed=st.integers(0, 2**63 - 1))
def test_random_setup_is_a_legal_setup_fixed_by_its_seed(seed: int, token_seed: int) -> None:
    events, state = _draw(seed, token_seed)
    # the seed is recorded, and the same seed gives the same setup whatever else differs
    drawn = [e for e in events if isinstance(e, ev.RandomSetupDrawn)]
    assert [e.seed for e in drawn] == [seed]
    again_events, again = _draw(seed, token_seed=token_seed ^ 1, open_combat=True)
    assert again.positions == state.positions
    assert [e for e in again_events if isinstance(e, ev.SetupSubmitted)] == [
        e for e in events if isinstance(e, ev.SetupSubmitted)
    ]
    assert state.phase is Phase.TURN and state.turn is _C and state.turn_number == 1
    for faction in Faction:
        mine = {u: r for u, r in state.positions.items() if BY_NAME[u].faction is faction}
        assert len(mine) == PICKED_PER_SIDE
        assert len(set(mine.values())) == PICKED_PER_SIDE, f"two units share a region: {mine}"
        realm = set(BOARD.realm_regions(faction.realm))
        assert set(mine.values()) <= realm, mine
        leader = LEADER[faction]
        assert mine[leader] in {faction.base} | BOARD.neighbours(faction.base), mine
    assert not state.revealed and not state.eliminated


def test_random_setup_seeds_give_varied_setups() -> None:
    setups = {tuple(sorted(_draw(seed)[1].positions.items())) for seed in range(40)}
    assert len(setups) == 40
    leaders = {_draw(seed)[1].positions["Hades"] for seed in range(40)}
    assert leaders == {0, 7, 14, 22}, "the leader stands in its base or any region next to it"


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(10**12, 2**63 - 1))
def test_no_seat_sees_the_random_setup_seed(seed: int) -> None:
    """R2/R7: the seed is in the log (a replay reproduces the setup) but no seat or spectator
    receives it, and a seat sees only its own side's placements before the reveal."""
    events, _ = _draw(seed)
    state = GameState()
    for event in events:
        after = replay([event], state)
        for seat in SEATS:
            seen = observe_event(event, seat, state, after)
            text = _json(seen) + _json(view(after, seat))
            assert str(seed) not in text, (seat, event)
            if isinstance(event, ev.RandomSetupDrawn):
                assert seen is None
            if isinstance(event, ev.SetupSubmitted):
                assert ("placements" in seen) == (seat is event.faction), (seat, seen)
        state = after


# --- Open Combat: who sees which commitment (R8) ---------------------------------------------


def _combat(open_combat: bool, attacker: Faction, round_: int = 1) -> GameState:
    positions = {"Cronus": 18, "Harpies": 18, "Poseidon": 18, "Hermes": 18, "Hades": 1, "Zeus": 35}
    return replace(
        GameState(),
        options=Options(open_combat=open_combat),
        phase=Phase.COMBAT,
        turn=attacker,
        turn_number=5,
        honor={f: 10 for f in Faction},
        energy={f: 24 for f in Faction},
        positions=positions,
        picked=frozenset(positions),
        revealed=frozenset({"Cronus", "Harpies", "Poseidon", "Hermes"}),
        combat=Combat(18, attacker, 17 if attacker is _C else 19, round_),
        tokens={u: i for i, u in enumerate(positions, 1)},
        next_token=len(positions) + 1,
    )


def _commit(state: GameState, side: Faction, energy: int) -> tuple[ev.Event, GameState]:
    command = cmd.Commit(side=side, maneuver="chase", energy=energy)
    events, after = execute(state, command)
    assert len(events) == 1 and isinstance(events[0], ev.CombatCommitted), events
    return events[0], after


def _sees(event: ev.Event, seat: Faction | None, before: GameState, after: GameState) -> bool:
    """Whether ``seat`` learns the committed maneuver and Energy, by the event or the view."""
    seen = observe_event(event, seat, before, after)
    shown = view(after, seat)["combat"]["commitments"][event.faction.value]
    assert ("energy" in seen) == (shown is not None), (seen, shown)
    if shown is not None:
        assert shown == {"maneuver": "chase", "energy": 3}
        assert {"maneuver": seen["maneuver"], "energy": seen["energy"]} == shown
    return shown is not None


@pytest.mark.parametrize("attacker", list(Faction))
def test_open_combat_round_1_the_defender_sees_the_attackers_commitment(attacker: Faction) -> None:
    before = _combat(True, attacker)
    event, after = _commit(before, attacker, 3)
    assert _sees(event, attacker, before, after)
    assert _sees(event, attacker.enemy, before, after)  # the defender sees it before committing
    assert not _sees(event, None, before, after)  # spectators never see a sealed choice


@pytest.mark.parametrize("attacker", list(Faction))
def test_open_combat_round_2_the_attacker_sees_the_defenders_commitment(attacker: Faction) -> None:
    for round_ in (2, 3):
        before = _combat(True, attacker, round_)
        event, after = _commit(before, attacker.enemy, 3)
        assert _sees(event, attacker, before, after)
        assert not _sees(event, None, before, after)


@pytest.mark.parametrize("attacker", list(Faction))
@pytest.mark.parametrize("round_", [1, 2])
def test_without_open_combat_nobody_sees_a_sealed_commitment(
    attacker: Faction, round_: int
) -> None:
    for side in Faction:
        before = _combat(False, attacker, round_)
        event, after = _commit(before, side, 3)
        assert _sees(event, side, before, after)  # one's own commitment
        assert not _sees(event, side.enemy, before, after)
        assert not _sees(event, None, before, after)
