"""Players' sessions: signed cookies, revocable, and the CSRF token that goes with each.

A session cookie is ``s1.<account>.<generation>.<session>.<mac>``: HMAC-SHA256 under the
deployment's key (tokens.py's) binds the account, the account's session generation when it
was made and a random session id. It is refused when its generation is not the account's
current one (sign out everywhere bumps it: ``Players.bump_generation``) or its session was
signed out (``Players.end_session``): one read of the live store, as a seat token's check is.

Every state-changing request made with the cookie must carry its CSRF token in the
``X-CSRF-Token`` header: the HMAC of the session id under another label, which a page of
another site cannot read (the cookie is HttpOnly and SameSite=Lax, the token is given only in
answers to the player's own page).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

VERSION = "s1"
COOKIE = "olympus_session"
CSRF_HEADER = "x-csrf-token"
MAX_AGE = 30 * 24 * 3600  # seconds a session lasts
_SESSION = re.compile(r"^[A-Za-z0-9_-]{16,64}$")
_MAC_BYTES = 16


@dataclass(frozen=True, slots=True)
class SessionClaim:
    account_id: int
    generation: int
    session_id: str


def _mac(secret: bytes, label: str, message: str) -> str:
    digest = hmac.new(secret, f"{label}|{message}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:_MAC_BYTES]).rstrip(b"=").decode()


def new_claim(account_id: int, generation: int) -> SessionClaim:
    return SessionClaim(account_id, generation, secrets.token_urlsafe(18))


def sign(secret: bytes, claim: SessionClaim) -> str:
    body = f"{VERSION}.{claim.account_id}.{claim.generation}.{claim.session_id}"
    return f"{body}.{_mac(secret, 'session', body)}"


def verify(secret: bytes, cookie: str | None) -> SessionClaim | None:
    """The claim of an authentic cookie (its generation and end are the caller's to check);
    None for none or a forged or malformed one."""
    parts = cookie.split(".") if cookie and len(cookie) <= 256 else []
    if len(parts) != 5 or parts[0] != VERSION:
        return None
    _, account, generation, session_id, mac = parts
    if not (account.isdigit() and generation.isdigit() and _SESSION.match(session_id)):
        return None
    if not hmac.compare_digest(mac, _mac(secret, "session", ".".join(parts[:4]))):
        return None
    return SessionClaim(int(account), int(generation), session_id)


def csrf_token(secret: bytes, claim: SessionClaim) -> str:
    """The CSRF token of the session: what its page sends in ``X-CSRF-Token``."""
    return _mac(secret, "csrf", claim.session_id)


def csrf_ok(secret: bytes, claim: SessionClaim, sent: str | None) -> bool:
    return sent is not None and hmac.compare_digest(sent, csrf_token(secret, claim))
