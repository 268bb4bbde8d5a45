"""Setup (R2): sealed placements, the Random Setup variant, and the start of play."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from typing import Final

from . import events as ev
from .board import BOARD
from .characters import BY_NAME, FACTIONS, LEADER, PICKED_PER_SIDE, ROSTER, Faction
from .decision import Decision
from .errors import IllegalCommand
from .state import GameState, Options, Phase

CHALLENGE_RANGE: Final = range(-5, 6)


def create(options: Options, token_seed: int = 0) -> list[ev.Event]:
    """The first event of every game; the service draws ``token_seed`` at random (R7, D2).
    Raises ``IllegalCommand`` ``bad_challenge`` for a Challenge beyond −5…+5 (R2)."""
    if options.chthonian_honor not in CHALLENGE_RANGE:
        raise IllegalCommand("bad_challenge", "The Challenge adjustment must be from -5 to +5.")
    return [
        ev.GameCreated(
            open_combat=options.open_combat,
            random_setup=options.random_setup,
            chthonian_honor=options.chthonian_honor,
            token_seed=token_seed,
            move_seconds=options.move_seconds,
            commit_seconds=options.commit_seconds,
            forfeit_seconds=options.forfeit_seconds,
        )
    ]


@dataclass(frozen=True, slots=True)
class SetupRules:
    """What one side's sealed setup is made of (R2): ``count`` of its ``characters`` (R1 order),
    the ``leader`` always among them, each alone in a region of its realm (``regions``). The one
    source of both the checks of ``submit_setup`` and the options a seat is sent."""

    faction: Faction
    characters: tuple[str, ...]
    leader: str
    regions: tuple[int, ...]
    count: int


@cache
def setup_rules(faction: Faction) -> SetupRules:
    return SetupRules(
        faction,
        ROSTER[faction],
        LEADER[faction],
        BOARD.realm_regions(faction.realm),
        PICKED_PER_SIDE,
    )


def setup_options(state: GameState, faction: Faction) -> SetupRules | None:
    """The side's setup rules while it may submit its setup, else None (play has begun, the
    setup is drawn for both: Random Setup, or the side's is in already). Asked for every
    ``legal`` frame: the phase is looked at before the checks that raise."""
    if state.phase is not Phase.SETUP:
        return None
    try:
        _check_may_submit(state, faction)
    except IllegalCommand:
        return None
    return setup_rules(faction)


def check_placements(faction: Faction, placements: dict[str, int]) -> None:
    """Raise ``IllegalCommand`` unless ``placements`` is a setup ``faction`` may submit (R2):
    ``unknown_unit``, ``not_your_unit``, ``setup_count``, ``leader_missing``,
    ``outside_realm``, ``region_taken``."""
    rules = setup_rules(faction)
    for unit in placements:
        if unit not in BY_NAME:
            raise IllegalCommand("unknown_unit", f"There is no character called {unit!r}.")
        if unit not in rules.characters:
            raise IllegalCommand("not_your_unit", f"{unit} is not one of your characters.")
    if len(placements) != rules.count:
        raise IllegalCommand("setup_count", f"Pick exactly {rules.count} characters.")
    if rules.leader not in placements:
        raise IllegalCommand("leader_missing", f"{rules.leader} must always be picked.")
    for unit, region in placements.items():
        if region not in rules.regions:
            raise IllegalCommand("outside_realm", f"{unit} must start in your own realm.")
    if len(set(placements.values())) != len(placements):
        raise IllegalCommand("region_taken", "Each character starts in a region of its own.")


def random_placements(rng: random.Random, faction: Faction) -> dict[str, int]:
    """R2 Random Setup: the leader in or next to its base, 8 others in distinct regions."""
    leader = LEADER[faction]
    others = rng.sample([u for u in ROSTER[faction] if u != leader], PICKED_PER_SIDE - 1)
    near_base = sorted({faction.base} | BOARD.neighbours(faction.base))
    placements = {leader: rng.choice(near_base)}
    free = [r for r in BOARD.realm_regions(faction.realm) if r != placements[leader]]
    placements.update(zip(others, rng.sample(free, len(others)), strict=True))
    return placements


def _begin_play(d: Decision) -> None:
    d.emit(ev.SetupRevealed())
    d.emit(ev.TurnStarted(faction=Faction.CHTHONIANS, number=1))


def _check_setup_phase(state: GameState) -> None:
    if state.phase is not Phase.SETUP:
        raise IllegalCommand("wrong_phase", "The setup is over.")


def _check_may_submit(state: GameState, faction: Faction) -> None:
    _check_setup_phase(state)
    if state.options.random_setup:
        raise IllegalCommand("random_setup", "This game uses Random Setup.")
    if faction in state.setups:
        raise IllegalCommand("already_submitted", "Your setup is already in.")


def submit(d: Decision, faction: Faction, placements: dict[str, int]) -> None:
    """A side's sealed setup (R2); play begins once both are in. Raises ``IllegalCommand``
    ``wrong_phase``, ``random_setup``, ``already_submitted``, or ``check_placements``'s."""
    _check_may_submit(d.state, faction)
    check_placements(faction, placements)
    d.emit(ev.SetupSubmitted(faction=faction, placements=dict(placements)))
    if len(d.state.setups) == 2:
        _begin_play(d)


def draw_random(d: Decision, seed: int) -> None:
    """Random Setup (R2) for both sides from ``seed``; play begins. Raises ``IllegalCommand``
    ``wrong_phase`` or ``not_random_setup``."""
    _check_setup_phase(d.state)
    if not d.state.options.random_setup:
        raise IllegalCommand("not_random_setup", "This game does not use Random Setup.")
    rng = random.Random(seed)
    d.emit(ev.RandomSetupDrawn(seed=seed))
    for faction in FACTIONS:
        d.emit(ev.SetupSubmitted(faction=faction, placements=random_placements(rng, faction)))
    _begin_play(d)
