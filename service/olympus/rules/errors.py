"""Illegal commands: a stable machine-readable code and a sentence a player understands."""

from __future__ import annotations


class IllegalCommand(Exception):
    """Raised by ``decide`` when a command breaks the rules; nothing is appended."""

    def __init__(self, code: str, sentence: str) -> None:
        super().__init__(f"{code}: {sentence}")
        self.code = code
        self.sentence = sentence
