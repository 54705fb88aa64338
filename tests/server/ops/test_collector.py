"""The garbage collector (``server.ops.collector``), each case that changes it in a process of
its own: the collector's settings and frozen objects belong to the whole process."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from typing import cast

import pytest
from procs import ROOT, scaled, until

from server.ops.collector import PacedCollector
from server.ops.metrics import Metrics
from server.transport.background import collector_loop
from server.transport.runtime import Runtime

_COUNT_COLLECTIONS = """
import collections, gc, sys
from server.ops.collector import PacedCollector, tune_collector

collections_by_generation = [0, 0, 0]
def count(phase, info):
    if phase == "stop":
        collections_by_generation[info["generation"]] += 1
"""

_IN_FLIGHT = _COUNT_COLLECTIONS + textwrap.dedent(
    """
    mode = sys.argv[1]
    paced = PacedCollector()
    if mode == "python":
        gc.collect()
        gc.freeze()
    elif mode == "paced":
        paced.start()
    else:
        tune_collector(int(mode))
    # what a server holds: its connections' state, long-lived
    held = [{"seat": i, "dice": [1, 2, 3]} for i in range(20_000)]
    if mode == "paced":
        paced.collect()  # (the paced server's first collection, once it holds them)
    else:
        gc.collect()
    gc.callbacks.append(count)
    # commands: each makes 3,000 objects (more than the young threshold of any supported
    # Python: 700, 2,000 on 3.13) that live while the next few commands run
    in_flight = collections.deque()
    for command in range(1_000):
        in_flight.append([[command] for _ in range(3_000)])
        if len(in_flight) > 4:
            in_flight.popleft()
        if mode == "paced":
            paced.tick()  # as the server's loop does
    print(*collections_by_generation)
    """
)

_CYCLES = _COUNT_COLLECTIONS + textwrap.dedent(
    """
    paced = PacedCollector(floor=1_000)
    paced.start()
    gc.callbacks.append(count)
    def make_cycles(n):
        for _ in range(n):  # garbage only the collector can free
            cycle = []
            cycle.append(cycle)
    make_cycles(500)
    below = paced.tick()
    make_cycles(2_500)
    print(below, sum(collections_by_generation), paced.collect() >= 3_000)
    """
)

_START_AND_RESTORE = textwrap.dedent(
    """
    import gc
    from server.ops.collector import PacedCollector, restore_collector, tune_collector

    pythons = (gc.isenabled(), gc.get_threshold())
    previous = PacedCollector().start()
    print(not gc.isenabled(), gc.get_freeze_count() > 1_000, gc.get_count()[0] < 700)
    restore_collector(previous)
    print((gc.isenabled(), gc.get_threshold()) == pythons, gc.get_freeze_count() == 0)
    previous = tune_collector(20_000)
    print(gc.isenabled(), gc.get_threshold() == (20_000, *pythons[1][1:]))
    restore_collector(previous)
    print((gc.isenabled(), gc.get_threshold()) == pythons)
    """
)


_FROZEN_SURVIVORS = textwrap.dedent(
    """
    import gc, weakref
    from server.ops.collector import PacedCollector

    paced = PacedCollector(floor=0)  # a full collection an hour after start-up's
    paced.start()
    class Node:
        pass
    node = Node()
    node.itself = node  # a cycle, alive at the first collection
    freed = weakref.ref(node)
    also_alive = Node()
    also_alive.itself = also_alive
    also_alive_freed = weakref.ref(also_alive)
    paced.collect()  # the first: node survives it, and is frozen
    print(paced.last_full, gc.get_freeze_count() > paced.start_up, paced.alive_after_last > 0)
    del node, also_alive  # both garbage now: node frozen, also_alive too
    again = Node()
    again.itself = again
    again_freed = weakref.ref(again)
    del again  # garbage made after the freeze
    paced.collect()  # the second walks only what was made since the first
    print(paced.last_full, freed() is None, again_freed() is None)
    paced.full_after_seconds = 0  # (the hour has passed)
    paced.collect()  # the third is full: everything unfrozen and walked
    print(paced.last_full, freed() is None, also_alive_freed() is None)
    """
)


def _run(script: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout.strip()


def _collections(mode: str) -> list[int]:
    return [int(n) for n in _run(_IN_FLIGHT, mode).split()]


def test_pythons_collector_walks_the_heap_for_work_in_flight() -> None:
    # with Python's thresholds the objects alive at each young collection are promoted and
    # counted as long-lived, so full collections of the whole heap follow
    young, middle, full = _collections("python")
    assert young > 100
    assert middle > 10
    assert full >= 1


def test_a_larger_young_threshold_makes_no_full_collection() -> None:
    assert _collections("50000")[2] == 0


def test_the_paced_collector_does_not_collect_for_work_in_flight() -> None:
    # the work in flight is freed by reference counting: nothing to collect, and no collection
    assert _collections("paced") == [0, 0, 0]


def test_the_paced_collector_collects_cycles_once_they_reach_its_allowance() -> None:
    # 500 cycles are below the allowance of 1,000 objects: not collected, and Python's
    # automatic collection does not run either; 3,000 are collected at the next tick
    assert _run(_CYCLES) == "False 0 True"


def test_start_freezes_start_up_and_turns_automatic_collection_off_until_restored() -> None:
    assert _run(_START_AND_RESTORE).splitlines() == [
        "True True True",
        "True True",
        "True True",
        "True",
    ]


def test_survivors_are_frozen_and_walked_again_only_by_every_full_collection() -> None:
    # the second collection does not walk the cycle frozen at the first (it stays), but
    # frees the one made after it; the third, an hour on, unfreezes and frees the rest
    assert _run(_FROZEN_SURVIVORS).splitlines() == [
        "False True True",
        "False False True",
        "True True True",
    ]


@pytest.mark.parametrize(
    ("alive", "allowance"), [(0, 100_000), (200_000, 100_000), (1_000_000, 250_000)]
)
def test_the_allowance_is_a_quarter_of_what_was_alive_and_at_least_the_floor(
    alive: int, allowance: int
) -> None:
    paced = PacedCollector()
    paced.alive_after_last = alive
    assert paced.allowance() == allowance


@pytest.fixture
def thawed() -> Iterator[None]:
    """A collection in this process freezes what survives it: walked again after the test."""
    yield
    gc.unfreeze()


@pytest.mark.usefixtures("thawed")
def test_each_collection_is_measured_for_the_metrics() -> None:
    metrics = Metrics()
    paced = PacedCollector(on_collect=metrics.collection)
    cycle: list[object] = []
    cycle.append(cycle)
    del cycle
    collected = paced.collect()
    assert collected >= 1
    assert paced.alive_after_last > 0
    assert paced.last_collected == collected
    assert paced.last_seconds > 0
    rendered = metrics.render().decode().splitlines()
    assert "yahtzee_gc_collection_seconds_count 1.0" in rendered
    assert f"yahtzee_gc_collection_seconds_sum {paced.last_seconds!r}" in rendered
    assert f"yahtzee_gc_collected_objects_total {float(collected)!r}" in rendered


@pytest.mark.usefixtures("thawed")
async def test_the_servers_loop_collects_once_due_and_logs_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="yahtzee.background")
    collector = PacedCollector(floor=0, full_after_seconds=0)  # due at once, and full
    # the runtime is read only when a tick fails (its error counters)
    task = collector_loop(cast(Runtime, None), collector)
    try:
        await until(lambda: collector.alive_after_last > 0, scaled(10.0), "a collection")
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    assert "garbage collection (full): " in caplog.text
