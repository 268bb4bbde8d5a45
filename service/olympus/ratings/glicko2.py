"""Glicko-2 (Mark E. Glickman, "Example of the Glicko-2 system"): a rating, its deviation and
its volatility, updated from the results of one rating period.

Each rated game is a rating period of its own for both players, as online game sites rate
(the player's rating before the game, one result): ``rate(player, [Outcome(opponent,
score)])``. A period without games only widens the deviation (``rate(player, [])``); so does
time without games, in periods or fractions of one (``idle``). Pure functions of their
arguments; the scale is Glicko's (1500 for a new player, deviation 350).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SCALE = 173.7178  # Glicko's scale over Glicko-2's (400 / ln 10)
TAU = 0.5  # the system constant: how much the volatility may change in a period (0.3-1.2)
EPSILON = 1e-6  # the convergence tolerance of the volatility's iteration


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's rating ``r``, its deviation ``rd`` (one standard deviation: the player's
    strength lies within r ± 2 rd with 95 % confidence) and volatility ``sigma``."""

    r: float = 1500.0
    rd: float = 350.0
    sigma: float = 0.06


DEFAULT = Rating()


@dataclass(frozen=True, slots=True)
class Outcome:
    """One game of the period: the opponent's rating before it, and the player's ``score``:
    1 a win, 0.5 a draw, 0 a loss."""

    opponent: Rating
    score: float


def _g(phi: float) -> float:
    return 1 / math.sqrt(1 + 3 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1 / (1 + math.exp(-_g(phi_j) * (mu - mu_j)))


def rate(player: Rating, games: Sequence[Outcome], tau: float = TAU) -> Rating:
    """The player's rating after a period of ``games`` (steps 2-8 of the paper).
    ``ValueError`` for a score outside [0, 1] or a deviation not above 0."""
    if player.rd <= 0 or any(o.opponent.rd <= 0 for o in games):
        raise ValueError("a rating deviation is above 0")
    if any(not 0 <= o.score <= 1 for o in games):
        raise ValueError("a score is 1 (a win), 0.5 (a draw) or 0 (a loss)")
    mu, phi = (player.r - 1500) / SCALE, player.rd / SCALE
    if not games:  # step 6 alone: the deviation grows with the volatility
        return Rating(player.r, math.sqrt(phi * phi + player.sigma**2) * SCALE, player.sigma)
    terms = []
    for game in games:
        mu_j, phi_j = (game.opponent.r - 1500) / SCALE, game.opponent.rd / SCALE
        terms.append((_g(phi_j), _expected(mu, mu_j, phi_j), game.score))
    v = 1 / sum(g * g * e * (1 - e) for g, e, _ in terms)  # step 3
    improvement = sum(g * (s - e) for g, e, s in terms)
    delta = v * improvement  # step 4
    sigma = _volatility(phi, player.sigma, v, delta, tau)  # step 5
    phi_star = math.sqrt(phi * phi + sigma * sigma)  # step 6
    phi_new = 1 / math.sqrt(1 / (phi_star * phi_star) + 1 / v)  # step 7
    mu_new = mu + phi_new * phi_new * improvement
    return Rating(SCALE * mu_new + 1500, SCALE * phi_new, sigma)  # step 8


def idle(player: Rating, periods: float) -> Rating:
    """The rating after ``periods`` rating periods without games (step 6 of the paper for
    each: the deviation's square on Glicko-2's scale grows by the volatility's square a
    period, by its share for a fraction of one), its deviation at most a new player's
    (``DEFAULT.rd``, or the player's own if wider). ``ValueError`` for ``periods`` below 0."""
    if periods < 0:
        raise ValueError("a time without games is not negative")
    # on Glicko's scale (φ² + t σ² times SCALE²): no time gives the deviation back exactly
    widened = math.sqrt(player.rd**2 + periods * (player.sigma * SCALE) ** 2)
    return Rating(player.r, min(widened, max(player.rd, DEFAULT.rd)), player.sigma)


def _volatility(phi: float, sigma: float, v: float, delta: float, tau: float) -> float:
    """Step 5: the new volatility, by the Illinois algorithm on f(x) = 0."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta**2 - phi**2 - v - ex) / (2 * (phi**2 + v + ex) ** 2) - (x - a) / tau**2

    low = a
    if delta**2 > phi**2 + v:
        high = math.log(delta**2 - phi**2 - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        high = a - k * tau
    f_low, f_high = f(low), f(high)
    while abs(high - low) > EPSILON:
        c = low + (low - high) * f_low / (f_high - f_low)
        f_c = f(c)
        if f_c * f_high <= 0:
            low, f_low = high, f_high
        else:
            f_low /= 2
        high, f_high = c, f_c
    return math.exp(low / 2)
