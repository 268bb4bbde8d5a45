"""The rules of Storm over Olympus as pure functions: ``decide``, ``evolve``, ``legal_actions``.

Nothing here does I/O, reads a clock or draws a random number: randomness and time enter only
through commands and the events they produce.

``COMPILED`` says whether the modules run compiled by mypyc (``olympus.native``) or as source.
"""

from ..native import runs_compiled
from . import powers as _powers
from .board import BOARD, PALACE, TARTARUS, Realm
from .characters import BY_NAME, CHARACTERS, Faction
from .combat import removal_outcomes, strength_terms
from .commands import Command, parse_command
from .decide import decide, execute, execute_steps, reads_time
from .errors import IllegalCommand
from .events import Event, decode, encode
from .evolve import evolve, replay
from .legal import (
    further_steps,
    legal_actions,
    list_legal,
    lists_nothing,
    random_legal_action,
    waiting_reason,
)
from .listing import LegalAction, Listing
from .resignation import ABORTED, may_abort, may_resign
from .setup import SetupRules, create, random_placements, setup_options
from .state import GameState, Maneuver, Options, Phase

# Where the package's modules came from (its subpackage ``powers`` too): olympus.native chose
# it before this module ran.
COMPILED = runs_compiled(__path__)

_powers._load_characters()  # after the core modules: the powers hook into them

__all__ = [
    "ABORTED",
    "BOARD",
    "BY_NAME",
    "CHARACTERS",
    "COMPILED",
    "PALACE",
    "TARTARUS",
    "Command",
    "Event",
    "Faction",
    "GameState",
    "IllegalCommand",
    "LegalAction",
    "Listing",
    "Maneuver",
    "Options",
    "Phase",
    "Realm",
    "SetupRules",
    "create",
    "decide",
    "decode",
    "encode",
    "evolve",
    "execute",
    "execute_steps",
    "further_steps",
    "legal_actions",
    "list_legal",
    "lists_nothing",
    "may_abort",
    "may_resign",
    "parse_command",
    "random_legal_action",
    "random_placements",
    "reads_time",
    "removal_outcomes",
    "replay",
    "setup_options",
    "strength_terms",
    "waiting_reason",
]
