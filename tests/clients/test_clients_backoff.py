"""Reconnect delays."""

from __future__ import annotations

import itertools
import random

from clients.backoff import Backoff


def test_delays_grow_then_stay_capped() -> None:
    delays = list(itertools.islice(Backoff(jitter=0).delays(), 8))
    assert delays == [0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0]


def test_jitter_scales_each_delay_down_by_at_most_the_jitter() -> None:
    backoff = Backoff(initial=1.0, factor=1.0, maximum=1.0, jitter=0.5)
    delays = list(itertools.islice(backoff.delays(random.Random(7)), 100))
    assert all(0.5 <= d <= 1.0 for d in delays)
    assert len(set(delays)) > 50
