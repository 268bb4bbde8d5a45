"""A decision in the making: the events emitted so far and the state they lead to.

``decide`` handlers emit events one at a time; each is folded at once, so later rules see the
consequences of earlier ones (an elimination before the game-end check, a retreat before the
attacker's retreat regions). The events are the only output; the state is a by-product.
"""

from __future__ import annotations

from . import events as ev
from .endgame import outcome
from .evolve import evolve
from .state import GameState, Phase


class Decision:
    """The events a command has emitted so far (``events``), the state after each
    (``states``) and the last of them (``state``)."""

    __slots__ = ("events", "state", "states")

    def __init__(self, state: GameState) -> None:
        self.state = state  # the last of ``states`` (or the start): read by every rule
        self.events: list[ev.Event] = []
        self.states: list[GameState] = []  # the state after each event

    def emit(self, event: ev.Event) -> None:
        """Append ``event`` and fold it into ``state``."""
        self.events.append(event)
        self.state = evolve(self.state, event)
        self.states.append(self.state)

    @property
    def over(self) -> bool:
        return self.state.phase is Phase.OVER

    def check_end(self) -> bool:
        """R11: end the game if Honor or the board decide it (``endgame.outcome``, D13); True
        when the game is over."""
        if self.over:
            return True
        result = outcome(self.state)
        if result is not None:
            self.emit(ev.GameEnded(result=result[0], reason=result[1]))
        return self.over
