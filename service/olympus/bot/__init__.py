"""The computer opponent: a seat that searches, never an oracle.

``belief`` (what the seat knows, and worlds drawn from it), ``evaluation`` (a position's worth),
``policy`` (the playouts' moves), ``search`` (ISMCTS, decoupled at sealed commitments),
``levels`` (easy, normal, hard), ``player`` (the bots as seats), ``match`` (two players on the
rules alone) and ``worker`` (bots playing in the service's rooms over websockets).
"""

from .levels import LEVELS, Level
from .player import GreedyBot, Player, RandomBot, SeatBot
from .roster import make_player

__all__ = ["LEVELS", "GreedyBot", "Level", "Player", "RandomBot", "SeatBot", "make_player"]
