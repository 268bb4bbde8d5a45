"""What a seat may know (R7): the redacted view of a state and of each event.

A seat sees its own units in full, the enemy's as tokens on regions with the names of revealed
units, every eliminated unit, and nothing sealed by the opponent (a setup, a commitment) until it
is revealed, except a commitment the rules let it see (Athena, Open Combat). A spectator
(``seat=None``) sees what a neutral onlooker sees. Once the game is over, everyone sees all.

Everything here is built from public facts and the seat's own: token numbers, orderings and
sizes never depend on a hidden identity (tokens are drawn by public order or the secret seed).
"""

from __future__ import annotations

from typing import Any, Final

from . import events as ev
from .characters import BY_NAME, FACTIONS, Faction
from .combat import sees_commitment
from .state import GameState, Phase

Seat = Faction | None
View = dict[str, Any]

# Each unit's side as views name it, read once: an enum's ``value`` is a property written in
# Python, and every view and every move's event asks it of each unit it shows.
_SIDE: Final = {name: character.faction.value for name, character in BY_NAME.items()}


def _knows(state: GameState, seat: Seat, unit: str) -> bool:
    """Whether ``seat`` may know who ``unit`` is."""
    return (
        state.phase is Phase.OVER
        or unit in state.revealed
        or (seat is not None and BY_NAME[unit].faction is seat)
    )


def _unit(state: GameState, seat: Seat, unit: str) -> View:
    known = _knows(state, seat, unit)
    entry: View = {
        "side": _SIDE[unit],
        "token": state.tokens[unit],
        "region": state.positions[unit],
        "name": unit if known else None,
    }
    if (seat is not None and BY_NAME[unit].faction is seat) or state.phase is Phase.OVER:
        entry["revealed"] = unit in state.revealed  # what the enemy knows of this unit
    return entry


def _shown_order(entry: View) -> tuple[str, int, int]:
    """Units are shown by side, region and token: public facts, whoever they are (R7)."""
    return (entry["side"], entry["region"], entry["token"])


def _units(state: GameState, seat: Seat, units: tuple[str, ...] | list[str]) -> list[View]:
    entries = [_unit(state, seat, u) for u in units]
    if len(entries) > 1:  # most events show one unit: nothing to order
        entries.sort(key=_shown_order)
    return entries


def _commitment(state: GameState, seat: Seat, faction: Faction) -> View | None:
    combat = state.combat
    if combat is None or faction not in combat.commitments:
        return None
    if (
        state.phase is Phase.OVER
        or faction is seat
        or (seat is not None and sees_commitment(state, seat))
    ):
        c = combat.commitments[faction]
        return {"maneuver": c.maneuver.value, "energy": c.energy}
    return None


def view(state: GameState, seat: Seat) -> View:
    """The whole position as ``seat`` may know it (JSON-able)."""
    data: View = {
        "phase": state.phase.value,
        "turn": state.turn.value,
        "turn_number": state.turn_number,
        "options": {
            "open_combat": state.options.open_combat,
            "random_setup": state.options.random_setup,
            "chthonian_honor": state.options.chthonian_honor,
        },
        "honor": {f.value: state.honor.get(f, 0) for f in FACTIONS},
        "energy": {f.value: state.energy.get(f, 0) for f in FACTIONS},
        "units": _units(state, seat, list(state.positions)),
        "eliminated": list(state.eliminated),
        "result": state.result,
        # R12: the running deadlines are public (ms since the epoch)
        "deadlines": {f: {"kind": d["kind"], "due": d["due"]} for f, d in state.deadlines.items()},
    }
    if seat is not None:
        data["picked"] = sorted(u for u in state.picked if BY_NAME[u].faction is seat)
    if state.phase is Phase.OVER:
        data["picked"] = sorted(state.picked)
    if state.phase is Phase.SETUP:
        data["setup"] = {
            "submitted": {f.value: f in state.setups for f in FACTIONS},
            "mine": dict(state.setups.get(seat, {})) if seat is not None else None,
        }
    if state.combat is not None:
        c = state.combat
        data["combat"] = {
            "region": c.region,
            "attacker": c.attacker.value,
            "origin": c.origin,
            "round": c.round,
            "committed": {f.value: f in c.commitments for f in FACTIONS},
            "commitments": {f.value: _commitment(state, seat, f) for f in FACTIONS},
        }
    if state.pending:
        step = state.pending[0]
        data["pending"] = {
            "kind": step.kind.value,
            "side": step.faction.value,
            "region": step.region,
        }
    return data


def _tokens(state: GameState, units: tuple[str, ...]) -> list[int]:
    return sorted(state.tokens[u] for u in units)


def observe_event(
    event: ev.Event,
    seat: Seat,
    before: GameState,
    after: GameState,
    data: View | None = None,
) -> View | None:
    """The event as ``seat`` receives it, or None when it has nothing to learn from it.

    ``before``/``after`` are the states around the event. Whether an event is sent depends on
    public facts only, so the count of a seat's messages never tells a secret. ``data``, if
    given, is ``ev.to_dict(event)`` made once for every audience (the room observes each event
    for three): never changed, and returned itself when ``seat`` sees the event as it is (most
    events, most audiences: the room then packs it once), so not to be changed by the caller.
    """
    if isinstance(event, ev.RandomSetupDrawn):
        return None
    data = ev.to_dict(event) if data is None else data
    seen = _seen(event, seat, before, after)
    if not seen:
        return data
    shown = dict(data)
    for key, value in seen.items():
        if value is _HIDDEN:
            del shown[key]
        else:
            shown[key] = value
    return shown


# A field ``_seen`` leaves out of what the seat receives.
_HIDDEN: Final = object()


def _seen(event: ev.Event, seat: Seat, before: GameState, after: GameState) -> View:
    """What ``seat`` receives of ``event`` in place of its fields (``_HIDDEN``: nothing);
    empty when it sees the event as it is."""
    if isinstance(event, ev.GameCreated):
        return {"token_seed": _HIDDEN}
    if isinstance(event, ev.SetupSubmitted):
        return {} if seat is event.faction else {"placements": _HIDDEN}
    if isinstance(event, ev.SetupRevealed):
        return {"units": _units(after, seat, list(after.positions))}
    if isinstance(event, ev.CombatCommitted):
        if seat is not event.faction and not (seat is not None and sees_commitment(after, seat)):
            return {"maneuver": _HIDDEN, "energy": _HIDDEN}
        return {}
    if isinstance(event, ev.UnitsRevealed):
        return {"units": _units(after, seat, event.units)}
    if isinstance(event, ev.UnitsHidden):
        return {"units": _units(after, seat, event.units), "tokens": _HIDDEN}
    if isinstance(event, (ev.UnitsMoved, ev.UnitsRetreated)):  # a tuple: a union is made per call
        return {"units": _units(after, seat, event.units)}
    if isinstance(event, ev.LeaderSucceeded):
        if event.leader is not None and not _knows(after, seat, event.leader):
            return {"leader": None}  # R7: the successor's existence is not news to the enemy
        return {}
    if isinstance(event, ev.UnitEliminated):
        return {"token": before.tokens.get(event.unit)}
    return {}
