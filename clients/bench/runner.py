"""``yahtzee bench``: the game server against a bare broadcast server, in one run.

Theory of operation: both servers are started as subprocesses (the game server with its embedded
Valkey unless ``REDIS_URL`` is set). The same rooms (R rooms of P players + S spectators) are
opened on both, and rounds alternate game, bare, game, bare ... so that the noise of a shared
machine hits both. Closed-loop rounds first (each room sends its next command when the previous
ack arrived): the bare server's rate there is its saturated rate for this driver. Then open-loop
rounds at fixed offered rates (by default fractions of that saturated rate), latency counted from
each command's intended send time. CPU seconds and RSS come from the servers' process trees
(psutil), read before and after each round. Every frame every connection receives is verified
(:mod:`clients.bench.streams`); any violation makes the run fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import resource
import secrets
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import psutil
import websockets
from websockets.asyncio.client import ClientConnection
from websockets.typing import Subprotocol

from clients.bench import ccu as crowd_scenarios
from clients.bench.bare import ROOM_PATH
from clients.bench.ccu import CrowdOptions
from clients.bench.pacing import Clock, LoopClock, Pace, closed_loop, open_loop
from clients.bench.procs import (
    ServerGroup,
    start_bare,
    start_game,
    start_game_on_cluster,
    start_game_processes,
)
from clients.bench.report import BenchReport, Figures, ratios
from clients.bench.targets import BareRoom, GameRoom, RoomShape, Sink
from clients.client import ClientClosedError, CommandError, ConnectionFailedError
from protocol import Encoding, subprotocol_for

__all__ = ["Options", "run"]

DEFAULT_FRACTIONS = (0.1, 0.25, 0.5, 0.75)
TARGET_FRACTION = 0.5  # issue 11: open loop at half the bare server's saturated rate
OPEN_BATCH = 200  # idle connections opened at once (the servers' accept backlog is finite)
ROOM_BATCH = 20  # rooms set up at once
KIB = 1024
# The bench measures the hot path, not the abuse limits: a closed loop sends far faster than the
# product's 20 commands/s per connection, all connections come from one address, and every
# finished game is followed by a new room.
GAME_ENV = {
    "YAHTZEE_RATE_PER_SECOND": "1000000",
    "YAHTZEE_RATE_BURST": "1000000",
    "YAHTZEE_MAX_PER_ADDRESS": "1000000",
    "YAHTZEE_ROOMS_PER_MINUTE": "1000000",
    "YAHTZEE_ROOMS_PER_MINUTE_PER_ADDRESS": "1000000",
    "YAHTZEE_LOG_LEVEL": "warning",
    # The bench's rooms have no computer seats: on a machine without the strategy table on disk,
    # building it would take a core for tens of seconds in the middle of the rounds.
    "YAHTZEE_PRELOAD_TABLES": "none",
}


@dataclass
class Options:
    rooms: int = 20
    players: int = 4
    room_spectators: int = 2
    encoding: Encoding = Encoding.MSGPACK
    workers: int = 1
    rounds: int = 3
    round_seconds: float = 5.0
    rates: list[float] = field(default_factory=list)  # empty: fractions of bare's rate
    idle_connections: int = 0
    heartbeat: float = 20.0
    progress: bool = True
    #: the game server on an embedded Redis Cluster, ``workers`` server processes on it
    redis_cluster: bool = False
    #: with several server processes, spread each room's connections over all of them (every
    #: event then crosses pub/sub) instead of keeping a room on one process
    spread: bool = False
    #: ``--ccu`` / ``--vs-computer``: the ramp (only the game server runs), and which one
    crowd: CrowdOptions | None = None
    crowd_kind: str = ""


class Room(Protocol):
    async def open(self) -> None: ...
    async def close(self) -> None: ...
    async def prepare(self) -> float | None: ...
    async def step(self, intended: float) -> float: ...
    def violations(self) -> list[str]: ...
    @property
    def outstanding(self) -> int: ...


@dataclass
class Fleet:
    """One server under test with its rooms; ``sink`` collects the current round."""

    name: str
    group: ServerGroup
    rooms: list[Room] = field(default_factory=list)
    sink: Sink = field(default_factory=Sink)
    delivered: asyncio.Event = field(default_factory=asyncio.Event)

    def current(self) -> Sink:
        return self.sink

    @property
    def outstanding(self) -> int:
        return sum(room.outstanding for room in self.rooms)


class Progress:
    """One line on stderr, rewritten while a round runs."""

    def __init__(self, enabled: bool, total: int) -> None:
        self.enabled = enabled and sys.stderr is not None
        self.total = total
        self.done = 0
        self.label = ""
        self.count = 0
        self.started = time.perf_counter()

    def begin(self, label: str) -> None:
        self.done += 1
        self.label, self.count, self.started = label, 0, time.perf_counter()
        self.show()

    def show(self) -> None:
        if not self.enabled:
            return
        elapsed = max(time.perf_counter() - self.started, 1e-9)
        line = f"[{self.done}/{self.total}] {self.label}"
        if self.done:
            line += f": {self.count} commands, {self.count / elapsed:.0f}/s"
        end = "\r" if sys.stderr.isatty() else "\n"
        print(f"{line:<79}", end=end, file=sys.stderr, flush=True)

    async def ticker(self) -> None:
        # A terminal gets the line rewritten every second; a log file only one line a round.
        while self.enabled and sys.stderr.isatty():
            await asyncio.sleep(1.0)  # display cadence, not synchronisation
            self.show()


# ---------------------------------------------------------------------------- rounds


async def _drain(fleet: Fleet, clock: Clock, deadline: float) -> None:
    """Wait (until ``deadline``) for the last commands' events to reach every connection."""
    while fleet.outstanding and clock.now() < deadline:
        fleet.delivered.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(fleet.delivered.wait(), deadline - clock.now())


async def run_round(
    fleet: Fleet, clock: Clock, seconds: float, rate: float | None, progress: Progress
) -> Figures:
    """One round: closed loop (``rate`` None) or open loop at ``rate`` commands/s in total."""
    figures = Figures()
    fleet.sink = Sink(delivery=figures.delivery, notify=fleet.delivered)

    def record_ack(value: float) -> None:
        figures.ack.record(value)
        progress.count += 1

    def record_unsent(value: float) -> None:
        figures.ack.record(value)
        figures.delivery.record(value)

    with _no_driver_pauses():
        return await _measure(fleet, clock, seconds, rate, figures, record_ack, record_unsent)


@contextlib.contextmanager
def _no_driver_pauses() -> Iterator[None]:
    """No garbage collection in the bench process during a round: its full collections (it keeps
    every event it verifies) took 20 to 70 ms and stalled every connection, which showed as the
    server's p99.9 and max. The round's garbage is collected after it."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


async def _measure(
    fleet: Fleet,
    clock: Clock,
    seconds: float,
    rate: float | None,
    figures: Figures,
    record_ack: Callable[[float], None],
    record_unsent: Callable[[float], None],
) -> Figures:
    before = fleet.group.cost()
    driver_before = _own_cpu()
    start = clock.now()
    end = start + seconds
    deadline = end + max(seconds, 5.0)
    tasks: list[Any]
    if rate is None:
        tasks = [closed_loop(r.prepare, r.step, clock, end, record_ack) for r in fleet.rooms]
    else:
        interval = len(fleet.rooms) / rate
        tasks = [
            open_loop(
                r.prepare,
                r.step,
                clock,
                start=start + i * interval / len(fleet.rooms),
                interval=interval,
                end=end,
                deadline=deadline,
                record_ack=record_ack,
                record_unsent=record_unsent,
            )
            for i, r in enumerate(fleet.rooms)
        ]
    paces = await asyncio.gather(*tasks, return_exceptions=True)
    errors = [p for p in paces if isinstance(p, BaseException)]
    if errors:
        raise errors[0]
    figures.seconds = clock.now() - start
    await _drain(fleet, clock, clock.now() + 10.0)
    figures.cost = fleet.group.cost() - before
    figures.driver_cpu = _own_cpu() - driver_before
    figures.commands = sum(p.sent for p in paces if isinstance(p, Pace))
    figures.unsent = sum(p.unsent for p in paces if isinstance(p, Pace))
    figures.setup_commands = fleet.sink.setup_commands
    return figures


def _own_cpu() -> float:
    times = psutil.Process().cpu_times()
    return float(times.user + times.system)


# ---------------------------------------------------------------------------- scenarios


async def _open_rooms(fleet: Fleet, make: Callable[[int], Room], count: int) -> int:
    """Open ``count`` rooms; returns the RSS the server processes grew by, in bytes."""
    before = fleet.group.cost()
    for first in range(0, count, ROOM_BATCH):
        batch = [make(i) for i in range(first, min(count, first + ROOM_BATCH))]
        await asyncio.gather(*(room.open() for room in batch))
        fleet.rooms += batch
    return (fleet.group.cost() - before).server_rss


def _pair(game: Figures, bare: Figures) -> dict[str, Any]:
    g, b = game.to_dict(), bare.to_dict()
    return {"game": g, "bare": b, "ratio": ratios(g, b)}


async def _alternate(
    fleets: Sequence[Fleet],
    clock: Clock,
    opts: Options,
    rate: float | None,
    rounds: int,
    progress: Progress,
) -> dict[str, Figures]:
    merged = {f.name: Figures() for f in fleets}
    mode = "closed loop" if rate is None else f"open loop {rate:.0f}/s"
    for _ in range(rounds):
        for fleet in fleets:
            progress.begin(f"{mode}, {fleet.name}")
            figures = await run_round(fleet, clock, opts.round_seconds, rate, progress)
            progress.show()  # the round's final count
            merged[fleet.name].merge(figures)
    return merged


async def standard(
    opts: Options, game_group: ServerGroup, bare_group: ServerGroup, report: BenchReport
) -> None:
    """R rooms x P players + S spectators on both servers: closed loop, then open loop."""
    clock = LoopClock()
    shape = RoomShape(opts.players, opts.room_spectators, opts.encoding)
    game = Fleet("game", game_group)
    bare = Fleet("bare", bare_group)
    game_urls = [f"ws://127.0.0.1:{port}/ws" for port in game_group.ports]

    def game_room(i: int) -> Room:
        # several processes: room i lives on process i mod N, as the bare server's rooms do
        # (a load balancer routing by room); with --spread its connections take them in turn
        k = i % len(game_urls)
        urls = game_urls[k:] + game_urls[:k] if opts.spread else [game_urls[k]]
        return GameRoom(urls, i, shape, clock, game.current)

    def bare_room(i: int) -> Room:
        port = bare_group.ports[i % len(bare_group.ports)]
        return BareRoom(f"ws://127.0.0.1:{port}", i, shape, clock, bare.current)

    rates = list(opts.rates)
    total = 2 * opts.rounds + 2 * (len(rates) or len(DEFAULT_FRACTIONS))
    progress = Progress(opts.progress, total)
    ticker = asyncio.create_task(progress.ticker())
    try:
        connections = opts.rooms * shape.connections
        progress.label = f"opening {connections} connections on each server"
        game_rss = await _open_rooms(game, game_room, opts.rooms)
        bare_rss = await _open_rooms(bare, bare_room, opts.rooms)
        report.rss_per_connection = _rss_entry(connections, game_rss, bare_rss)
        closed = await _alternate((game, bare), clock, opts, None, opts.rounds, progress)
        report.closed_loop = _pair(closed["game"], closed["bare"])
        bare_rate = report.closed_loop["bare"]["commands_per_second"]
        for rate in rates or [f * bare_rate for f in DEFAULT_FRACTIONS]:
            merged = await _alternate((game, bare), clock, opts, rate, 1, progress)
            report.open_loop.append({"offered_rate": rate, **_pair(merged["game"], merged["bare"])})
    finally:
        ticker.cancel()
        if progress.enabled:
            print(file=sys.stderr)
        for fleet in (game, bare):
            await asyncio.gather(*(r.close() for r in fleet.rooms), return_exceptions=True)
            for room in fleet.rooms:
                report.violations += room.violations()


def _rss_entry(connections: int, game_rss: int, bare_rss: int) -> dict[str, Any]:
    game_each, bare_each = game_rss / connections, bare_rss / connections
    return {
        "connections": connections,
        "game_bytes_per_connection": game_each,
        "bare_bytes_per_connection": bare_each,
        "ratio": game_each / bare_each if bare_each > 0 else None,
    }


async def _idle_connect(url: str, subprotocol: str | None) -> ClientConnection:
    """An idle connection; the server's pings (heartbeats) are answered by the library."""
    protocols = [Subprotocol(subprotocol)] if subprotocol else None
    ws = await websockets.connect(url, subprotocols=protocols, ping_interval=None)
    if subprotocol:
        await ws.recv()  # the welcome
    return ws


async def _idle_rss(group: ServerGroup, url: str, subprotocol: str | None, opts: Options) -> int:
    """Open the idle connections, hold them through heartbeats, return the RSS growth."""
    before = group.cost()
    sockets: list[ClientConnection] = []
    progress = Progress(opts.progress, 2)
    try:
        for first in range(0, opts.idle_connections, OPEN_BATCH):
            count = min(OPEN_BATCH, opts.idle_connections - first)
            batch = (_idle_connect(url, subprotocol) for _ in range(count))
            sockets += await asyncio.gather(*batch)
            progress.label = f"{group.name}: {len(sockets)} idle connections open"
            progress.show()
        # Hold them through one and a half heartbeat intervals: the server pings each at least
        # once, so the figure includes what heartbeats cost.
        await asyncio.sleep(1.5 * opts.heartbeat)
        return (group.cost() - before).server_rss
    finally:
        await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)


async def idle(
    opts: Options, game_group: ServerGroup, bare_group: ServerGroup, report: BenchReport
) -> None:
    """N idle connections (heartbeats on) to one game process, then to one bare process."""
    game_url = f"ws://127.0.0.1:{game_group.ports[0]}/ws"
    bare_url = f"ws://127.0.0.1:{bare_group.ports[0]}{ROOM_PATH}idle"
    game_rss = await _idle_rss(game_group, game_url, subprotocol_for(opts.encoding), opts)
    bare_rss = await _idle_rss(bare_group, bare_url, None, opts)
    report.rss_per_connection = _rss_entry(opts.idle_connections, game_rss, bare_rss)


async def _crowd(
    opts: Options, crowd: CrowdOptions, group: ServerGroup, report: BenchReport
) -> None:
    """``--ccu`` or ``--vs-computer`` on the game server alone (failures go to the report)."""
    done = 0

    def show(line: str) -> None:
        nonlocal done
        if line.endswith("rooms") and "opening" in line:  # a new step
            done += 1
        if opts.progress and sys.stderr is not None:
            print(f"[{done}/{len(crowd.steps)}] {line}", file=sys.stderr, flush=True)

    scenario = crowd_scenarios.ccu if opts.crowd_kind == "ccu" else crowd_scenarios.vs_computer
    try:
        await scenario(group, crowd, report, show)
    except (CommandError, ClientClosedError, ConnectionFailedError, OSError) as exc:
        report.failures.append(f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a bug or a broken server: report it, fail the run
        report.failures.append(f"{type(exc).__name__}: {exc!r}")


# ---------------------------------------------------------------------------- targets


def _target(name: str, measured: float | None, limit: float, unit: str) -> dict[str, Any]:
    met = None if measured is None else measured <= limit
    shown = "not measured" if measured is None else f"{measured:.2f} {unit} (limit {limit} {unit})"
    return {"target": name, "measured": shown, "value": measured, "limit": limit, "met": met}


def evaluate_targets(report: BenchReport, opts: Options) -> list[dict[str, Any]]:
    """The targets of issue 11 that this run can judge (the others say n/a)."""
    targets: list[dict[str, Any]] = []
    same_load = _highest_sustained(report)
    if same_load is not None:
        ratio = same_load["ratio"]["cpu_ms_per_command"]["total"]
        name = f"CPU per command <= 2 x bare (same load: {same_load['offered_rate']:.0f}/s)"
        targets.append(_target(name, ratio, 2.0, "x"))
    at_half = _open_loop_nearest(report, TARGET_FRACTION)
    if at_half is not None:
        name = f"p99 command -> last delivery at half bare rate ({at_half['offered_rate']:.0f}/s)"
        targets.append(_target(name, at_half["game"]["delivery_ms"]["p99"], 10.0, "ms"))
    if opts.idle_connections:
        each = report.rss_per_connection["game_bytes_per_connection"] / KIB
        targets.append(_target(f"RSS per idle connection ({opts.idle_connections})",
                               each, 20.0, "KiB"))  # fmt: skip
    if opts.rooms == 1 and opts.room_spectators >= 1000 and report.closed_loop:
        p99 = report.closed_loop["game"]["delivery_ms"]["p99"]
        targets.append(_target(f"p99 delivery, {opts.room_spectators} spectators",
                               p99, 250.0, "ms"))  # fmt: skip
    targets += _crowd_targets(report)
    if opts.workers > 1:
        targets.append({"target": "--workers 2 no worse than 1 worker", "met": None,
                        "measured": "compare with a --workers 1 run", "value": None,
                        "limit": None})  # fmt: skip
    return targets


def _crowd_targets(report: BenchReport) -> list[dict[str, Any]]:
    """Issue 30: players per process at p99 <= 100 ms; vs-computer rooms with moves on time."""
    targets: list[dict[str, Any]] = []
    if report.ccu.get("summary"):
        summary = report.ccu["summary"]
        measured = f"{summary['largest_users_held']} users held (measured)"
        extrapolated = summary.get("extrapolated_users_per_server_core")
        if extrapolated:
            measured += f"; {extrapolated['value']:,.0f} per server core ({extrapolated['label']})"
        targets.append({
            "target": f">= {crowd_scenarios.CCU_TARGET:,} concurrent players per server process "
            f"at p99 <= {crowd_scenarios.LIMIT_MS:.0f} ms",
            "measured": measured, "value": summary["largest_users_held"],
            "limit": crowd_scenarios.CCU_TARGET, "met": summary["met_measured"],
        })  # fmt: skip
    if report.vs_computer.get("summary"):
        summary = report.vs_computer["summary"]
        measured = f"{summary['largest_rooms_held']} rooms held (measured)"
        extrapolated = summary.get("extrapolated_rooms_per_server_core")
        if extrapolated:
            measured += f"; {extrapolated['value']:,.0f} per server core ({extrapolated['label']})"
        targets.append({
            "target": f">= {crowd_scenarios.ROOMS_TARGET:,} rooms of 1 person + 3 computers per "
            f"process, p99 computer lateness <= {crowd_scenarios.LIMIT_MS:.0f} ms",
            "measured": measured, "value": summary["largest_rooms_held"],
            "limit": crowd_scenarios.ROOMS_TARGET, "met": summary["met_measured"],
        })  # fmt: skip
    return targets


def _highest_sustained(report: BenchReport) -> dict[str, Any] | None:
    """The open-loop round at the highest rate both servers kept up with (every command sent,
    within 10 % of the offered rate), where CPU per command compares like with like; else the
    lowest rate."""
    if not report.open_loop:
        return None

    def kept_up(figures: dict[str, Any], rate: float) -> bool:
        return bool(figures["unsent"] == 0 and figures["commands_per_second"] >= 0.9 * rate)

    kept = [
        e
        for e in report.open_loop
        if kept_up(e["game"], e["offered_rate"]) and kept_up(e["bare"], e["offered_rate"])
    ]
    if kept:
        return max(kept, key=lambda e: float(e["offered_rate"]))
    return min(report.open_loop, key=lambda e: float(e["offered_rate"]))


def _open_loop_nearest(report: BenchReport, fraction: float) -> dict[str, Any] | None:
    if not report.open_loop or not report.closed_loop:
        return None
    wanted = fraction * report.closed_loop["bare"]["commands_per_second"]
    return min(report.open_loop, key=lambda e: abs(float(e["offered_rate"]) - wanted))


# ---------------------------------------------------------------------------- running


def _raise_file_limit() -> None:
    """Each connection is a descriptor on both sides; the servers inherit the raised limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def _scenario(opts: Options) -> dict[str, Any]:
    if opts.crowd is not None:  # the ramp's own options are in its section of the report
        return {"kind": opts.crowd_kind, "workers": opts.workers,
                "heartbeat_seconds": opts.heartbeat, "redis": _redis_kind(opts)}  # fmt: skip
    return {
        "kind": opts.crowd_kind or ("idle" if opts.idle_connections else "rooms"),
        "rooms": opts.rooms,
        "players": opts.players,
        "spectators_per_room": opts.room_spectators,
        "idle_connections": opts.idle_connections,
        "encoding": opts.encoding.value,
        "workers": opts.workers,
        "spread": opts.spread,
        "rounds": opts.rounds,
        "round_seconds": opts.round_seconds,
        "heartbeat_seconds": opts.heartbeat,
        "rates": opts.rates,
        # Without REDIS_URL the game server runs its own embedded Valkey, whose CPU is counted.
        "redis": _redis_kind(opts),
    }


def _redis_kind(opts: Options) -> str:
    if opts.redis_cluster:
        return (f"embedded Redis Cluster, 3 masters + 3 replicas (CPU counted), "
                f"{opts.workers} server process(es)")  # fmt: skip
    if os.environ.get("REDIS_URL"):
        return "external (REDIS_URL: CPU not counted)"
    return "embedded (a child of the game server: CPU counted)"


async def run(opts: Options, workdir: Path | None = None) -> BenchReport:
    """Start both servers, run the scenario, stop them; the report (not printed)."""
    _raise_file_limit()
    report = BenchReport(scenario=_scenario(opts))
    with tempfile.TemporaryDirectory(prefix="yahtzee-bench-") as tmp:
        directory = workdir or Path(tmp)
        env = {**GAME_ENV, "YAHTZEE_HEARTBEAT_SECONDS": str(opts.heartbeat)}
        if os.environ.get("REDIS_URL") and not opts.redis_cluster:
            # A shared Redis: keys of our own (its CPU is not in our process tree).
            env["REDIS_PREFIX"] = f"bench{secrets.token_hex(4)}:"
        workers = 1 if opts.idle_connections else opts.workers
        start = start_game_on_cluster if opts.redis_cluster else start_game
        if workers > 1 and not opts.redis_cluster:
            start = start_game_processes  # N processes on one Valkey, each on its own port
        if opts.crowd is not None:
            # Computers play there: their strategy table loads at start-up (or is built once).
            env["YAHTZEE_PRELOAD_TABLES"] = "yahtzee"
        game_group = await asyncio.to_thread(start, workers, env, directory)
        if opts.crowd is not None:
            try:
                await _crowd(opts, opts.crowd, game_group, report)
            finally:
                await asyncio.to_thread(game_group.stop)
            report.targets = evaluate_targets(report, opts)
            return report
        try:
            bare_group = await asyncio.to_thread(start_bare, workers, opts.heartbeat, directory)
            try:
                scenario = idle if opts.idle_connections else standard
                try:
                    await scenario(opts, game_group, bare_group, report)
                except (CommandError, ClientClosedError, ConnectionFailedError, OSError) as exc:
                    report.failures.append(f"{type(exc).__name__}: {exc}")
                except Exception as exc:  # a bug or a broken server: report it, fail the run
                    report.failures.append(f"{type(exc).__name__}: {exc!r}")
            finally:
                await asyncio.to_thread(bare_group.stop)
        finally:
            await asyncio.to_thread(game_group.stop)
    report.targets = evaluate_targets(report, opts)
    return report
