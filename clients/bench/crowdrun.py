"""The crowd a ``--ccu`` or ``--vs-computer`` step drives (:class:`Crowd`, from
:class:`CrowdOptions`) and what one load-generator process measures of it in a window
(:class:`Window`, :func:`client_window`). Used by the ramp (:mod:`clients.bench.ccu`) and by
its child generator processes (:mod:`clients.bench.drivers`)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import random
from dataclasses import dataclass, field
from typing import Any

import psutil

from clients.bench.crowd import (
    CrowdSink,
    HumanRoom,
    LobbyStream,
    MixShape,
    ThinkTime,
)
from clients.bench.pacing import LoopClock
from clients.bench.streams import LatencyHistogram
from protocol import Encoding, Level


def settle_collector() -> None:
    """What opening a step's rooms made lives to the end: collected, then frozen out of the
    collector's sight, and automatic collection off until the next step settles it again, as
    the server runs (``server/ops/collector.py``). A collection of the young generation walks
    every object each connection made again since the last one (its read's future, its
    parser's generator, ...): at 10,000 users that stalled the generator's loop for tens of
    milliseconds every few seconds, and the latencies it measures would include them. The
    generator's own garbage cycles are few, and it runs for minutes."""
    gc.collect()
    gc.freeze()
    gc.disable()


__all__ = ["Crowd", "CrowdOptions", "Window", "client_window"]

OPEN_BATCH = 25  # rooms opened at once
LAG_PROBE = 0.05  # seconds between the bench loop's lag probes
DRAIN_SECONDS = 15.0  # at the end, how long the last commands' events may take to arrive


@dataclass
class CrowdOptions:
    """The shape of the ramp (``yahtzee bench --ccu`` / ``--vs-computer``)."""

    steps: list[int]  # users (--ccu) or rooms (--vs-computer) at each step
    step_seconds: float = 30.0
    warmup_seconds: float = 5.0
    think: ThinkTime = field(default_factory=ThinkTime)
    level: Level = Level.HARD
    computer_delay_ms: int = 900
    pin: bool = False
    encoding: Encoding = Encoding.MSGPACK
    seed: int = 30
    drivers: int = 1  # load-generator processes (this one and drivers - 1 children)

    def to_json(self) -> dict[str, Any]:
        """What a generator process needs to play its rooms like this one."""
        return {
            "think": [self.think.low, self.think.high], "level": self.level.value,
            "computer_delay_ms": self.computer_delay_ms, "encoding": self.encoding.value,
            "seed": self.seed,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CrowdOptions:
        return cls(
            steps=[], think=ThinkTime(*data["think"]), level=Level(data["level"]),
            computer_delay_ms=data["computer_delay_ms"], encoding=Encoding(data["encoding"]),
            seed=data["seed"],
        )  # fmt: skip


@dataclass
class Crowd:
    """The rooms and lobby streams opened so far and the current step's sink."""

    ports: list[int]
    opts: CrowdOptions
    rng: random.Random
    index_base: int = 0  # room labels of this process (several drivers: disjoint)
    rooms: list[HumanRoom] = field(default_factory=list)
    lobbies: list[LobbyStream] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    sink: CrowdSink = field(default_factory=CrowdSink)
    running: bool = True

    def url(self, index: int) -> str:
        return f"ws://127.0.0.1:{self.ports[index % len(self.ports)]}/ws"

    async def add_rooms(self, shapes: list[MixShape]) -> None:
        clock = LoopClock()
        first = self.index_base + len(self.rooms)
        for start in range(0, len(shapes), OPEN_BATCH):
            batch = [
                HumanRoom(
                    self.url(first + start + k), first + start + k, shape, clock,
                    lambda: self.sink, think=self.opts.think,
                    rng=random.Random(self.rng.random()), encoding=self.opts.encoding,
                    level=self.opts.level, computer_delay_ms=self.opts.computer_delay_ms,
                )
                for k, shape in enumerate(shapes[start : start + OPEN_BATCH])
            ]  # fmt: skip
            await asyncio.gather(*(room.open() for room in batch))
            self.rooms += batch
            self.tasks += [asyncio.create_task(room.play(lambda: self.running)) for room in batch]

    async def add_lobbies(self, total: int) -> None:
        while len(self.lobbies) < total:
            port = self.ports[len(self.lobbies) % len(self.ports)]
            stream = LobbyStream("127.0.0.1", port)
            await stream.open()
            self.lobbies.append(stream)

    async def close(self) -> tuple[list[str], list[str]]:
        """Stop playing, let the last events arrive, close; (violations, lobby errors)."""
        self.running = False
        # The last commands' events still on their way are not lost ones: let them arrive.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + DRAIN_SECONDS
        while any(r.outstanding for r in self.rooms) and loop.time() < deadline:
            self.sink.notify.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.sink.notify.wait(), deadline - loop.time())
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        await asyncio.gather(*(s.close() for s in self.lobbies), return_exceptions=True)
        await asyncio.gather(*(r.close() for r in self.rooms), return_exceptions=True)
        violations = [v for room in self.rooms for v in room.violations()]
        return violations, [e for stream in self.lobbies for e in stream.errors[:5]]


def _own_cpu() -> float:
    times = psutil.Process().cpu_times()
    return float(times.user + times.system)


@dataclass
class Window:
    """What one load-generator process saw in a measured window (several are merged)."""

    sink: CrowdSink = field(default_factory=CrowdSink)
    lag: LatencyHistogram = field(default_factory=LatencyHistogram)
    violations: int = 0
    lobby_events: int = 0
    lobby_events_since_open: int = 0
    cpu: float = 0.0  # CPU seconds of the generator process(es)
    rss: int = 0
    processes: int = 1

    def merge(self, other: Window) -> None:
        mine, theirs = self.sink, other.sink
        mine.delivery.add(theirs.delivery)
        mine.lateness.add(theirs.lateness)
        mine.commands += theirs.commands
        mine.computer_moves += theirs.computer_moves
        mine.early_moves += theirs.early_moves
        mine.errors += theirs.errors
        self.lag.add(other.lag)
        self.violations += other.violations
        self.lobby_events += other.lobby_events
        self.lobby_events_since_open += other.lobby_events_since_open
        self.cpu += other.cpu
        self.rss += other.rss
        self.processes += other.processes

    def to_json(self) -> dict[str, Any]:
        sink = self.sink
        return {
            "delivery": sink.delivery.to_json(), "lateness": sink.lateness.to_json(),
            "lag": self.lag.to_json(), "commands": sink.commands,
            "computer_moves": sink.computer_moves, "early_moves": sink.early_moves,
            "errors": sink.errors[:20], "violations": self.violations,
            "lobby_events": self.lobby_events,
            "lobby_events_since_open": self.lobby_events_since_open,
            "cpu": self.cpu, "rss": self.rss,
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Window:
        sink = CrowdSink(
            delivery=LatencyHistogram.from_json(data["delivery"]),
            lateness=LatencyHistogram.from_json(data["lateness"]),
            commands=data["commands"], computer_moves=data["computer_moves"],
            errors=list(data["errors"]), early_moves=data["early_moves"],
        )  # fmt: skip
        return cls(
            sink, LatencyHistogram.from_json(data["lag"]), data["violations"],
            data["lobby_events"], data["lobby_events_since_open"], data["cpu"], data["rss"],
        )  # fmt: skip


async def client_window(crowd: Crowd, seconds: float) -> Window:
    """This process's rooms as they play for ``seconds``: what its connections saw."""
    crowd.sink = sink = CrowdSink()
    violations_before = sum(r.violation_count() for r in crowd.rooms)
    lobby_before = sum(s.events for s in crowd.lobbies)
    lobby_errors_before = sum(len(s.errors) for s in crowd.lobbies)
    cpu_before = _own_cpu()
    lag = LatencyHistogram()
    probe = asyncio.create_task(_loop_lag(lag))
    await asyncio.sleep(seconds)  # the measured window: the rooms play meanwhile
    probe.cancel()
    sink.errors += [e for s in crowd.lobbies for e in s.errors][lobby_errors_before:]
    return Window(
        sink=sink,
        lag=lag,
        violations=sum(r.violation_count() for r in crowd.rooms) - violations_before,
        lobby_events=sum(s.events for s in crowd.lobbies) - lobby_before,
        lobby_events_since_open=sum(s.events for s in crowd.lobbies),
        cpu=_own_cpu() - cpu_before,
        rss=int(psutil.Process().memory_info().rss),
    )


async def _loop_lag(into: LatencyHistogram) -> None:
    """How late the bench's own event loop wakes (a busy or starved generator delays every
    event it times): each probe's oversleep."""
    loop = asyncio.get_running_loop()
    while True:
        before = loop.time()
        await asyncio.sleep(LAG_PROBE)  # the probe's period, not synchronisation
        into.record(max(0.0, loop.time() - before - LAG_PROBE))
