"""Random legal games never break the rules' invariants (R3, R4, R6, R8, R10, R11).

A bot plays only what ``legal_actions`` offers, from random setups and in every variant. After
every single event the folded state must be sound, every Honor change must be one the rules
allow, the log must replay to the very same state and every event must survive msgpack. This is
the net under everything the scenario tests do not think of.

Budget: a game of ~70 commands costs ~75 ms of CPU, mostly the bot's ``legal_actions`` calls, and
~0.25 s when every legal action of every position is tried (see docs/performance.md). 1,750
games (1,500 of them spread over the cores) plus 20 exhaustive ones take about a minute and a
half on the 2-core dev machine. ``OLYMPUS_RANDOM_PLAY_SCALE=10`` multiplies every count by 10.
"""

from __future__ import annotations

import multiprocessing
import os
import random
from collections import Counter
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from olympus.bots import apply, play_random_game
from olympus.rules import (
    PALACE,
    Event,
    Faction,
    GameState,
    LegalAction,
    Options,
    Phase,
    decode,
    encode,
    evolve,
    execute_steps,
    legal_actions,
    replay,
)
from olympus.rules import events as ev
from olympus.rules.characters import BY_NAME, LEADER, PICKED_PER_SIDE

MAX_COMMANDS = 600  # random games end after ~65 commands on average; the cap is a safety net
SCALE = float(os.environ.get("OLYMPUS_RANDOM_PLAY_SCALE", "1"))
HYPOTHESIS_GAMES = max(1, round(250 * SCALE))
LOOP_GAMES = max(10, round(1500 * SCALE))
ALL_ACTIONS_GAMES = max(1, round(20 * SCALE))
STACK_LIMIT = 4  # R6, restated here rather than imported: the test must not trust the engine


def _honor_allowed(open_combat: bool) -> dict[str, frozenset[int]]:
    """Every Honor delta the rules allow, per event reason (0 is no change and no event).

    - base (R3): −1 per enemy unit in one's base, at most 4 of them (R6).
    - liturgy: −1 with an empty Energy stock, −2 otherwise.
    - move (R4, no enemy): forward group of n −(n−1); backward −2, group of 4 −3; Dionysus
      alone −1 instead of −2; Apollo doubles his flights (backward flight −4).
    - attack (R4): a < d +2·(d−a); a > d −2·(a−d), doubled with Apollo; a = d backward −1
      (Apollo −2, Dionysus alone 0); Open Combat: every a = d attack earns +1
      (D6 in docs/rules.md).
    - combat (R8): All-out −2 and more than 4 Energy −1 (1, 2 or 3); doubled with Apollo;
      Dionysus alone: All-out −1, Energy 0.
    - retreat (R8): −2; Apollo −4; Dionysus alone −1.
    - thunderbolt (R10): −1. sneak_attack (the Erinyes, rulebook appendix): −1.
    """
    attack = {2, 4, 6, -1, -2, -4, -6, -8, -12} | ({1} if open_combat else set())
    return {
        "base": frozenset({-1, -2, -3, -4}),
        "liturgy": frozenset({-1, -2}),
        "move": frozenset({-1, -2, -3, -4}),
        "attack": frozenset(attack),
        "combat": frozenset({-1, -2, -3, -4, -6}),
        "retreat": frozenset({-1, -2, -4}),
        "thunderbolt": frozenset({-1}),
        "sneak_attack": frozenset({-1}),
    }


_O, _C = Faction.OLYMPIANS, Faction.CHTHONIANS
# Every Energy change the rules allow, per reason: (faction, delta) -> allowed. R5 styx, Liturgy,
# R8 combat (committed Energy is spent), R10 thunderbolt and recall, and the powers of the
# rulebook's appendix: Poseidon +2, Demeter drains up to 3, Hecate absorbs the Olympians' Energy
# (or 6 on a thunderbolt), the Erinyes' sneak attack costs 2.
ENERGY_ALLOWED: dict[str, Callable[[Faction, int], bool]] = {
    "styx": lambda f, d: d == -2,
    "liturgy": lambda f, d: d == 6,
    "combat": lambda f, d: d < 0,
    "thunderbolt": lambda f, d: f is _O and d == -6,
    "recall": lambda f, d: f is _C and d == -10,
    "poseidon": lambda f, d: f is _O and d == 2,
    "drain": lambda f, d: (f is _O and 1 <= d <= 3) or (f is _C and -3 <= d <= -1),
    "hecate": lambda f, d: f is _C and d > 0,
    "sneak_attack": lambda f, d: f is _C and d == -2,
}


def check_state(state: GameState) -> None:
    """Invariants of every state once the setups are revealed."""
    if not state.picked:
        return
    assert all(state.energy[f] >= 0 for f in Faction), state.energy  # Energy never negative
    per_side = Counter(BY_NAME[u].faction for u in state.picked)
    assert per_side == {f: PICKED_PER_SIDE for f in Faction}, per_side
    assert all(LEADER[f] in state.picked for f in Faction)
    on_board, gone = set(state.positions), set(state.eliminated)
    assert len(gone) == len(state.eliminated), f"eliminated twice: {state.eliminated}"
    assert not on_board & gone, f"both on the board and eliminated: {on_board & gone}"
    assert on_board | gone == state.picked, f"lost units: {state.picked - on_board - gone}"
    assert state.revealed <= state.picked
    stacks = Counter((r, BY_NAME[u].faction) for u, r in state.positions.items())
    assert all(0 <= r <= PALACE for r, _ in stacks), stacks
    assert max(stacks.values(), default=0) <= STACK_LIMIT, stacks  # R6
    tokens = getattr(state, "tokens", None)
    if tokens is not None:  # R7: one distinct token per unit on the board
        assert set(tokens) == on_board, (tokens, on_board)
        assert len(set(tokens.values())) == len(tokens), tokens


def check_event(before: GameState, event: Event, allowed: dict[str, frozenset[int]]) -> None:
    """Per-event rules that need the state the event applies to."""
    if isinstance(event, ev.HonorChanged):
        assert event.delta in allowed.get(event.reason, ()), f"Honor change not allowed: {event}"
        if event.reason == "base":  # R3: exactly 1 per enemy unit in the mover's base
            invaders = before.count_in(event.faction.base, event.faction.enemy)
            assert event.delta == -invaders, (event, invaders)
        if event.reason in ("move", "attack", "liturgy"):
            assert event.faction is before.turn, (event, before.turn)
    if isinstance(event, ev.TurnStarted):  # R2, R3: the Chthonians first, then by turns
        first = before.turn_number == 0
        assert event.number == before.turn_number + 1, (event, before.turn_number)
        assert event.faction is (Faction.CHTHONIANS if first else before.turn.enemy), event
    if isinstance(event, ev.EnergyChanged):
        rule = ENERGY_ALLOWED.get(event.reason)
        assert rule is not None and rule(event.faction, event.delta), f"Energy change: {event}"


def expected_result(state: GameState) -> str | None:
    """R11, restated: Honor first (both out: draw), then the Chthonian, then the Olympian goal."""
    out = [f for f in Faction if state.honor[f] <= 0]
    if len(out) == 2:
        return "draw"
    if out:
        return out[0].enemy.value
    leaders = ("Hades", "Persephone")
    if any(state.positions.get(u) == PALACE for u in leaders):
        return Faction.CHTHONIANS.value
    if not any(u in state.positions for u in leaders):
        return Faction.OLYMPIANS.value
    return None


def check_action(
    before: GameState, action: LegalAction, events: list[Event], after: GameState
) -> None:
    """What ``legal_actions`` announced (the client's warning) is what the command costs, and the
    game is over exactly when R11 says so."""
    side = action.command.side
    if action.command.type in ("move", "liturgy", "retreat"):
        # a move's own Honor and that of its movers' powers (the sneak attack: move_charges)
        move = ("move", "attack", "sneak_attack")
        reasons = {"move": move, "liturgy": ("liturgy",), "retreat": ("retreat",)}
        honor = sum(
            e.delta
            for e in events
            if isinstance(e, ev.HonorChanged)
            and e.faction is side
            and e.reason in reasons[action.command.type]
        )
        assert honor == action.honor, (action, events)
    if action.command.type == "liturgy":  # 1 Honor with an empty Energy stock, else 2
        assert action.honor == (-1 if before.energy[side] == 0 else -2), (action, before.energy)
    if action.command.type == "move":  # the Styx, and the movers' powers (move_charges)
        energy = sum(
            e.delta for e in events if isinstance(e, ev.EnergyChanged) and e.faction is side
        )
        assert -energy == action.energy, (action, events)
    if after.phase is not Phase.OVER:  # R8: sides meet only in a combat or a step to settle
        sides: dict[int, set[Faction]] = {}
        for unit, region in after.positions.items():
            sides.setdefault(region, set()).add(BY_NAME[unit].faction)
        mixed = {r for r, f in sides.items() if len(f) == 2}
        fighting = {step.region for step in after.pending}
        fighting |= {after.combat.region} if after.combat is not None else set()
        assert mixed <= fighting, (mixed, after.combat, action, events)
    expected = expected_result(after)
    if after.phase is Phase.OVER:
        assert isinstance(events[-1], ev.GameEnded), events
        assert events[-1].result == expected == after.result, (events[-1], after.honor)
    else:
        assert expected is None, f"the game should be over ({expected}): {after!r}"


def check_game(
    options: Options, events: list[Event], final: GameState, commands: Iterable[object]
) -> None:
    """Fold the log event by event, checking every intermediate state and every event."""
    assert isinstance(events[0], ev.GameCreated)
    assert (events[0].open_combat, events[0].random_setup, events[0].chthonian_honor) == (
        options.open_combat,
        options.random_setup,
        options.chthonian_honor,
    )
    allowed = _honor_allowed(options.open_combat)
    state = GameState()
    for number, event in enumerate(events, 1):
        assert decode(encode(event)) == event, event
        check_event(state, event, allowed)
        state = evolve(state, event)
        assert state.version == number
        check_state(state)
    assert state == final, "folding the log one event at a time must give the final state"
    assert replay(events) == final, "replay must reproduce the final state exactly"
    ended = [e for e in events if isinstance(e, ev.GameEnded)]
    if final.phase is Phase.OVER:
        assert len(ended) == 1 and events[-1] is ended[0], ended
    else:
        assert not ended
        assert len(list(commands)) == MAX_COMMANDS, "a game stops only when over or at the cap"


def play_and_check(seed: int, options: Options) -> tuple[list[Event], GameState]:
    events, final, commands = play_random_game(
        random.Random(seed), options, MAX_COMMANDS, observe=check_action
    )
    check_game(options, events, final, commands)
    return events, final


def options_for(rng: random.Random) -> Options:
    return Options(
        open_combat=rng.random() < 0.5,
        random_setup=rng.random() < 0.5,
        chthonian_honor=rng.randint(-5, 5),
    )


@settings(
    max_examples=HYPOTHESIS_GAMES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**64 - 1),
    open_combat=st.booleans(),
    random_setup=st.booleans(),
    chthonian_honor=st.integers(-5, 5),
)
def test_random_games_keep_the_invariants(
    seed: int, open_combat: bool, random_setup: bool, chthonian_honor: int
) -> None:
    play_and_check(seed, Options(open_combat, random_setup, chthonian_honor))


def _play_seeds(seeds: range) -> tuple[Counter[str | None], Counter[str]]:
    """Play and check the games of ``seeds``: their results, and in how many games each event
    type occurred. A worker process's share of the seeded games."""
    results: Counter[str | None] = Counter()
    seen: Counter[str] = Counter()
    for seed in seeds:
        events, final = play_and_check(seed, options_for(random.Random(-seed - 1)))
        results[final.result] += 1
        seen.update({e.TYPE for e in events})
    return results, seen


def test_many_seeded_games_end() -> None:
    """Fixed seeds (reproducible: game ``i`` uses seed ``i``), on every core. Most games must
    really end and most must fight: a bot or an engine that never finishes a game, or never lets
    the armies meet, would otherwise pass every invariant unnoticed."""
    workers = os.cpu_count() or 1
    shares = [range(w, LOOP_GAMES, workers) for w in range(workers)]
    results: Counter[str | None] = Counter()
    seen: Counter[str] = Counter()
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        for share_results, share_seen in pool.map(_play_seeds, shares):
            results.update(share_results)
            seen.update(share_seen)
    assert sum(results.values()) == LOOP_GAMES
    assert results[None] <= LOOP_GAMES // 10, results
    decided = {r for r in results if r is not None}
    assert {Faction.OLYMPIANS.value, Faction.CHTHONIANS.value} <= decided, results
    assert seen[ev.CombatStarted.TYPE] >= LOOP_GAMES // 2, seen
    for kind in (ev.UnitEliminated, ev.UnitsRetreated, ev.UnitsHidden, ev.CombatRoundStarted):
        assert seen[kind.TYPE] > 0, f"no game had {kind.TYPE}: {seen}"


def test_every_legal_action_is_accepted() -> None:
    """Not just the bot's pick: in every position of a few games, every action ``legal_actions``
    offers either seat is accepted, costs what it announces and leaves a sound game."""

    def try_all(before: GameState, _a: LegalAction, _e: list[Event], _s: GameState) -> None:
        for side in Faction:
            for other in legal_actions(before, side):
                new, state = apply(before, other)
                check_action(before, other, new, state)

    for seed in range(ALL_ACTIONS_GAMES):
        options = options_for(random.Random(seed + 10**6))
        play_random_game(random.Random(seed + 10**6), options, MAX_COMMANDS, observe=try_all)


def test_execute_steps_gives_the_state_after_each_event() -> None:
    """``execute_steps`` (the service folds its own commands' events with these states, not
    evolving them again) gives the events ``execute`` gives and exactly the states that
    evolving each of them gives, the last being ``execute``'s."""
    checked = 0

    def agree(before: GameState, action: LegalAction, events: list[Event], end: GameState) -> None:
        nonlocal checked
        stepped, states = execute_steps(before, action.command)
        assert stepped == events and len(states) == len(events) > 0
        state = before
        for event, after in zip(events, states, strict=True):
            state = evolve(state, event)
            assert after == state
        assert state == end
        checked += 1

    for seed in range(10):
        play_random_game(random.Random(seed), Options(), 300, observe=agree)
    assert checked > 500
