"""Players' display names (api.md, "Names"): chosen in the browser, no account behind them.

A name is shown to the opponent and the spectators, so it is checked here: 2–24 characters
once trimmed (inner runs of spaces become one), Latin letters (accents allowed), digits,
spaces and ``' . _ -``; and it may not pass for the computer opponent ("Computer", also spelt
with look-alike digits or accents, spaces or dots in between). Bad names are refused with
``bad_name`` or ``reserved_name`` and a sentence, and nothing is created or joined.
"""

from __future__ import annotations

import re
import unicodedata

from .lobby import LobbyError

MIN_LENGTH = 2
MAX_LENGTH = 24
PUNCTUATION = frozenset(" '._-")
RESERVED = ("computer",)  # the computer opponent's name (bots), in any spelling
# digits that pass for letters in an impersonation: C0mput3r
LOOKALIKES = str.maketrans("013457", "oieast")


def _allowed(char: str) -> bool:
    if char in PUNCTUATION or (char.isdigit() and char.isascii()):
        return True
    return char.isalpha() and unicodedata.name(char, "").startswith("LATIN ")


def skeleton(name: str) -> str:
    """The letters a reader sees: no accents, no case, no separators, digits read as letters."""
    bare = "".join(
        c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c)
    )
    return re.sub(r"[^a-z]", "", bare.casefold().translate(LOOKALIKES))


def check_name(name: str | None) -> str | None:
    """The name as stored and shown (None: no name), or ``LobbyError`` saying what is wrong."""
    if name is None:
        return None
    name = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", name)).strip()
    if not MIN_LENGTH <= len(name) <= MAX_LENGTH:
        raise LobbyError(
            422, "bad_name", f"A name has {MIN_LENGTH} to {MAX_LENGTH} characters."
        )
    if not all(_allowed(c) for c in name):
        raise LobbyError(
            422,
            "bad_name",
            "A name is made of letters, digits, spaces and the signs ' . _ - only.",
        )
    if any(word in skeleton(name) for word in RESERVED):
        raise LobbyError(
            422, "reserved_name", "That name is the computer opponent's: choose another."
        )
    return name
