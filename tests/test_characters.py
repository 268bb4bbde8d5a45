"""R1: the 24 characters' printed values."""

from olympus.rules.characters import BY_NAME, CHARACTERS, LEADER, ROSTER, Faction


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
