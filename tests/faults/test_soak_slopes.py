"""The soak's memory slopes (tests/faults/soak.py): within one long life, and across the short
lives of a process that the chaos loop keeps killing."""

from __future__ import annotations

import math
import random
from pathlib import Path

from soak import Series


def lives(growth_within: float, growth_across: float) -> Series:
    """Four lives of 5 minutes each, sampled every 10 s: each starts at 100 + ``growth_across``
    per minute since the run's start and grows ``growth_within`` per minute while it lives."""
    series = Series()
    for life in range(4):
        start = life * 300.0
        for step in range(30):
            t = start + step * 10
            series.add(life, t, 100 + growth_across * start / 60 + growth_within * step / 6)
    return series


def test_a_process_that_warms_up_in_every_life_but_does_not_leak_is_flat_across_lives() -> None:
    series = lives(growth_within=50.0, growth_across=0.0)
    within, _ = series.slope_per_minute(0, 60, 1200)
    across, covered = series.slope_across_restarts(0, 60, 1200)
    assert math.isclose(within, 50.0)  # the warm-up, which the pooled slope sees
    assert math.isclose(across, 0.0, abs_tol=1e-9)
    assert math.isclose(covered, 15.0)  # first life's window to the last one's: 3 x 5 minutes
    assert series.restarts == 3


def test_a_leak_that_outlives_the_process_shows_across_its_lives() -> None:
    series = lives(growth_within=50.0, growth_across=8.0)
    across, _ = series.slope_across_restarts(0, 60, 1200)
    assert math.isclose(across, 8.0)


def test_one_life_has_no_slope_across_lives() -> None:
    series = Series()
    for step in range(30):
        series.add("only", step * 10.0, 100 + step)
    across, covered = series.slope_across_restarts(0, 60, 1200)
    assert math.isnan(across)
    assert covered == 0.0
    assert math.isclose(series.slope_per_minute(0, 60, 1200)[0], 6.0)


def test_redis_is_judged_across_its_lives_like_a_restarted_process(tmp_path: Path) -> None:
    # on the Cluster every master failover starts a life of the nodes' memory: a replica's
    # full sync refills buffers in each, which the pooled slope within lives would call a leak
    from soak import SingleRedis, Soak, parse

    options = parse(["--minutes", "20", "--warmup", "0", "--workdir", str(tmp_path)])
    soak = Soak(options, SingleRedis(tmp_path), random.Random(0))
    soak.redis_memory = lives(growth_within=5000.0, growth_across=0.0)
    assert math.isclose(soak.slopes()["redis"], 0.0, abs_tol=1e-9)
    assert math.isclose(soak.warmup_slopes()["redis"], 5000.0)
    soak.redis_memory = lives(growth_within=5000.0, growth_across=600.0)
    assert math.isclose(soak.slopes()["redis"], 600.0)
