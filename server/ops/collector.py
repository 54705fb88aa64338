"""The cyclic garbage collector, run by the server at its own pace.

CPython collects its young generation whenever a few hundred more container objects were made
than freed. A young collection looks at every object made since the last one that is still
alive. In a server that is not the work in flight only: every connection's waiting state (its
read's coroutines and future, its parser's generator, its ping timer, the lists its WebSocket
library swaps at each frame) is made again at each message it reads or writes, so the young
generation holds about 24 objects for each connection touched since the last collection.

Measured in ``bench --ccu 10000`` (about 950,000 objects made by serving) with the young
threshold at 50,000: a young collection every 1 to 6 s, one of them holding 236,000 objects,
each stopping the loop 20 to 140 ms, and every tenth a middle collection stopping it 180 to
340 ms. **Every command in flight waits that long**: the step's p99.9 was 200 to 260 ms. None
of those collections found garbage, because the protocol's objects are freed by reference
counting: in 40 s of steady play at 10,000 users a collection found **no** garbage at all
(``gc.DEBUG_SAVEALL``). Garbage in cycles comes from connections closing (467,000 objects when
that step's 10,000 connections closed) and from rare paths (an exception's traceback).

So automatic collection is off while the server serves. :class:`PacedCollector` runs a full
collection itself once the collector's count (container objects made net of those freed, which
every object in a garbage cycle adds to) has grown by ``growth`` of what was alive after the
last collection, at least ``floor``: Python's own rule for its oldest generation, without the
young and middle collections in between. Garbage stays bounded the same way. The loop stops
only for those full collections, about 0.6 us an object: while 10,000 users connected, 7 of
them, from 37 ms to 511 ms as the heap grew to its steady 800,000 objects. Its count then
grew by 140 to 220 objects a second while the solver's plan cache filled (1,024 plans), then
by about 6 a second (twentieth session): the next collection is hours away. The same
10,000-user step, 2 interleaved pairs: p99 15 and 18 ms against 106 and 72 ms, p99.9 41 and
44 ms against 259 and 260 ms, and no collection in its 60 s.

What start-up made (modules, settings, the runtime, the solver's tables) lives as long as the
process and is frozen out of the collector's sight first. ``YAHTZEE_GC_YOUNG_THRESHOLD``
(:func:`tune_collector`) keeps Python's automatic collection with a larger young threshold
instead, as the server ran before.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["CollectorState", "PacedCollector", "restore_collector", "tune_collector"]

#: How often :meth:`PacedCollector.tick` is called by the server (one ``gc.get_count`` each).
CHECK_SECONDS = 1.0


@dataclass(frozen=True, slots=True)
class CollectorState:
    """The process's collector settings before the server changed them (to put them back)."""

    enabled: bool
    thresholds: tuple[int, int, int]


def _freeze_start_up() -> CollectorState:
    """Collect, then move every object alive now out of the collector's sight."""
    previous = CollectorState(gc.isenabled(), gc.get_threshold())
    gc.collect()
    # What start-up made lives as long as the process: frozen, a collection walks only what
    # serving made.
    gc.freeze()
    return previous


def tune_collector(young_threshold: int) -> CollectorState:
    """Python's automatic collection with the young generation let grow to ``young_threshold``
    objects (the older generations keep Python's thresholds); start-up frozen first."""
    previous = _freeze_start_up()
    _, middle, old = previous.thresholds
    gc.set_threshold(young_threshold, middle, old)
    return previous


def restore_collector(previous: CollectorState) -> None:
    """Put back the settings :func:`tune_collector` or :meth:`PacedCollector.start` replaced
    (in-process tests: the next app starts afresh)."""
    gc.set_threshold(*previous.thresholds)
    if previous.enabled:
        gc.enable()
    else:
        gc.disable()


@dataclass(slots=True)
class PacedCollector:
    """Automatic collection off; a full collection when :meth:`due` (see the module docstring).

    ``on_collect(seconds, collected)`` is told of each collection (the metrics)."""

    growth: float = 0.25
    floor: int = 100_000
    on_collect: Callable[[float, int], None] = lambda seconds, collected: None
    #: tracked objects alive after the last collection (start-up's are frozen, not counted)
    alive_after_last: int = field(default=0, init=False)
    #: how long the last collection stopped the loop, and the objects it found unreachable
    last_seconds: float = field(default=0.0, init=False)
    last_collected: int = field(default=0, init=False)

    def start(self) -> CollectorState:
        """Freeze what start-up made and turn automatic collection off; returns what to
        restore."""
        previous = _freeze_start_up()
        gc.disable()
        return previous

    def allowance(self) -> int:
        """Net new container objects allowed before the next collection."""
        return max(self.floor, int(self.alive_after_last * self.growth))

    def due(self) -> bool:
        """Whether the objects made (net of those freed) since the last collection reached the
        allowance."""
        return gc.get_count()[0] >= self.allowance()

    def collect(self) -> int:
        """One full collection now; returns the objects it found unreachable."""
        started = time.perf_counter()
        collected = gc.collect()
        seconds = time.perf_counter() - started
        self.alive_after_last = len(gc.get_objects())
        self.last_seconds, self.last_collected = seconds, collected
        self.on_collect(seconds, collected)
        return collected

    def tick(self) -> bool:
        """Collect if :meth:`due`; whether it did."""
        if not self.due():
            return False
        self.collect()
        return True
