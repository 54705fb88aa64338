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
(``gc.DEBUG_SAVEALL``). Garbage in cycles came from connections closing (467,000 objects when
that step's 10,000 connections closed; since the twentieth session a closed connection is freed
by reference counting) and comes from rare paths (an exception's traceback).

So automatic collection is off while the server serves. :class:`PacedCollector` runs a
collection itself once the collector's count (container objects made net of those freed, which
every object in a garbage cycle adds to) has grown by ``growth`` of what was alive after the
last collection, at least ``floor``: Python's own rule for its oldest generation, without the
young and middle collections in between. Garbage stays bounded the same way. The same
10,000-user step, 2 interleaved pairs: p99 15 and 18 ms against 106 and 72 ms, p99.9 41 and
44 ms against 259 and 260 ms, and no collection in its 60 s.

A collection stops the loop about 0.6 us for each object it walks. Walking the whole heap each
time, the collections while 10,000 users connected stopped it from 37 ms to 511 ms (nineteenth
session), then 108 to 810 ms in one run of the twentieth, as the heap grew to its steady
800,000 objects; the 810 ms one fell in the measured minute (p99 1,233 ms). So what survives a
collection is frozen (``gc.freeze``): the next one walks only what was made since (and the
waiting state each connection touched since has made again, about 24 objects each: the
freed ones were frozen, their replacements are not). The same ramp: 23 to 228 and 49 to 235
ms (2 runs, against 108 to 810 and 135 to 574). Once the ramp is over the count grows by
140 to 220 objects a second while the solver's plan cache fills (1,024 plans), then by about 6
a second at 10,000 users: the next collection is hours away.
A garbage cycle among frozen objects (an object alive at one collection that becomes part of an
unreachable cycle later) is not found until the next full collection, which unfreezes
everything first: the first collection after ``full_after_seconds`` (an hour) since the last
full one, not while many players connect after a restart. Closed connections leave no such
cycles (their objects are freed by reference counting: :mod:`server.transport.coalesce`), so
what waits for a full collection comes from rare paths.

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
    gc.unfreeze()  # (what was frozen is walked again: a cycle among it can be freed)
    if previous.enabled:
        gc.enable()
    else:
        gc.disable()


@dataclass(slots=True)
class PacedCollector:
    """Automatic collection off; a collection when :meth:`due`, of what was made since the last
    one, and of everything once ``full_after_seconds`` have passed since the last full one (see
    the module docstring).

    ``on_collect(seconds, collected)`` is told of each collection (the metrics)."""

    growth: float = 0.25
    floor: int = 100_000
    full_after_seconds: float = 3600.0
    on_collect: Callable[[float, int], None] = lambda seconds, collected: None
    #: tracked objects alive after the last collection (start-up's are not counted)
    alive_after_last: int = field(default=0, init=False)
    #: how long the last collection stopped the loop, and the objects it found unreachable
    last_seconds: float = field(default=0.0, init=False)
    last_collected: int = field(default=0, init=False)
    #: whether the last collection walked every object, and when the last such one ran
    #: (``time.monotonic``; start-up's counts)
    last_full: bool = field(default=False, init=False)
    full_at: float = field(default_factory=time.monotonic, init=False)
    #: the objects start-up left frozen
    start_up: int = field(default=0, init=False)

    def start(self) -> CollectorState:
        """Freeze what start-up made and turn automatic collection off; returns what to
        restore."""
        previous = _freeze_start_up()
        gc.disable()
        self.start_up = gc.get_freeze_count()
        self.full_at = time.monotonic()
        return previous

    def allowance(self) -> int:
        """Net new container objects allowed before the next collection."""
        return max(self.floor, int(self.alive_after_last * self.growth))

    def due(self) -> bool:
        """Whether the objects made (net of those freed) since the last collection reached the
        allowance."""
        return gc.get_count()[0] >= self.allowance()

    def collect(self) -> int:
        """One collection now; returns the objects it found unreachable. What survives it is
        frozen: the next one walks only what is made after it, unless it is a full one (once
        ``full_after_seconds`` have passed since the last), which unfreezes everything first."""
        full = time.monotonic() - self.full_at >= self.full_after_seconds
        started = time.perf_counter()
        if full:
            gc.unfreeze()
        collected = gc.collect()
        gc.freeze()
        # (a walk of the frozen list too: counted in the stop)
        self.alive_after_last = max(0, gc.get_freeze_count() - self.start_up)
        seconds = time.perf_counter() - started
        self.last_full = full
        if full:
            self.full_at = time.monotonic()
        self.last_seconds, self.last_collected = seconds, collected
        self.on_collect(seconds, collected)
        return collected

    def tick(self) -> bool:
        """Collect if :meth:`due`; whether it did."""
        if not self.due():
            return False
        self.collect()
        return True
