"""A bot is a seat, not an oracle (R7).

Two games differ only in facts hidden from the bot's seat (the Olympians): the Chthonians'
sealed setup puts other characters (another three left out) on the same regions, and their
sealed commitment in the first combat differs. The Chthonians are driven by a script that reads
only what is public (where units stand) and moves Cronus, who stands on the same region in both
games, toward the nearest Olympian until he fights. Played in lockstep, the bot (same seed) is
handed byte-identical inputs in both games and answers with identical commands, its sealed
commitment included, up to the first event that shows it a character that differs. A bot
handed the whole state (the negative control) fails the same check.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from olympus.arena import deliver, legal_message
from olympus.bot import SeatBot
from olympus.bot.levels import Level
from olympus.bot.search import Budget
from olympus.rules import (
    BOARD,
    BY_NAME,
    Faction,
    GameState,
    Options,
    create,
    execute,
    legal_actions,
    parse_command,
    replay,
)
from olympus.rules import commands as cmd
from olympus.rules import events as ev
from olympus.rules.observation import view

BOT, SCRIPT = Faction.OLYMPIANS, Faction.CHTHONIANS
LEVEL = Level("test", Budget(iterations=12, seconds=None, depth=4))
COMMON = {"Hades", "Cronus"}  # the same in both games, on the same regions
SETUP_A = {
    "Hades": 0, "Cronus": 16, "Persephone": 14, "Cerberus": 7, "Hecate": 1,
    "Hypnos": 2, "Erinyes": 8, "Moirae": 15, "Thanatos": 22,
}  # fmt: skip
SETUP_B = {
    "Hades": 0, "Cronus": 16, "Charon": 14, "Nyx": 7, "Harpies": 1,
    "Thanatos": 2, "Persephone": 8, "Erinyes": 15, "Hecate": 22,
}  # fmt: skip
COMMIT_A = {"type": "commit", "maneuver": "standard", "energy": 0}
COMMIT_B = {"type": "commit", "maneuver": "all_out_attack", "energy": 6}


class Recorder:
    """Wraps a player; keeps, in order, every input it is handed and every command it sends,
    as bytes (``transcript``)."""

    def __init__(self, player: Any) -> None:
        self.player = player
        self.transcript: list[tuple[str, bytes]] = []
        self.committed_after_a_sealed_commitment = False

    def _keep(self, kind: str, data: Any) -> None:
        self.transcript.append((kind, json.dumps(data, sort_keys=True).encode()))

    def start(self, data: dict) -> None:
        self._keep("view", data)
        self.player.start(data)

    def observe(self, data: dict) -> None:
        self._keep("event", data)
        self.player.observe(data)

    def act(self, legal: dict) -> dict:
        self._keep("legal", legal)
        command = self.player.act(legal)
        self._keep("command", command)
        return command


class Oracle(SeatBot):
    """The negative control: a bot that is handed the whole state and searches on it, while
    its recorded inputs stay those of the seat: only its commands can give it away."""

    def hand(self, state: GameState) -> None:
        self.belief.sample = lambda rng: state  # type: ignore[union-attr,method-assign]


def toward_nearest_olympian(state: GameState) -> dict[str, Any]:
    """The script's turn: Cronus one step toward the nearest Olympian (or onto him); public
    facts only, and the same moves are legal whoever else the Chthonians are."""
    targets = {state.positions[u] for u in state.units_of(BOT)}
    moves = [
        a
        for a in legal_actions(state, SCRIPT)
        if a.type == "move" and a.wire["units"] == ["Cronus"] and not a.wire["reveal"]
    ]
    if not moves:
        return {"type": "liturgy"}

    def distance(region: int) -> int:
        frontier, seen, steps = {region}, {region}, 0
        while not frontier & targets:
            frontier = {n for r in frontier for n in BOARD.neighbours(r)} - seen
            seen |= frontier
            steps += 1
        return steps

    best = min(moves, key=lambda a: (distance(a.wire["to"]), -a.honor, a.wire["to"]))
    return best.wire


def reveals_a_difference(events: list[ev.Event]) -> bool:
    """Whether an event names a Chthonian that is not the same in both games."""
    for event in events:
        named: tuple[str, ...] = ()
        if isinstance(event, ev.UnitsRevealed):
            named = event.units
        elif isinstance(event, ev.UnitEliminated):
            named = (event.unit,)
        if any(BY_NAME[u].faction is SCRIPT and u not in COMMON for u in named):
            return True
    return False


def play(
    setup: dict[str, int],
    commitment: dict[str, Any],
    bot: Recorder,
    log: list[ev.Event] | None = None,
) -> None:
    """One game until the bot has committed after the script's sealed commitment, or until an
    event would show the bot a character that differs between the two games; its events are
    added to ``log``."""
    log = [] if log is None else log
    log.extend(create(Options(), token_seed=12345))
    state = replay(log)
    bot.start(view(state, BOT))

    def run(state: GameState, command: cmd.Command) -> tuple[GameState, list[ev.Event]]:
        events, _ = execute(state, command)
        log.extend(events)
        state = deliver(state, events, {BOT: bot})
        if isinstance(bot.player, Oracle):
            bot.player.hand(state)  # behind the recorder's back: its inputs look the same
        return state, events

    state, _ = run(state, cmd.SubmitSetup(side=SCRIPT, placements=setup))
    for _ in range(200):
        if state.phase.value == "over":
            return
        script_may = legal_actions(state, SCRIPT)
        if script_may:
            if state.phase.value == "combat" and not state.pending:
                wire = commitment
            elif state.pending:
                wire = script_may[0].wire
            else:
                wire = toward_nearest_olympian(state)
            command = parse_command({**wire, "side": SCRIPT.value})
        else:
            message = legal_message(state, BOT)
            assert message is not None
            sealed = state.combat is not None and SCRIPT in state.combat.commitments
            command = parse_command({**bot.act(message), "side": BOT.value})
            if sealed and isinstance(command, cmd.Commit):
                bot.committed_after_a_sealed_commitment = True
                return
        state, events = run(state, command)
        if reveals_a_difference(events):
            return
    raise AssertionError("the script never brought Cronus to a fight")


def assert_blind(make_bot: Callable[[int], SeatBot]) -> None:
    """The check, with the first bot seed whose game A reaches the sealed commitment (the
    bot's own moves may show it another Chthonian first: then the games stop there)."""
    for seed in range(1, 40):
        first = Recorder(make_bot(seed))
        play(SETUP_A, COMMIT_A, first)
        if first.committed_after_a_sealed_commitment:
            break
    else:
        raise AssertionError("no game reached a sealed commitment")
    second = Recorder(make_bot(seed))
    play(SETUP_B, COMMIT_B, second)
    assert second.committed_after_a_sealed_commitment
    for (kind, a), (_, b) in zip(first.transcript, second.transcript, strict=False):
        assert a == b, f"first difference: the bot's {kind}: {a!r} != {b!r}"
    assert len(first.transcript) == len(second.transcript)


def test_games_that_differ_in_hidden_facts_give_the_bot_identical_inputs_and_commands() -> None:
    assert_blind(lambda seed: SeatBot(BOT, LEVEL, seed))


def test_the_check_fails_for_a_bot_handed_the_whole_state() -> None:
    with pytest.raises(AssertionError, match="first difference: the bot's command"):
        assert_blind(lambda seed: Oracle(BOT, LEVEL, seed))
