"""Players' ratings: Glicko-2 (glicko2.py), pure functions of ratings and results."""

from olympus.ratings.glicko2 import DEFAULT, Outcome, Rating, idle, rate

__all__ = ["DEFAULT", "Outcome", "Rating", "idle", "rate"]
