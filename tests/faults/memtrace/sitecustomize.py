"""Memory tracing for one soak server process (``soak.py --trace-memory``).

Python imports ``sitecustomize`` at start-up from the first ``sys.path`` entry that has one; the
soak puts this folder first on ``PYTHONPATH`` of process A only. With ``SOAK_MEMTRACE_DIR`` set,
it starts :mod:`tracemalloc`, takes a baseline snapshot after ``SOAK_MEMTRACE_WARMUP`` seconds
and then, every ``SOAK_MEMTRACE_EVERY`` seconds, writes what grew since the baseline, grouped by
traceback and by line, to ``growth-<seconds>.txt`` in that folder (and the traced total to
``traced.tsv``). A daemon thread does it: the server's code is not touched.
"""

from __future__ import annotations

import os
import threading
import time
import tracemalloc
from pathlib import Path

_IGNORED = (
    tracemalloc.Filter(False, tracemalloc.__file__),
    tracemalloc.Filter(False, "<frozen importlib._bootstrap>"),
    tracemalloc.Filter(False, "<frozen importlib._bootstrap_external>"),
)


def _snapshot() -> tracemalloc.Snapshot:
    return tracemalloc.take_snapshot().filter_traces(_IGNORED)


def _write_growth(folder: Path, age: int, base: tracemalloc.Snapshot) -> None:
    now = _snapshot()
    lines = [f"# {age} s after start; traced {tracemalloc.get_traced_memory()}"]
    for key in ("traceback", "lineno"):
        lines.append(f"\n## by {key}, top 30 by growth since the baseline\n")
        for stat in now.compare_to(base, key)[:30]:
            lines.append(f"{stat.size_diff / 1024:+10.1f} KiB {stat.count_diff:+8d} blocks")
            frames = stat.traceback.format(limit=8 if key == "traceback" else 1)
            lines.extend("      " + frame for frame in frames)
    (folder / f"growth-{age:05d}.txt").write_text("\n".join(lines) + "\n")


def _trace(folder: Path, warmup: float, every: float) -> None:
    started = time.monotonic()
    time.sleep(warmup)
    base = _snapshot()
    while True:
        time.sleep(every)
        age = int(time.monotonic() - started)
        current, peak = tracemalloc.get_traced_memory()
        with (folder / "traced.tsv").open("a") as out:
            out.write(f"{age}\t{current}\t{peak}\n")
        _write_growth(folder, age, base)


def _start() -> None:
    folder = os.environ.get("SOAK_MEMTRACE_DIR")
    if not folder:
        return
    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    tracemalloc.start(int(os.environ.get("SOAK_MEMTRACE_FRAMES", "10")))
    warmup = float(os.environ.get("SOAK_MEMTRACE_WARMUP", "600"))
    every = float(os.environ.get("SOAK_MEMTRACE_EVERY", "300"))
    threading.Thread(target=_trace, args=(path, warmup, every), daemon=True).start()


_start()
