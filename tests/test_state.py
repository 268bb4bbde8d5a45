"""The state's own helpers give what ``dataclasses.replace`` gives."""

from dataclasses import fields, replace

from olympus.rules import Faction
from olympus.rules.state import Combat, Commitment, Maneuver


def test_a_combat_copied_with_other_commitments_keeps_every_other_field() -> None:
    """``Combat.with_commitments`` spells its fields out (compiled, it is called for every
    commitment and round): a field added and not passed on would fail here."""
    sealed = {Faction.OLYMPIANS: Commitment(Maneuver.CHASE, 2)}
    combat = Combat(7, Faction.CHTHONIANS, None, 3, sealed)
    assert {f.name for f in fields(Combat)} == {
        "region",
        "attacker",
        "origin",
        "round",
        "commitments",
    }, "a new field: pass it on in with_commitments, then add it here"
    assert combat.with_commitments({}) == replace(combat, commitments={})
    assert combat.with_commitments({}, 4) == replace(combat, round=4, commitments={})
    assert combat.with_commitments(sealed).commitments is sealed
