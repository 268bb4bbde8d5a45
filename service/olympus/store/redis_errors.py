"""Redis's failures as the store's own error tree (records.py): nothing of redis-py crosses
into the service or the computer's worker.

Every failure of Redis to answer, or a refusal the store did not expect, becomes
``StoreUnavailable``: the operation may or may not have taken effect, and the caller may ask
again (appends name their command id, so asking again is safe).
"""

from __future__ import annotations

from redis.exceptions import RedisClusterException, RedisError

from .failures import translating
from .records import EventStoreError, StoreUnavailable

# What redis-py raises when Redis cannot answer: a lost or refused connection, a timeout, a
# failover under way (CLUSTERDOWN, TRYAGAIN), an error reply.
REDIS_FAILURES = (RedisError, RedisClusterException, OSError)



def store_error(error: BaseException) -> BaseException:
    """``error`` as the store raises it: the store's own errors as they are, a failure of
    Redis as ``StoreUnavailable`` (its cause kept in ``__cause__``), anything else unchanged."""
    if isinstance(error, EventStoreError) or not isinstance(error, REDIS_FAILURES):
        return error
    translated = StoreUnavailable(f"Redis did not answer: {error!r}")
    translated.__cause__ = error
    return translated


# A coroutine method raising ``store_error`` of what it raises.
translated = translating(REDIS_FAILURES, store_error)
