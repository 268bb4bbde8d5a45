"""``decide(state, command) -> events``: judge a command against the state (pure, no I/O).

A command that breaks a rule raises ``IllegalCommand(code, sentence)`` and produces no events
at all. The codes, by where they are raised: here the command's place in the game (``_judge``:
``no_side``, ``game_over``, ``wrong_phase``, ``choice_pending``, ``in_combat``,
``not_your_turn``, ``unknown_command``; a timeout's ``bad_timeout``), passing
(``cannot_pass``) and Hermes' steps (``no_extra_steps``, ``steps_after_stop``); then
``resignation.py`` (an abort's ``abort_too_late``), ``setup.py`` (R2), ``movement.py`` (R3,
R5, R6), ``combat.py`` (R8, R9), ``clocks.py`` (R12) and the leaders' powers (R10:
``powers/zeus.py``, ``powers/hades.py``).
"""

from __future__ import annotations

import _random
import hashlib
from collections.abc import Callable, Sequence
from typing import Any, Final

from . import clocks, combat, setup
from . import commands as cmd
from . import events as ev
from .board import TARTARUS
from .characters import Faction
from .decision import Decision
from .errors import IllegalCommand
from .movement import MovePlan, Movers, plan_move
from .powers import MoveContext, powers_of
from .resignation import abort, resign
from .state import GameState, Phase
from .turns import end_turn

LITURGY_ENERGY: Final = 6

Handler = Callable[[Decision, Faction, Any], None]


def _hide_origin(d: Decision, origin: int, side: Faction) -> None:
    """R7: some but not all units leave for a region without enemies, so the enemy cannot
    tell who left: every unit of the origin is hidden and gets a fresh token, drawn from the
    secret seed so that the new numbers say nothing about who is under them (D2, D3)."""
    state = d.state
    units = state.units_in(origin, side)
    order = [units[i] for i in _shuffled(state.token_seed, state.version, len(units))]
    tokens = {u: state.next_token + i for i, u in enumerate(order)}
    d.emit(ev.UnitsHidden(units=tuple(units), tokens=tokens))


# The draws of ``_shuffled`` made lately, at most this many (then forgotten all at once).
_SHUFFLES: Final[dict[tuple[int, int, int], tuple[int, ...]]] = {}
_SHUFFLES_KEPT: Final = 4096


def _shuffled(token_seed: int, version: int, n: int) -> tuple[int, ...]:
    """``range(n)`` as ``random.Random(f"{token_seed}:{version}").shuffle`` orders it, which
    is how it orders any ``n`` items (``_seeded_order``). Remembered: ``legal_actions`` makes
    Hermes' first step to each destination from the same origin at the same version (his
    further steps)."""
    key = (token_seed, version, n)
    order = _SHUFFLES.get(key)
    if order is None:
        if len(_SHUFFLES) >= _SHUFFLES_KEPT:
            _SHUFFLES.clear()
        order = _SHUFFLES[key] = _seeded_order(f"{token_seed}:{version}", n)
    return order


def _seeded_order(seed: str, n: int) -> tuple[int, ...]:
    """``range(n)`` as ``random.Random(seed).shuffle(...)`` leaves it, drawn as it draws (its
    Python layers skipped for speed): a str seeds the C generator with one big-endian int, the
    bytes followed by their SHA-512 (seeding "version 2"); the shuffle is Fisher-Yates, each
    index drawn as ``getrandbits`` of the bound's bit length until one falls below the bound.
    Every stored game hid its units so (R7); tests/test_observation.py holds this to
    ``random.Random`` for many seeds and sizes."""
    text = seed.encode()
    generator = _random.Random(int.from_bytes(text + hashlib.sha512(text).digest(), "big"))
    drawn = list(range(n))
    for i in range(n - 1, 0, -1):
        bits = (i + 1).bit_length()
        j = generator.getrandbits(bits)
        while j > i:
            j = generator.getrandbits(bits)
        drawn[i], drawn[j] = drawn[j], drawn[i]
    return tuple(drawn)


def make_move(d: Decision, plan: MovePlan) -> bool:
    """Apply one judged move (R3): the re-hiding of its origin (R7, D3), its reveals (after
    the re-hiding, D21), its Styx Energy (R5) and Honor (R4), the move, the movers' powers
    after it (Poseidon, Demeter), and the meeting if enemies stand there (R8). True when the
    turn goes on with a combat or the game is over."""
    move, side = plan.move, plan.move.faction
    attack = d.state.count_in(move.destination, side.enemy) > 0
    partial = len(move.units) < d.state.count_in(move.origin, side)
    if partial and not attack and not move.flight:
        _hide_origin(d, move.origin, side)  # before the reveal: a unit shown for its power stays
    if plan.reveal:
        d.emit(ev.UnitsRevealed(units=plan.reveal))
    if plan.energy:
        d.emit(ev.EnergyChanged(side, -plan.energy, "styx"))
    if plan.honor:
        d.emit(ev.HonorChanged(side, plan.honor, plan.honor_reason))
    d.emit(ev.UnitsMoved(side, move.units, move.origin, move.destination, move.flight))
    for power in powers_of(move.units, "after_move"):
        power.after_move(d, move)
    if attack:
        combat.meet(d, move)
        return True
    return d.check_end()


def _move(d: Decision, side: Faction, c: cmd.Move) -> None:
    """A move (R3), then Hermes' further steps in the same command (D1), then the end of the
    turn unless it ended in a meeting or the game's end. Raises ``IllegalCommand`` as
    ``walk`` does."""
    if walk(d, side, c) is not None:
        end_turn(d)


def walk(d: Decision, side: Faction, c: cmd.Move, going_on: bool = False) -> MovePlan | None:
    """Make in ``d`` the move of ``c`` and then each of its further steps (Hermes, R3, D1),
    each judged as it comes, on the position the steps before it left, and charged as
    ``make_move`` charges it (R4, R5): the plan of the last one made, or None where it ended
    in a meeting or the game's end. ``going_on``: a further step is to follow ``c``'s (the
    next steps of a walk are asked, ``legal.further_steps``), so that ``c`` is a walk even
    without steps yet. Raises ``IllegalCommand`` as ``movement.plan_move`` does for each
    step; ``no_extra_steps`` for steps of a move whose movers take none; ``steps_after_stop``
    for steps after a meeting (a step only stops the walk as its last one)."""
    plan = plan_move(d.state, side, c.units, c.to, c.fly, c.reveal, c.use_power)
    walking = going_on or bool(c.steps)
    if walking and not takes_extra_steps(d.state, plan.move):
        raise IllegalCommand("no_extra_steps", "Only Hermes, moving alone, takes further steps.")
    if make_move(d, plan):
        if c.steps:
            raise IllegalCommand("steps_after_stop", "Hermes stops where he meets anyone.")
        return None
    if walking:
        begin_steps(d, c.units)
    last = len(c.steps) - 1
    for i, destination in enumerate(c.steps):
        walker = next_step(d, c.units, plan)
        plan = walker.judge(walker.move(destination))
        if make_move(d, plan):
            if i != last:
                raise IllegalCommand("steps_after_stop", "Hermes stops where he meets anyone.")
            return None
    return plan


def takes_extra_steps(state: GameState, move: MoveContext) -> bool:
    """Whether the movers of ``move`` may go on with further single steps (Hermes, R3, D1)."""
    return any(p.takes_extra_steps(state, move) for p in powers_of(move.units))


def begin_steps(d: Decision, units: list[str]) -> None:
    """After the first step of a walk, before the next: taking extra steps reveals Hermes."""
    if units[0] not in d.state.revealed:
        d.emit(ev.UnitsRevealed(units=(units[0],)))


def next_step(d: Decision, units: Sequence[str], previous: MovePlan) -> Movers:
    """The walker of a walk whose last step was ``previous`` (already made in ``d``), to judge
    his next step; ``IllegalCommand`` ``steps_after_stop`` where he met anyone (R3).
    ``legal_actions`` lists walks of one further step with this very function."""
    side = previous.move.faction
    if d.state.count_in(previous.move.destination, side) > 1:
        raise IllegalCommand("steps_after_stop", "Hermes stops where he meets anyone.")
    return Movers.of(d.state, side, units)


def liturgy_honor(state: GameState, side: Faction) -> int:
    """The Honor ``side`` gives for a Liturgy's ``LITURGY_ENERGY`` Energy (rulebook
    "Liturgy"): 1 if its stock of Energy is empty, else 2."""
    return 1 if state.energy[side] == 0 else 2


def _liturgy(d: Decision, side: Faction, c: cmd.Liturgy) -> None:
    """The Liturgy (rulebook "Liturgy"): ``LITURGY_ENERGY`` Energy for ``liturgy_honor``
    Honor; then the game-end check and the end of the turn."""
    points = liturgy_honor(d.state, side)
    d.emit(ev.LiturgyPerformed(faction=side))
    d.emit(ev.EnergyChanged(side, LITURGY_ENERGY, "liturgy"))
    d.emit(ev.HonorChanged(side, -points, "liturgy"))
    if not d.check_end():
        end_turn(d)


def may_pass(state: GameState, side: Faction) -> bool:
    """R3: only the Olympians, and only when all their units on the board are in Tartarus."""
    units = state.units_of(side)
    return (
        side is Faction.OLYMPIANS
        and bool(units)
        and all(state.positions[u] == TARTARUS for u in units)
    )


def _pass(d: Decision, side: Faction, c: cmd.Pass) -> None:
    """Passing (R3); ``IllegalCommand`` ``cannot_pass`` unless ``may_pass``."""
    if not may_pass(d.state, side):
        raise IllegalCommand(
            "cannot_pass", "Only the Olympians may pass, when all their units are in Tartarus."
        )
    d.emit(ev.Passed(faction=side))
    end_turn(d)


_TURN_HANDLERS: Final[dict[type, Handler]] = {
    cmd.Move: _move,
    cmd.Liturgy: _liturgy,
    cmd.Pass: _pass,
}
# Leader powers register their "instead of moving" commands here (thunderbolt, recall).
POWER_COMMANDS: Final[dict[type, Handler]] = {}

_CHOICE_HANDLERS: Final[dict[type, Handler]] = {
    cmd.RemoveUnit: lambda d, side, c: combat.choose_removal(d, side, c.unit),
    cmd.Retreat: lambda d, side, c: combat.choose_retreat(d, side, c.region),
    cmd.Stay: lambda d, side, c: combat.choose_stay(d, side),
}


def _check_turn(state: GameState, side: Faction) -> None:
    """Refuse a turn's action (R3) while a choice is pending (``choice_pending``), in a
    combat (``in_combat``), or in the other side's turn (``not_your_turn``)."""
    if state.pending:
        raise IllegalCommand("choice_pending", "A choice must be made first.")
    if state.phase is Phase.COMBAT:
        raise IllegalCommand("in_combat", "Finish the combat first.")
    if side is not state.turn:
        raise IllegalCommand("not_your_turn", "It is not your turn.")


def check_turn(state: GameState, side: Faction | None) -> Faction:
    """``side``, once it may give a turn's action (R3) in ``state``: else ``IllegalCommand``
    as ``decide`` refuses one there (``no_side``, ``game_over``, ``wrong_phase``, then
    ``_check_turn``'s codes). Made of public facts only: the phase, whose turn or choice it
    is."""
    if side is None:
        raise IllegalCommand("no_side", "The command does not say which side gives it.")
    if state.phase is Phase.OVER:
        raise IllegalCommand("game_over", "The game is over.")
    if state.phase is Phase.SETUP:
        raise IllegalCommand("wrong_phase", "The game is still in its setup.")
    _check_turn(state, side)
    return side


def _judge(d: Decision, command: cmd.Command) -> None:
    """Emit into ``d`` the events of ``command`` in its place in the game: a resignation or
    an abort (in any phase: resignation.py), setup (R2), a choice, a commitment (R8), or the
    turn's action (R3, R10). Raises ``IllegalCommand`` (``no_side``, ``game_over``,
    ``wrong_phase``, ``choice_pending``, ``in_combat``, ``not_your_turn``,
    ``unknown_command``, or its handler's)."""
    state = d.state
    if isinstance(command, cmd.DrawRandomSetup):
        setup.draw_random(d, command.seed)
        return
    side = command.side
    if side is None:
        raise IllegalCommand("no_side", "The command does not say which side gives it.")
    if state.phase is Phase.OVER:
        raise IllegalCommand("game_over", "The game is over.")
    if isinstance(command, cmd.Resign):
        resign(d, side)
        return
    if isinstance(command, cmd.Abort):
        abort(d, side)
        return
    if isinstance(command, cmd.SubmitSetup):
        setup.submit(d, side, command.placements)
        return
    if state.phase is Phase.SETUP:
        raise IllegalCommand("wrong_phase", "The game is still in its setup.")
    kind = type(command)
    if kind in _CHOICE_HANDLERS:
        _CHOICE_HANDLERS[kind](d, side, command)
        return
    if isinstance(command, cmd.Commit):
        combat.commit(d, side, command.maneuver, command.energy, command.reveal)
        return
    _check_turn(state, side)
    handler = _TURN_HANDLERS.get(kind) or POWER_COMMANDS.get(kind)
    if handler is None:
        raise IllegalCommand("unknown_command", f"{kind.__name__} cannot be played here.")
    handler(d, side, command)


def _timeout(d: Decision, side: Faction, at_ms: int, seed: int) -> None:
    """R12: apply the fallback of a missed deadline, or end the game for a long absence (D15).
    Raises ``IllegalCommand`` ``no_deadline`` or ``not_expired`` (``clocks.missed``)."""
    kind, since = clocks.missed(d.state, side, at_ms)
    d.emit(ev.DeadlineMissed(faction=side, kind=kind))
    forfeit = d.state.options.forfeit_seconds
    if forfeit is not None and at_ms - since >= forfeit * 1000:
        d.emit(ev.GameEnded(result=side.enemy.value, reason="forfeit"))
    else:
        _judge(d, clocks.fallback(d.state, side, kind, seed))
    clocks.schedule(d, at_ms, {**d.state.absent_since, side.value: since})


def execute(state: GameState, command: cmd.Command) -> tuple[list[ev.Event], GameState]:
    """The events ``command`` produces in ``state`` and the state they lead to; raises
    ``IllegalCommand`` (codes: the module's docstring) and then produces nothing."""
    d = _decision(state, command)
    return d.events, d.state


def execute_steps(
    state: GameState, command: cmd.Command
) -> tuple[list[ev.Event], list[GameState]]:
    """``execute``, with the state after each event: what a caller that folds the events one
    at a time (the service observes each for every audience) would otherwise evolve again."""
    d = _decision(state, command)
    return d.events, d.states


def reads_time(state: GameState, command: cmd.Command) -> bool:
    """Whether deciding ``command`` reads its time (``at_ms``, R12): a timeout does, and so
    does every command of a game with clocks (deadlines start at it). Otherwise the decision
    is the same with or without it (tests/test_clocks.py), and the service does not stamp it:
    a copy of the command, per command, for nothing."""
    return isinstance(command, cmd.Timeout) or clocks.has_clocks(state.options)


def _decision(state: GameState, command: cmd.Command) -> Decision:
    """The decision of ``command``, with the deadlines it sets (R12); ``IllegalCommand``
    ``bad_timeout`` for a timeout without its side or time."""
    d = Decision(state)
    if isinstance(command, cmd.Timeout):
        if command.side is None or command.at_ms is None:
            raise IllegalCommand("bad_timeout", "A timeout names the late side and the time.")
        if state.phase is Phase.OVER:
            raise IllegalCommand("game_over", "The game is over.")
        _timeout(d, command.side, command.at_ms, command.seed)
        return d
    _judge(d, command)
    if command.at_ms is not None:
        absent = {f: t for f, t in d.state.absent_since.items() if f != command.side}
        clocks.schedule(d, command.at_ms, absent)
    return d


def decide(state: GameState, command: cmd.Command) -> list[ev.Event]:
    """The events ``command`` produces in ``state`` (``command.side`` is the seat), or
    ``IllegalCommand``: ``execute`` without the state."""
    return execute(state, command)[0]
