"""The concurrent-players (``--ccu``) and vs-computer (``--vs-computer``) scenarios: a ramp.

Both keep every room they opened playing at human pace (:mod:`clients.bench.crowd`) and add
rooms at each step of the ramp. A step is: open the rooms that bring the total to the step's
size, let them settle (``warmup_seconds``), then measure ``step_seconds``: commands/s, command ->
last delivery (to the last connection of the room), computer lateness, the server processes' and
Valkey's CPU (in cores: CPU seconds over wall seconds) and RSS, the bench process's own CPU (the
load generator: is it the limit?), errors and stream violations. A step *holds* when its p99
(command -> last delivery for ``--ccu``, computer lateness for ``--vs-computer``) is at most
100 ms with no error and no violation.

With ``--pin`` the server processes run on CPU 0, Valkey and the bench on CPU 1 (Linux
``sched_setaffinity``): the server's core utilisation per 1,000 users is then one core's, which
the report extrapolates, labelled as such, to the users one core would hold.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psutil

from clients.bench.crowd import (
    CCU_MIX,
    CrowdSink,
    HumanRoom,
    LobbyStream,
    MixShape,
    ThinkTime,
    connections_of,
    mix_for,
)
from clients.bench.pacing import LoopClock
from clients.bench.procs import ServerGroup
from clients.bench.report import BenchReport
from clients.bench.streams import LatencyHistogram
from clients.client import Client
from protocol import Encoding, FirstPlayer, Level

__all__ = ["CCU_TARGET", "LIMIT_MS", "ROOMS_TARGET", "CrowdOptions", "ccu", "vs_computer"]

LIMIT_MS = 100.0  # a step holds at p99 <= 100 ms, no error, no violation
CCU_TARGET = 25_000  # concurrent players per server process on one core (issue 30)
ROOMS_TARGET = 3_000  # rooms of 1 person + 3 computers per process, every move on time
USERS_PER_LOBBY_STREAM = 100  # one open lobby page per this many users
OPEN_BATCH = 25  # rooms opened at once
TABLE_TIMEOUT = 600.0  # seconds a first strategy table build may take on a slow machine
DRAIN_SECONDS = 15.0  # at the end, how long the last commands' events may take to arrive
GENERATOR_BUSY = 0.8  # the bench's own CPU (cores) above which it may be the limit


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


@dataclass
class _Crowd:
    """The rooms and lobby streams opened so far and the current step's sink."""

    group: ServerGroup
    opts: CrowdOptions
    rng: random.Random
    rooms: list[HumanRoom] = field(default_factory=list)
    lobbies: list[LobbyStream] = field(default_factory=list)
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    sink: CrowdSink = field(default_factory=CrowdSink)
    running: bool = True

    def url(self, index: int) -> str:
        return f"ws://127.0.0.1:{self.group.ports[index % len(self.group.ports)]}/ws"

    async def add_rooms(self, shapes: list[MixShape]) -> None:
        clock = LoopClock()
        first = len(self.rooms)
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
            port = self.group.ports[len(self.lobbies) % len(self.group.ports)]
            stream = LobbyStream("127.0.0.1", port)
            await stream.open()
            self.lobbies.append(stream)

    async def close(self, report: BenchReport) -> None:
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
        for room in self.rooms:
            report.violations += room.violations()
        for stream in self.lobbies:
            report.failures += stream.errors[:5]


# ---------------------------------------------------------------------------- pinning


def pin(group: ServerGroup) -> dict[str, Any]:
    """Server processes on CPU 0, Valkey and this bench on CPU 1 (what was done, for the
    report). A machine with fewer than 2 usable CPUs is left alone."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return {"pinned": False, "why": f"only {len(cpus)} CPU usable"}
    server_cpu, other_cpu = cpus[0], cpus[1]
    for proc in group.tree():
        with contextlib.suppress(psutil.Error):
            redis = any(n in proc.name().lower() for n in ("valkey", "redis"))
            proc.cpu_affinity([other_cpu if redis else server_cpu])
    os.sched_setaffinity(0, {other_cpu})
    return {"pinned": True, "server_cpu": server_cpu, "valkey_and_bench_cpu": other_cpu}


# ---------------------------------------------------------------------------- a step


def _own_cpu() -> float:
    times = psutil.Process().cpu_times()
    return float(times.user + times.system)


async def _measure(crowd: _Crowd, seconds: float) -> dict[str, Any]:
    """Measure the rooms as they play for ``seconds``: the step's figures."""
    loop = asyncio.get_running_loop()
    crowd.sink = sink = CrowdSink()
    violations_before = sum(r.violation_count() for r in crowd.rooms)
    lobby_before = sum(s.events for s in crowd.lobbies)
    lobby_errors_before = sum(len(s.errors) for s in crowd.lobbies)
    cost_before, driver_before, started = crowd.group.cost(), _own_cpu(), loop.time()
    machine_before = psutil.cpu_times()
    lag = LatencyHistogram()
    probe = asyncio.create_task(_loop_lag(lag))
    await asyncio.sleep(seconds)  # the measured window: the rooms play meanwhile
    probe.cancel()
    elapsed = loop.time() - started
    machine_busy = _busy(psutil.cpu_times()) - _busy(machine_before)
    cost = crowd.group.cost()
    spent = cost - cost_before
    driver = _own_cpu() - driver_before
    violations = sum(r.violation_count() for r in crowd.rooms) - violations_before
    lobby_errors = [e for s in crowd.lobbies for e in s.errors][lobby_errors_before:]
    errors = sink.errors + lobby_errors
    return {
        "seconds": elapsed,
        "commands": sink.commands,
        "commands_per_second": sink.commands / elapsed,
        "delivery_ms": sink.delivery.summary_ms(),
        "computer_moves_per_second": sink.computer_moves / elapsed,
        "computer_lateness_ms": sink.lateness.summary_ms(),
        "computer_moves_early": sink.early_moves,
        "lobby_events": sum(s.events for s in crowd.lobbies) - lobby_before,
        "lobby_events_since_open": sum(s.events for s in crowd.lobbies),
        "server_cores": spent.server_cpu / elapsed,
        "valkey_cores": spent.redis_cpu / elapsed,
        "generator_cores": driver / elapsed,
        "generator_may_be_the_limit": driver / elapsed > GENERATOR_BUSY,
        "generator_loop_lag_ms": lag.summary_ms(),
        # Every process of the machine: what the other tenants of a shared machine took.
        "machine_busy_cores": machine_busy / elapsed,
        "others_cores": max(0.0, machine_busy - spent.server_cpu - spent.redis_cpu - driver)
        / elapsed,
        "server_rss_bytes": cost.server_rss,
        "valkey_rss_bytes": cost.redis_rss,
        "generator_rss_bytes": int(psutil.Process().memory_info().rss),
        "errors": len(errors),
        "error_samples": errors[:5],
        "violations": violations,
        "load_average": list(psutil.getloadavg()),
    }


LAG_PROBE = 0.05  # seconds between the bench loop's lag probes


async def _loop_lag(into: LatencyHistogram) -> None:
    """How late the bench's own event loop wakes (a busy or starved generator delays every
    event it times): each probe's oversleep."""
    loop = asyncio.get_running_loop()
    while True:
        before = loop.time()
        await asyncio.sleep(LAG_PROBE)  # the probe's period, not synchronisation
        into.record(max(0.0, loop.time() - before - LAG_PROBE))


def _busy(times: Any) -> float:
    """CPU seconds the machine spent outside idle and iowait."""
    return float(sum(times) - times.idle - getattr(times, "iowait", 0.0))


def _settle() -> None:
    """What opening the rooms made lives to the end: out of the collector's sight, so that full
    collections in the measured window walk only what playing makes."""
    gc.collect()
    gc.freeze()


# ---------------------------------------------------------------------------- scenarios


async def _warm_table(url: str, opts: CrowdOptions) -> float:
    """Play until a computer (instant pace) has moved: its strategy table is then loaded (or
    built, the first time on this machine). Returns the seconds it took."""
    loop = asyncio.get_running_loop()
    began = loop.time()
    client = Client(url, encoding=opts.encoding, reconnect=False, client_name="yahtzee-bench")
    await client.connect()
    try:
        created = await client.create_room(
            seats=2, computers=[opts.level], computer_delay_ms=0,
            first_player=FirstPlayer.SEAT_ORDER, public=False,
        )  # fmt: skip
        await client.join(created.room, "Warmup", invite_code=created.invite_code)
        await client.start()
        async with asyncio.timeout(TABLE_TIMEOUT):
            await client.wait_for(lambda m: m.current_player == client.player)
        await client.leave()
    finally:
        await client.close()
    return loop.time() - began


async def _ramp(
    crowd: _Crowd,
    targets: list[int],
    shapes_for: Callable[[int], list[MixShape]],
    held: Callable[[dict[str, Any]], bool],
    describe: Callable[[dict[str, Any]], dict[str, Any]],
    progress: Callable[[str], None],
) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for target in targets:
        shapes = shapes_for(target)
        progress(f"step {target}: opening {len(shapes)} rooms")
        await crowd.add_rooms(shapes)
        users = connections_of(crowd.rooms)
        await crowd.add_lobbies(max(1, users // USERS_PER_LOBBY_STREAM))
        _settle()
        await asyncio.sleep(crowd.opts.warmup_seconds)  # let the new rooms reach their pace
        progress(f"step {target}: measuring {crowd.opts.step_seconds:.0f} s")
        figures = await _measure(crowd, crowd.opts.step_seconds)
        step = {"step": target, **describe(figures), **figures}
        step["held"] = held(step)
        steps.append(step)
        progress(_step_line(step))
    return steps


def _step_line(step: dict[str, Any]) -> str:
    return (
        f"step {step['step']}: {step['users']} users, {step['commands_per_second']:.0f} cmd/s, "
        f"p99 {step['delivery_ms']['p99']:.1f} ms, lateness p99 "
        f"{step['computer_lateness_ms']['p99']:.1f} ms, cores: server {step['server_cores']:.2f} "
        f"Valkey {step['valkey_cores']:.2f} bench {step['generator_cores']:.2f} "
        f"others {step['others_cores']:.2f}, bench loop lag p99 "
        f"{step['generator_loop_lag_ms']['p99']:.1f} ms, "
        f"errors {step['errors']}, violations {step['violations']}"
    )


def _population(crowd: _Crowd) -> dict[str, Any]:
    rooms = crowd.rooms
    return {
        "rooms": len(rooms),
        "users": connections_of(rooms),
        "people": sum(r.shape.people for r in rooms),
        "spectators": sum(r.shape.spectators for r in rooms),
        "computers": sum(r.shape.computers for r in rooms),
        "lobby_streams": len(crowd.lobbies),
        "games_started": sum(r.games for r in rooms),
    }


def _quiet(step: dict[str, Any]) -> bool:
    return bool(step["errors"] == 0 and step["violations"] == 0)


async def ccu(
    group: ServerGroup, opts: CrowdOptions, report: BenchReport, progress: Callable[[str], None]
) -> None:
    """``--ccu N1,N2,...``: users in the mixed rooms of :data:`~clients.bench.crowd.CCU_MIX`."""
    crowd = _Crowd(group, opts, random.Random(opts.seed))
    result: dict[str, Any] = {"options": _options(opts), "mix": _mix()}
    report.ccu = result
    try:
        result["pinning"] = pin(group) if opts.pin else {"pinned": False}
        result["table_warmup_seconds"] = await _warm_table(crowd.url(0), opts)

        def shapes_for(users: int) -> list[MixShape]:
            missing = users - connections_of(crowd.rooms)
            return mix_for(missing, first=len(crowd.rooms)) if missing > 0 else []

        def held(step: dict[str, Any]) -> bool:
            # nobody played (--think beyond the step): nothing was held, only connections
            played = step["commands"] > 0
            return bool(played and step["delivery_ms"]["p99"] <= LIMIT_MS and _quiet(step))

        result["steps"] = await _ramp(
            crowd, opts.steps, shapes_for, held, lambda _: _population(crowd), progress
        )
    finally:
        await crowd.close(report)
    result["summary"] = ccu_summary(result["steps"], pinned=result["pinning"]["pinned"])


async def vs_computer(
    group: ServerGroup, opts: CrowdOptions, report: BenchReport, progress: Callable[[str], None]
) -> None:
    """``--vs-computer R1,R2,...``: rooms of 1 person + 3 computers at the computers' pace."""
    crowd = _Crowd(group, opts, random.Random(opts.seed))
    result: dict[str, Any] = {"options": _options(opts)}
    report.vs_computer = result
    try:
        result["pinning"] = pin(group) if opts.pin else {"pinned": False}
        result["table_warmup_seconds"] = await _warm_table(crowd.url(0), opts)

        def shapes_for(rooms: int) -> list[MixShape]:
            return [MixShape(1, computers=3)] * max(0, rooms - len(crowd.rooms))

        def held(step: dict[str, Any]) -> bool:
            played = step["computer_moves_per_second"] > 0
            return bool(played and step["computer_lateness_ms"]["p99"] <= LIMIT_MS and _quiet(step))

        result["steps"] = await _ramp(
            crowd, opts.steps, shapes_for, held, lambda _: _population(crowd), progress
        )
    finally:
        await crowd.close(report)
    result["summary"] = rooms_summary(result["steps"])


def _options(opts: CrowdOptions) -> dict[str, Any]:
    return {
        "steps": opts.steps,
        "step_seconds": opts.step_seconds,
        "warmup_seconds": opts.warmup_seconds,
        "think_seconds": [opts.think.low, opts.think.high],
        "computer_level": opts.level.value,
        "computer_delay_ms": opts.computer_delay_ms,
        "pin": opts.pin,
        "encoding": opts.encoding.value,
        "users_per_lobby_stream": USERS_PER_LOBBY_STREAM,
    }


def _mix() -> list[dict[str, int]]:
    return [
        {"people": s.people, "computers": s.computers, "spectators": s.spectators} for s in CCU_MIX
    ]


# ---------------------------------------------------------------------------- summaries


def ccu_summary(steps: list[dict[str, Any]], *, pinned: bool) -> dict[str, Any]:
    """The largest step held, the server's cores per 1,000 users there, and the users one
    server core would hold by linear extrapolation (an estimate, labelled so)."""
    held = [s for s in steps if s["held"]]
    best = max(held, key=lambda s: s["users"]) if held else None
    summary: dict[str, Any] = {
        "limit_ms": LIMIT_MS,
        "target_users_per_process": CCU_TARGET,
        "largest_users_held": best["users"] if best else 0,
        "met_measured": bool(best and best["users"] >= CCU_TARGET),
    }
    if best and best["server_cores"] > 0:
        per_1000 = best["server_cores"] / best["users"] * 1000
        summary["server_cores_per_1000_users"] = per_1000
        summary["extrapolated_users_per_server_core"] = {
            "value": 1000 / per_1000,
            "label": "EXTRAPOLATION: linear in users from the largest step held"
            + ("" if pinned else " (server not pinned to one core)"),
            "at_least_target": 1000 / per_1000 >= CCU_TARGET,
        }
    return summary


def rooms_summary(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """The largest number of rooms whose computers all moved on time, and the extrapolation."""
    held = [s for s in steps if s["held"]]
    best = max(held, key=lambda s: s["rooms"]) if held else None
    summary: dict[str, Any] = {
        "limit_ms": LIMIT_MS,
        "target_rooms_per_process": ROOMS_TARGET,
        "largest_rooms_held": best["rooms"] if best else 0,
        "met_measured": bool(best and best["rooms"] >= ROOMS_TARGET),
    }
    if best and best["server_cores"] > 0:
        per_room = best["server_cores"] / best["rooms"]
        summary["server_cores_per_100_rooms"] = per_room * 100
        summary["extrapolated_rooms_per_server_core"] = {
            "value": 1 / per_room,
            "label": "EXTRAPOLATION: linear in rooms from the largest step held",
            "at_least_target": 1 / per_room >= ROOMS_TARGET,
        }
    return summary
