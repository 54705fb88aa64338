"""The one way a server loop waits before trying again, and the one bounded cache.

:class:`RetryPause` is redis-py's exponential backoff (the same the Redis clients use for their
own retries) behind a failure counter: a loop calls :meth:`RetryPause.wait` after a failure and
:meth:`RetryPause.reset` after a success. Pauses are capped low on purpose: the wait after Redis
is back is what clients see.

:class:`LRU` is a dict that keeps its ``maxsize`` most recently used entries (an ``OrderedDict``
underneath: C-speed moves on the hot path).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Generic, TypeVar

from redis.backoff import ExponentialBackoff

__all__ = ["LRU", "RetryPause"]

K = TypeVar("K")
V = TypeVar("V")


class RetryPause:
    """Growing pauses between tries: ``base``, 2 x ``base``, ... up to ``cap`` seconds."""

    __slots__ = ("_backoff", "failures")

    def __init__(self, base: float = 0.025, cap: float = 0.25) -> None:
        self._backoff = ExponentialBackoff(cap=cap, base=base)
        self.failures = 0

    def next_pause(self) -> float:
        """Count a failure; the pause to take before the next try."""
        self.failures += 1
        return float(self._backoff.compute(self.failures))

    async def wait(self) -> None:
        """Count a failure and take its pause."""
        await asyncio.sleep(self.next_pause())

    def reset(self) -> None:
        """A try succeeded: the next failure pauses ``base`` again."""
        self.failures = 0


class LRU(OrderedDict[K, V], Generic[K, V]):
    """At most ``maxsize`` entries; :meth:`put` drops the least recently used one beyond it and
    :meth:`touch` marks an entry used."""

    def __init__(self, maxsize: int) -> None:
        super().__init__()
        self.maxsize = maxsize

    def touch(self, key: K) -> V | None:
        """The value of ``key`` (None if absent), now the most recently used."""
        value = self.get(key)
        if value is not None:
            self.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        """Set ``key`` as the most recently used entry, dropping the oldest beyond ``maxsize``."""
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.maxsize:
            self.popitem(last=False)
