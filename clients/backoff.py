"""Reconnect delays: exponential backoff with full jitter, capped.

Pure and deterministic when given a random source, so it is unit-tested without sleeping.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["Backoff"]


@dataclass(frozen=True)
class Backoff:
    """Delays ``initial * factor**n`` capped at ``maximum``, each scaled by a jitter in
    ``[1 - jitter, 1]`` so that many clients dropped by one restart do not return in lockstep."""

    initial: float = 0.1
    factor: float = 2.0
    maximum: float = 5.0
    jitter: float = 0.5

    def delays(self, rng: random.Random | None = None) -> Iterator[float]:
        """An endless sequence of delays in seconds."""
        rng = rng or random.Random()
        base = self.initial
        while True:
            scale = 1.0 - self.jitter * rng.random()
            yield min(base, self.maximum) * scale
            base = min(base * self.factor, self.maximum)
