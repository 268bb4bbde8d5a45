"""A game between two players on the rules alone, each fed only its seat's messages.

The shell that the arena and the tests use instead of a server: the true state stays here;
each seat receives its ``view``, its events through ``observe_event`` and its ``legal``
messages built by the service's own ``protocol.legal``, and answers with commands that are
validated and executed as the service would. The players never see anything else.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from olympus.bot.player import Player
from olympus.rules import (
    Event,
    Faction,
    GameState,
    Options,
    Phase,
    create,
    execute,
    legal_actions,
    parse_command,
    replay,
    setup_options,
)
from olympus.rules import commands as cmd
from olympus.rules.evolve import evolve
from olympus.rules.observation import observe_event, view
from olympus.server.protocol import Message, legal

DEFAULT_OPTIONS = Options()


@dataclass(slots=True)
class SeatRecord:
    """A seat's decisions and the CPU they took (the process's: a match runs in one process,
    so a machine shared with other jobs does not slow the figure down)."""

    decisions: int = 0
    seconds: float = 0.0


@dataclass(slots=True)
class MatchResult:
    result: str  # "olympians", "chthonians", "draw" or "unfinished"
    commands: int
    seats: dict[Faction, SeatRecord] = field(default_factory=dict)
    state: GameState | None = None


def legal_message(state: GameState, seat: Faction) -> Message | None:
    """The seat's ``legal`` message when it has something to do, else None."""
    if actions := legal_actions(state, seat):
        return legal(0, actions)
    if rules := setup_options(state, seat):
        return legal(0, [], setup=rules)
    return None


def play_match(
    players: dict[Faction, Player],
    options: Options = DEFAULT_OPTIONS,
    seed: int = 0,
    max_commands: int = 1000,
) -> MatchResult:
    """Play one game; ``seed`` draws the token seed, the Random Setup and who acts first when
    both seats may (setup, sealed commitments)."""
    rng = random.Random(seed)
    state = replay(create(options, token_seed=rng.randrange(2**63)))
    for seat, player in players.items():
        player.start(view(state, seat))
    record = MatchResult("unfinished", 0, {seat: SeatRecord() for seat in players})
    if options.random_setup:
        state = _run(state, cmd.DrawRandomSetup(seed=rng.randrange(2**63)), players)
    while state.phase is not Phase.OVER and record.commands < max_commands:
        waiting = [(s, m) for s in Faction if (m := legal_message(state, s)) is not None]
        if not waiting:
            raise AssertionError(f"no seat may act at version {state.version}")
        seat, message = rng.choice(waiting)
        started = time.process_time()
        wire = players[seat].act(message)
        record.seats[seat].seconds += time.process_time() - started
        record.seats[seat].decisions += 1
        state = _run(state, parse_command({**wire, "side": seat.value}), players)
        record.commands += 1
    if state.phase is Phase.OVER:
        record.result = state.result or "draw"
    record.state = state
    return record


class Observer(Protocol):
    def observe(self, event: Message) -> None: ...


def deliver(state: GameState, events: list[Event], seats: Mapping[Faction, Observer]) -> GameState:
    """Fold ``events`` onto ``state``, sending each seat those it may know of, in order."""
    for event in events:
        after = evolve(state, event)
        for seat, observer in seats.items():
            seen = observe_event(event, seat, state, after)
            if seen is not None:
                observer.observe(seen)
        state = after
    return state


def _run(state: GameState, command: cmd.Command, players: dict[Faction, Player]) -> GameState:
    """Execute ``command`` and send each seat the events it may know of."""
    events, _ = execute(state, command)
    return deliver(state, events, players)
