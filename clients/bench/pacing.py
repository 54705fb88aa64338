"""How commands are paced: closed loop and open loop, on a clock that tests can fake.

A *room* is driven by one task that sends its commands one after the other (a Yahtzee room has one
player on turn; the bare rooms copy that shape). Closed loop: the next command goes as soon as
the previous one is acked, and latency is counted from the real send. Open loop: the k-th command
of a room is *intended* at ``start + offset + k / rate``; if the room is still busy then, it goes
late, and its latency still counts from the intended time. So queueing in the server shows in the
figures instead of silently lowering the offered rate (coordinated omission). Commands intended
before the end of the round but not sent by the drain deadline are recorded with the latency they
had reached then (a lower bound) and counted as ``unsent``.

A room whose game ended sets up the next one (everyone leaves; create, spectate, join, start: a
dozen commands in a row, outside the measured stream). In open loop the time that takes moves the
room's schedule on instead of counting against its next commands: the set-up is not part of any
measured command. (Counted, it was the p99 of the low-rate rounds: the rooms start together and
play alike, so they all set up their next game within the same second, and each set-up made the
next two or three commands of its room late by its whole length.) Lateness the room had before
the set-up still counts.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

__all__ = [
    "Clock",
    "LoopClock",
    "Pace",
    "Prepare",
    "Step",
    "closed_loop",
    "open_loop",
    "run_generator",
]

T = TypeVar("T")


def run_generator(main: Coroutine[Any, Any, T]) -> T:
    """Run a load generator's ``main`` on uvloop where it is installed (``uvicorn[standard]``
    brings it on Linux and macOS, as it does for the server), else on asyncio's own loop.

    The generator's loop is part of what it measures: every delivery it times waits for its
    loop's turn, and it shares the machine's cores with the server. On uvloop it needs about
    8 % less CPU for the same step (eighteenth session, 2 pairs at 9,000 users)."""
    try:
        import uvloop
    except ImportError:  # Windows, PyPy: asyncio's loop
        return asyncio.run(main)
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main)


class Clock(Protocol):
    def now(self) -> float: ...

    async def sleep_until(self, when: float) -> None: ...


class LoopClock:
    """Real time (``time.perf_counter``)."""

    def now(self) -> float:
        return time.perf_counter()

    async def sleep_until(self, when: float) -> None:
        delay = when - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)


Step = Callable[[float], Awaitable[float]]
"""Send one command meant for ``intended`` (a time of the clock); return when it was acked."""
Prepare = Callable[[], Awaitable[float | None]]
"""Get a room ready for its next command (a new game, the player on turn up to date); returns
the seconds spent setting up a new game, if it did."""


@dataclass
class Pace:
    """What one room's driving task did in a round."""

    sent: int = 0
    unsent: int = 0


async def closed_loop(
    prepare: Prepare, step: Step, clock: Clock, end: float, record_ack: Callable[[float], None]
) -> Pace:
    """Send, wait for the ack, send again, until ``end``."""
    pace = Pace()
    while clock.now() < end:
        await prepare()
        sent_at = clock.now()
        acked = await step(sent_at)
        record_ack(acked - sent_at)
        pace.sent += 1
    return pace


async def open_loop(
    prepare: Prepare,
    step: Step,
    clock: Clock,
    *,
    start: float,
    interval: float,
    end: float,
    deadline: float,
    record_ack: Callable[[float], None],
    record_unsent: Callable[[float], None],
) -> Pace:
    """Commands intended every ``interval`` from ``start`` until ``end``; latency from intended.

    Stops sending at ``deadline`` (after ``end``: time to catch up); each command intended
    before ``end`` and not sent by then is passed to ``record_unsent`` with ``deadline -
    intended``, the least latency it would have had.
    """
    pace = Pace()
    k = 0
    setups = 0.0  # time spent setting up new games: the schedule moves on by it
    while (intended := start + setups + k * interval) < end:
        if clock.now() >= deadline:
            record_unsent(deadline - intended)
            pace.unsent += 1
        else:
            await clock.sleep_until(intended)
            setup = await prepare()
            if setup:
                setups += setup
                intended += setup
            acked = await step(intended)
            record_ack(acked - intended)
            pace.sent += 1
        k += 1
    return pace
