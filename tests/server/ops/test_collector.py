"""The garbage collector's tuning (``server.ops.collector``), each case in a process of its own:
the collector's thresholds and frozen objects belong to the whole process."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from procs import ROOT

_IN_FLIGHT = textwrap.dedent(
    """
    import collections, gc, sys
    from server.ops.collector import tune_collector

    if sys.argv[1] == "python":
        gc.collect()
        gc.freeze()
    else:
        tune_collector(int(sys.argv[1]))
    # what a server holds: its connections' state, long-lived
    held = [{"seat": i, "dice": [1, 2, 3]} for i in range(50_000)]
    full = []
    gc.callbacks.append(
        lambda phase, info: phase == "stop" and info["generation"] == 2 and full.append(1)
    )
    # commands: each makes 3,000 objects (more than the young threshold of any supported
    # Python: 700, 2,000 on 3.13) that live while the next few commands run
    in_flight = collections.deque()
    for command in range(1_000):
        in_flight.append([[command] for _ in range(3_000)])
        if len(in_flight) > 4:
            in_flight.popleft()
    print(len(full))
    """
)

_CYCLES = textwrap.dedent(
    """
    import gc
    from server.ops.collector import tune_collector

    tune_collector(1_000)
    collected = []
    gc.callbacks.append(lambda phase, info: phase == "stop" and collected.append(info["collected"]))
    for _ in range(3_000):  # garbage only the collector can free
        cycle = []
        cycle.append(cycle)
    del cycle
    print(sum(collected))
    """
)

_SETTINGS = textwrap.dedent(
    """
    import gc
    from server.ops.collector import tune_collector

    pythons = gc.get_threshold()
    previous = tune_collector(20_000)
    print(previous == pythons, gc.get_threshold() == (20_000, *pythons[1:]),
          gc.get_freeze_count() > 1_000)
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


def test_work_in_flight_no_longer_makes_full_collections() -> None:
    # with Python's thresholds the objects alive at each young collection are promoted and
    # counted as long-lived, so full collections of the whole heap follow; tuned, none
    assert int(_run(_IN_FLIGHT, "python")) >= 3
    assert int(_run(_IN_FLIGHT, "50000")) == 0


def test_cycles_are_still_collected_without_being_asked() -> None:
    assert int(_run(_CYCLES)) >= 2_000


def test_start_up_is_frozen_and_the_young_threshold_set() -> None:
    assert _run(_SETTINGS) == "True True True"
