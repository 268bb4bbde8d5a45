"""R1: the 24 characters' printed values."""

from itertools import pairwise

from olympus.rules.characters import BY_NAME, CHARACTERS, LEADER, ROSTER, Faction
from olympus.rules.powers import POWERS, group_powers, powers_of


def test_r1_table():
    assert len(CHARACTERS) == 24
    assert all(len(ROSTER[f]) == 12 for f in Faction)
    strengths = {c.name: c.strength for c in CHARACTERS}
    assert strengths == {
        "Zeus": 5, "Hera": 2, "Athena": 3, "Aphrodite": 1, "Dionysus": 3, "Apollo": 3,
        "Hermes": 3, "Ares": 3, "Poseidon": 5, "Artemis": 3, "Hephaestus": 3, "Demeter": 2,
        "Hades": 5, "Persephone": 2, "Cerberus": 5, "Cronus": 6, "Hecate": 2, "Hypnos": 2,
        "Erinyes": 3, "Moirae": 2, "Harpies": 2, "Thanatos": 4, "Charon": 2, "Nyx": 3,
    }  # fmt: skip
    not_male = {"Hera", "Artemis", "Athena", "Demeter", "Cerberus", "Hecate", "Nyx", "Erinyes",
                "Moirae", "Harpies", "Persephone", "Aphrodite"}  # fmt: skip
    assert {c.name for c in CHARACTERS if not c.male} == not_male
    assert {c.name for c in CHARACTERS if c.flier} == {"Apollo", "Harpies"}
    assert {c.name for c in CHARACTERS if c.leader} == {"Zeus", "Hades"}
    assert LEADER == {Faction.OLYMPIANS: "Zeus", Faction.CHTHONIANS: "Hades"}
    # the rulebook's implied strengths: Charon + Cronus = 8, Hermes + Poseidon = 8
    assert BY_NAME["Charon"].strength + BY_NAME["Cronus"].strength == 8
    assert BY_NAME["Hermes"].strength + BY_NAME["Poseidon"].strength == 8


def test_powers_of_a_unit_alone_is_its_part_of_any_group():
    """``powers_of`` keeps a unit's answer under its name and a group's under the tuple of its
    units: however asked (a tuple, a list), around other groups' questions, a unit's powers
    at a hook are those a group of it and another lists for it."""
    names = [c.name for c in CHARACTERS]
    for hook in (None, "honor_penalty", "uses_power_on_move", "styx_free", "flies"):
        for a, b in zip(names, names[1:] + names[:1], strict=True):
            pair = powers_of((a, b), hook)
            alone = powers_of((a,), hook)
            assert powers_of([a], hook) is alone
            assert alone == tuple(p for p in pair if p.unit == a)
            assert len(alone) <= 1 and all(p.unit == a for p in alone)


def test_a_groups_powers_are_its_answers_to_each_hook() -> None:
    """``group_powers`` answers once per group what moving it asks of ``powers_of``, a hook at
    a time, and the flier is the power of a unit alone (only a single flier may fly)."""
    names = [c.name for c in CHARACTERS]
    for group in [*((n,) for n in names), *pairwise(names)]:
        powers = group_powers(group)
        assert group_powers(tuple(list(group))) is powers  # an equal tuple, another object
        assert powers.honor_penalty == powers_of(group, "honor_penalty")
        assert powers.uses_power_on_move == powers_of(group, "uses_power_on_move")
        assert powers.takes_extra_steps == powers_of(group, "takes_extra_steps")
        assert powers.flier is (POWERS.get(group[0]) if len(group) == 1 else None)
    assert [p.unit for p in group_powers(("Hermes",)).takes_extra_steps] == ["Hermes"]
