"""Players' passwords: Argon2id (RFC 9106) by argon2-cffi, hashed and verified on a small pool
of threads, never on the event loop: a burst of sign-ins waits its turn there while games go on.
The hash runs in C without Python's lock, and its threads run at a lower priority than the
event loop's (``NICENESS``: Linux gives a thread a priority of its own), so that on a busy box
the games' commands go first and a sign-in waits (docs/performance.md, "Players").

The cost is OWASP's for Argon2id, 19 MiB of memory, 2 passes, one lane: about 15-20 ms of one
core here (docs/operations.md, "Players"). Verifying against an account that does not exist
runs the same hash against a hash made at start (``verify_unknown``), so that a failed
sign-in takes as long whether or not the name exists.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from concurrent.futures import ThreadPoolExecutor

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

NICENESS = 10  # the hash threads' (the event loop's is 0): about a tenth of its share of a core
MIN_LENGTH = 8
MAX_LENGTH = 128  # characters; a longer one would only cost the hash more
_HASHER = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)


class Passwords:
    """Hashes and checks passwords on ``threads`` threads of their own."""

    def __init__(self, threads: int = 2) -> None:
        self._pool = ThreadPoolExecutor(
            threads, thread_name_prefix="argon2", initializer=_lower_priority
        )
        self._decoy = _HASHER.hash("a password nobody has")

    async def _run(self, function: object, *args: str) -> object:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, function, *args)  # type: ignore[arg-type]

    async def hash(self, password: str) -> str:
        """The Argon2id hash of ``password`` (with a fresh salt), in PHC's string form."""
        hashed = await self._run(_HASHER.hash, password)
        assert isinstance(hashed, str)
        return hashed

    async def verify(self, hashed: str, password: str) -> bool:
        """Whether ``password`` is the one ``hashed`` was made of."""
        return bool(await self._run(_check, hashed, password))

    async def verify_unknown(self, password: str) -> bool:
        """As ``verify`` against no account: the same work, always False."""
        await self._run(_check, self._decoy, password)
        return False

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _lower_priority() -> None:
    """This thread's niceness raised to ``NICENESS`` (Linux; elsewhere nothing)."""
    with contextlib.suppress(AttributeError, OSError):
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICENESS)


def _check(hashed: str, password: str) -> bool:
    try:
        return _HASHER.verify(hashed, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False
