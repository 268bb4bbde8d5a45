"""The computer opponent: a seat that searches, never an oracle.

``belief`` (what the seat knows, and worlds drawn from it), ``evaluation`` (a position's worth),
``policy`` (the playouts' moves), ``search`` (ISMCTS, decoupled at sealed commitments),
``levels`` (easy, normal, hard), ``player`` (the bots as seats), ``yardsticks`` (players
outside the search's family), ``analysis`` (the coach's judgement of a finished game). It
knows the rules and nothing of the service: a game between two players on the rules alone is
``olympus.arena``'s, the bots in the service's rooms ``olympus.bots_worker``'s.
"""

from .levels import LEVELS, Level
from .player import GreedyBot, Player, RandomBot, SeatBot
from .roster import make_player

__all__ = ["LEVELS", "GreedyBot", "Level", "Player", "RandomBot", "SeatBot", "make_player"]
