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
import os
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import psutil

from clients.bench.crowd import (
    CCU_MIX,
    MixShape,
    mix_for,
)
from clients.bench.crowdrun import Crowd, CrowdOptions, Window, client_window, settle_collector
from clients.bench.drivers import RemoteDriver
from clients.bench.procs import ServerGroup
from clients.bench.report import BenchReport
from clients.client import Client
from protocol import FirstPlayer

__all__ = [
    "CCU_TARGET",
    "LIMIT_MS",
    "ROOMS_TARGET",
    "Crowd",
    "CrowdOptions",
    "Window",
    "ccu",
    "client_window",
    "vs_computer",
]

LIMIT_MS = 100.0  # a step holds at p99 <= 100 ms, no error, no violation
CCU_TARGET = 25_000  # concurrent players per server process on one core (issue 30)
ROOMS_TARGET = 3_000  # rooms of 1 person + 3 computers per process, every move on time
USERS_PER_LOBBY_STREAM = 100  # one open lobby page per this many users
TABLE_TIMEOUT = 600.0  # seconds a first strategy table build may take on a slow machine
GENERATOR_BUSY = 0.8  # the bench's own CPU (cores) above which it may be the limit
#: the bench's own loop lag (p99, ms) above which its latencies include its own delay: a step
#: at 10,000 users missed with the server at 0.64 cores and the generator's loop lagging
GENERATOR_LAG_MS = 20.0


def generator_may_be_the_limit(cores_per_process: float, lag_p99_ms: float) -> bool:
    """Whether a step's figures may be the load generator's limit rather than the server's: a
    generator process near a whole core, or a loop so late that the latencies it measures
    carry its own delay."""
    return cores_per_process > GENERATOR_BUSY or lag_p99_ms > GENERATOR_LAG_MS


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


async def _measure(
    crowd: Crowd, group: ServerGroup, drivers: Sequence[RemoteDriver], seconds: float
) -> dict[str, Any]:
    """Measure the rooms of every generator process for ``seconds``: the step's figures."""
    loop = asyncio.get_running_loop()
    collections_before = await asyncio.to_thread(group.collections)
    cost_before, started, machine_before = group.cost(), loop.time(), psutil.cpu_times()
    windows = await asyncio.gather(
        client_window(crowd, seconds), *(d.measure(seconds) for d in drivers)
    )
    elapsed = loop.time() - started
    collections = await asyncio.to_thread(group.collections) - collections_before
    machine_busy = _busy(psutil.cpu_times()) - _busy(machine_before)
    cost = group.cost()
    spent = cost - cost_before
    window = windows[0]
    for other in windows[1:]:
        window.merge(other)
    sink, driver = window.sink, window.cpu
    lag = window.lag.summary_ms()
    return {
        "seconds": elapsed,
        "commands": sink.commands,
        "commands_per_second": sink.commands / elapsed,
        "delivery_ms": sink.delivery.summary_ms(),
        "computer_moves_per_second": sink.computer_moves / elapsed,
        "computer_lateness_ms": sink.lateness.summary_ms(),
        "computer_moves_early": sink.early_moves,
        "lobby_events": window.lobby_events,
        "lobby_events_since_open": window.lobby_events_since_open,
        "server_cores": spent.server_cpu / elapsed,
        "valkey_cores": spent.redis_cpu / elapsed,
        "generator_processes": window.processes,
        "generator_cores": driver / elapsed,
        # one process's share: a generator process is one loop on one core
        "generator_may_be_the_limit": generator_may_be_the_limit(
            driver / elapsed / window.processes, lag["p99"]
        ),
        "generator_loop_lag_ms": lag,
        # Every process of the machine: what the other tenants of a shared machine took.
        "machine_busy_cores": machine_busy / elapsed,
        "others_cores": max(0.0, machine_busy - spent.server_cpu - spent.redis_cpu - driver)
        / elapsed,
        # the server's full garbage collections in the window: each stopped its loop
        "server_collections": collections.count,
        "server_collection_seconds": collections.seconds,
        "server_rss_bytes": cost.server_rss,
        "valkey_rss_bytes": cost.redis_rss,
        "generator_rss_bytes": window.rss,
        "errors": len(sink.errors),
        "error_samples": sink.errors[:5],
        "violations": window.violations,
        "load_average": list(psutil.getloadavg()),
    }


def _busy(times: Any) -> float:
    """CPU seconds the machine spent outside idle and iowait."""
    return float(sum(times) - times.idle - getattr(times, "iowait", 0.0))


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


@dataclass
class _Generators:
    """This process's rooms (and the lobby streams) and those of the other generator
    processes (``--drivers``): rooms are dealt to them in turn."""

    group: ServerGroup
    crowd: Crowd
    drivers: list[RemoteDriver] = field(default_factory=list)
    shapes: list[MixShape] = field(default_factory=list)  # every room of every process

    @property
    def users(self) -> int:
        return sum(shape.users for shape in self.shapes)

    async def add_rooms(self, shapes: list[MixShape]) -> None:
        count = 1 + len(self.drivers)
        parts = [shapes[k::count] for k in range(count)]
        await asyncio.gather(
            self.crowd.add_rooms(parts[0]),
            *(d.grow(part) for d, part in zip(self.drivers, parts[1:], strict=True)),
        )
        self.shapes += shapes

    def population(self) -> dict[str, Any]:
        return {
            "rooms": len(self.shapes),
            "users": self.users,
            "people": sum(s.people for s in self.shapes),
            "spectators": sum(s.spectators for s in self.shapes),
            "computers": sum(s.computers for s in self.shapes),
            "lobby_streams": len(self.crowd.lobbies),
        }

    async def close(self, report: BenchReport) -> None:
        closed = await asyncio.gather(
            self.crowd.close(), *(d.close() for d in self.drivers), return_exceptions=True
        )
        for outcome in closed:
            if isinstance(outcome, BaseException):
                report.failures.append(f"a generator process: {outcome!r}")
            else:
                report.violations += outcome[0]
                report.failures += outcome[1]


async def _ramp(
    generators: _Generators,
    targets: list[int],
    shapes_for: Callable[[int], list[MixShape]],
    held: Callable[[dict[str, Any]], bool],
    progress: Callable[[str], None],
) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    opts = generators.crowd.opts
    for target in targets:
        shapes = shapes_for(target)
        progress(f"step {target}: opening {len(shapes)} rooms")
        await generators.add_rooms(shapes)
        await generators.crowd.add_lobbies(max(1, generators.users // USERS_PER_LOBBY_STREAM))
        settle_collector()
        await asyncio.sleep(opts.warmup_seconds)  # let the new rooms reach their pace
        progress(f"step {target}: measuring {opts.step_seconds:.0f} s")
        figures = await _measure(
            generators.crowd, generators.group, generators.drivers, opts.step_seconds
        )
        step = {"step": target, **generators.population(), **figures}
        step["held"] = held(step)
        steps.append(step)
        progress(_step_line(step))
    return steps


async def _start(group: ServerGroup, opts: CrowdOptions, result: dict[str, Any]) -> _Generators:
    """Pin (if asked), load the computers' table, start the other generator processes."""

    result["pinning"] = pin(group) if opts.pin else {"pinned": False}
    crowd = Crowd(group.ports, opts, random.Random(opts.seed))
    generators = _Generators(group, crowd)
    result["table_warmup_seconds"] = await _warm_table(crowd.url(0), opts)
    generators.drivers = list(
        await asyncio.gather(
            *(RemoteDriver.start(group.ports, opts, k) for k in range(1, opts.drivers))
        )
    )
    return generators


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


def _quiet(step: dict[str, Any]) -> bool:
    return bool(step["errors"] == 0 and step["violations"] == 0)


async def ccu(
    group: ServerGroup, opts: CrowdOptions, report: BenchReport, progress: Callable[[str], None]
) -> None:
    """``--ccu N1,N2,...``: users in the mixed rooms of :data:`~clients.bench.crowd.CCU_MIX`."""
    result: dict[str, Any] = {"options": _options(opts), "mix": _mix(), "pinning": {}}
    report.ccu = result
    generators: _Generators | None = None
    try:
        generators = await _start(group, opts, result)
        shapes = generators.shapes

        def shapes_for(users: int) -> list[MixShape]:
            missing = users - sum(shape.users for shape in shapes)
            return mix_for(missing, first=len(shapes)) if missing > 0 else []

        def held(step: dict[str, Any]) -> bool:
            # nobody played (--think beyond the step): nothing was held, only connections
            played = step["commands"] > 0
            return bool(played and step["delivery_ms"]["p99"] <= LIMIT_MS and _quiet(step))

        result["steps"] = await _ramp(generators, opts.steps, shapes_for, held, progress)
    finally:
        if generators is not None:
            await generators.close(report)
    result["summary"] = ccu_summary(result["steps"], pinned=result["pinning"]["pinned"])


async def vs_computer(
    group: ServerGroup, opts: CrowdOptions, report: BenchReport, progress: Callable[[str], None]
) -> None:
    """``--vs-computer R1,R2,...``: rooms of 1 person + 3 computers at the computers' pace."""
    result: dict[str, Any] = {"options": _options(opts), "pinning": {}}
    report.vs_computer = result
    generators: _Generators | None = None
    try:
        generators = await _start(group, opts, result)
        shapes = generators.shapes

        def shapes_for(rooms: int) -> list[MixShape]:
            return [MixShape(1, computers=3)] * max(0, rooms - len(shapes))

        def held(step: dict[str, Any]) -> bool:
            played = step["computer_moves_per_second"] > 0
            return bool(played and step["computer_lateness_ms"]["p99"] <= LIMIT_MS and _quiet(step))

        result["steps"] = await _ramp(generators, opts.steps, shapes_for, held, progress)
    finally:
        if generators is not None:
            await generators.close(report)
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
        "generator_processes": opts.drivers,
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
