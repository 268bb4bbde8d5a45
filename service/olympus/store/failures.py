"""A storage library's failures as the store's own errors (records.py), for the methods of a
backend: what every backend's translation shares (redis_errors.py, postgres_archive.py)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")
Method = Callable[P, Coroutine[Any, Any, T]]


def translating(
    failures: tuple[type[BaseException], ...], translate: Callable[[BaseException], BaseException]
) -> Callable[[Method[P, T]], Method[P, T]]:
    """A decorator of coroutine methods: what they raise of ``failures`` is raised as
    ``translate`` of it (the original kept as its ``__cause__``)."""

    def decorate(method: Method[P, T]) -> Method[P, T]:
        @functools.wraps(method)
        async def call(*args: P.args, **kwargs: P.kwargs) -> T:
            try:
                return await method(*args, **kwargs)
            except failures as error:
                raise translate(error) from error

        return call

    return decorate
