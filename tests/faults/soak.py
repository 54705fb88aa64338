"""The chaos soak: N minutes of continuous games on two server processes while a chaos loop
breaks things at random, checked by the fault suite's independent checker (``faultkit``).

    python3 .ci/dev.py soak --minutes 30              # single Redis (append-only, fsync always)
    python3 .ci/dev.py soak --minutes 30 --cluster    # the embedded Redis Cluster (3 x 2 nodes)
    python3 .ci/dev.py soak --minutes 30 --both       # the two phases one after the other
    .venv/bin/python tests/faults/soak.py --help      # every option (pace, load, seed, limits)

Not part of the test suite (not named ``test_*.py``: pytest never collects it).

**Workload.** ``--games`` tables play at once, each started again as soon as it ends: 1-3
people (bots, :mod:`clients.strategy`) and 0-1 computer players seated by ``create_room``,
0-2 spectators from the start and sometimes one that comes in mid-game, ``hint`` now and then
(players and spectators), and some seats *rejoined*: the seat's client is closed between two
moves and a fresh client takes the seat back with its token (a program restart). Every client is
a :class:`faultkit.FaultClient`: it fails over between the two processes and records every room
message it receives on the wire. ``--lobby`` watchers read ``GET /lobby`` (Server-Sent Events)
from both processes, reconnecting when cut. ``--delay`` (seconds before each bot move) and
``--computer-delay-ms`` set the pace.

**Chaos.** Every ``--chaos-min``..``--chaos-max`` seconds (random, from ``--seed``, printed) one
fault, never two at once: SIGKILL of a server process (process B unless ``--kill-both``: A then
lives the whole phase, so its memory and descriptors are measured over the whole run) and its
restart on the same port; Redis restarted (SIGKILL or SIGTERM, down 1-3 s) or frozen
(SIGSTOP 2-6 s, then SIGCONT); on the Cluster, SIGKILL of a master (a replica is promoted; the
old master is restarted and rejoins as a replica); and clients' connections cut (a share of
them, TCP abort, no close frame).

**Checker.** Every finished room's log is read back (``GET /rooms/{id}/events``) and checked
with :func:`faultkit.check_stream` for every client that was in it (nothing lost, duplicated,
reordered or different from the log, no resynchronising snapshot, ``game_over`` reached; a
client closed for a rejoin is checked up to where it stopped), every acknowledged ``roll`` of a
person is exactly one ``rolled`` of that player at the ack's ``seq``, people's ``rolled`` and
``scored`` events equal their acknowledged rolls and scores (the computers' are the server's),
one ``game_started`` and one ``game_over``, and the fair-dice verifier says ``verified``.

**Figures**, every ``--report-every`` seconds and at the end: games finished, the checker's
findings by kind, errors by code (``internal_error`` must be 0), recovery time per disrupted
client (from the later of its disruption and the fault's end to its next ack or resume; 0 if
back before the fault's end was noted), server RSS, Redis ``used_memory`` (all nodes of the
Cluster) and each server's open descriptors sampled every ``--sample-every`` seconds, with a
least-squares slope after ``--warmup`` minutes (and ``--segment-warmup`` seconds after each
restart: a restart starts a new segment; for a process restarted three times or more, whose
lives are mostly warm-up, the slope judged is across its lives, of each life's mean at the same
age, and the pooled slope within its lives is printed beside it; Redis too, a life ending at
each restart or, on the Cluster, each failover), and tracebacks in the server logs.
Descriptors are counted as "other" descriptors: all of the process's minus its ESTABLISHED
client connections (those follow the clients, which move from a killed process to the other
one).

**Goals** (exit code 1 if one is missed): every game finishes and passes the checker (0 lost,
duplicated, reordered, differing events), 0 ``internal_error``, 0 tracebacks, lobby streams
readable, the pooled slopes of server RSS and Redis memory under ``--max-rss-slope`` and
``--max-redis-slope`` KiB/min, of the servers' other descriptors under ``--max-fd-slope`` per
minute.

Logs (servers, Redis, the report as JSON) stay in ``--workdir`` (printed).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import re
import signal
import sys
import tempfile
import time
import traceback
from bisect import bisect_right
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for _path in (HERE, ROOT / "tests", ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import httpx  # noqa: E402
import psutil  # noqa: E402
import redis  # noqa: E402
from faultkit import (  # noqa: E402
    FaultClient,
    RedisProcess,
    Stats,
    as_event,
    check_stream,
    percentile,
    read_log,
)
from procs import ServerProcess, free_port  # noqa: E402
from websockets.asyncio.client import ClientConnection  # noqa: E402

from clients.client import CommandError  # noqa: E402
from clients.model import RoomModel  # noqa: E402
from clients.strategy import choose_box, decide  # noqa: E402
from protocol import (  # noqa: E402
    Ack,
    Command,
    Error,
    Event,
    Level,
    Phase,
    Ping,
    RoomStatus,
    Snapshot,
    message_type,
)
from protocol.fairdice import Status, verify_log  # noqa: E402
from server.ops.embedded_cluster import ClusterNodeProcess, EmbeddedCluster  # noqa: E402
from server.solver import SolverRules, default_cache_dir, table_for  # noqa: E402

LEVELS = tuple(Level)
PROBLEMS_TOLD = 5  # of one client's stream problems, the first few are printed
STUCK_AFTER_OVER = 30.0  # s every client has seen game_over while the table still waits
CLEANUP_SECONDS = 60.0  # a table's coroutines cancelled and clients closed, at most
MIN_SLOPE_MINUTES = 3.0  # a slope over fewer minutes of samples is printed, not judged
KIB = 1024.0


def say(text: str) -> None:
    print(f"[soak {time.strftime('%H:%M:%S')}] {text}", flush=True)


# ---------------------------------------------------------------------------- options


@dataclass
class Options:
    minutes: float = 30.0
    backends: tuple[str, ...] = ("single",)
    games: int = 24
    delay: float = 0.25
    computer_delay_ms: int = 250
    chaos_min: float = 20.0
    chaos_max: float = 60.0
    seed: int = 0
    report_every: float = 300.0
    sample_every: float = 10.0
    warmup: float | None = None  # minutes; None: a fifth of the phase, 1..5 minutes
    segment_warmup: float = 60.0
    retention: int = 240
    lobby: int = 4
    hint_rate: float = 0.15
    rejoin_rate: float = 0.3
    late_spectator_rate: float = 0.3
    game_timeout: float = 300.0
    kill_both: bool = False
    max_rss_slope: float = 512.0
    max_redis_slope: float = 512.0
    max_fd_slope: float = 1.0
    workdir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="yahtzee-soak-")))
    json_path: Path | None = None
    trace_memory: bool = False  # tracemalloc in process A (memtrace/sitecustomize.py)
    env_a: dict[str, str] = field(default_factory=dict)  # more environment for process A only

    def warmup_minutes(self, minutes: float) -> float:
        if self.warmup is not None:
            return self.warmup
        return max(1.0, min(5.0, minutes / 5))


def parse(argv: Sequence[str]) -> Options:
    p = argparse.ArgumentParser(
        prog="soak", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--minutes", type=float, default=30.0, help="per phase (default 30)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--cluster", action="store_true", help="on the embedded Redis Cluster")
    which.add_argument("--both", action="store_true", help="single Redis, then the Cluster")
    p.add_argument("--games", type=int, default=24, help="tables playing at once (24)")
    p.add_argument("--delay", type=float, default=0.25, help="s before each bot move (0.25)")
    p.add_argument("--computer-delay-ms", type=int, default=250, help="computers' pace (250)")
    p.add_argument("--chaos-min", type=float, default=20.0, help="s between faults, min (20)")
    p.add_argument("--chaos-max", type=float, default=60.0, help="s between faults, max (60)")
    p.add_argument("--seed", type=int, default=None, help="random seed (default: random)")
    p.add_argument("--report-every", type=float, default=300.0, help="s between reports (300)")
    p.add_argument("--sample-every", type=float, default=10.0, help="s between samples (10)")
    p.add_argument("--warmup", type=float, default=None, help="minutes before slopes count")
    p.add_argument("--segment-warmup", type=float, default=60.0, help="s after a restart (60)")
    p.add_argument("--retention", type=int, default=240, help="finished rooms kept, s (240)")
    p.add_argument("--lobby", type=int, default=4, help="GET /lobby watchers (4)")
    p.add_argument("--hint-rate", type=float, default=0.15, help="chance of a hint per move")
    p.add_argument("--rejoin-rate", type=float, default=0.3, help="chance a seat is rejoined")
    p.add_argument("--late-spectator-rate", type=float, default=0.3)
    p.add_argument("--game-timeout", type=float, default=300.0, help="s before a game is stuck")
    p.add_argument("--kill-both", action="store_true", help="SIGKILL A too, not only B")
    p.add_argument("--max-rss-slope", type=float, default=512.0, help="KiB/min (512)")
    p.add_argument("--max-redis-slope", type=float, default=512.0, help="KiB/min (512)")
    p.add_argument("--max-fd-slope", type=float, default=1.0, help="descriptors/min (1)")
    p.add_argument("--workdir", type=Path, default=None, help="logs and report (a new tmp dir)")
    p.add_argument("--json", type=Path, default=None, help="also write the report here")
    p.add_argument(
        "--trace-memory",
        action="store_true",
        help="tracemalloc in process A: growth by traceback after the warm-up, every"
        " --report-every s, in WORKDIR/<backend>/memtrace-A (slows A down)",
    )
    p.add_argument(
        "--env-a",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="environment for process A only (an allocator to compare: LD_PRELOAD=...)",
    )
    a = p.parse_args(argv)
    if any("=" not in item for item in a.env_a):
        p.error("--env-a takes NAME=VALUE")
    if not 0 < a.chaos_min <= a.chaos_max:
        p.error("need 0 < --chaos-min <= --chaos-max")
    options = Options(
        minutes=a.minutes,
        backends=("cluster",) if a.cluster else ("single", "cluster") if a.both else ("single",),
        games=a.games,
        delay=a.delay,
        computer_delay_ms=a.computer_delay_ms,
        chaos_min=a.chaos_min,
        chaos_max=a.chaos_max,
        seed=a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 31),
        report_every=a.report_every,
        sample_every=a.sample_every,
        warmup=a.warmup,
        segment_warmup=a.segment_warmup,
        retention=a.retention,
        lobby=a.lobby,
        hint_rate=a.hint_rate,
        rejoin_rate=a.rejoin_rate,
        late_spectator_rate=a.late_spectator_rate,
        game_timeout=a.game_timeout,
        kill_both=a.kill_both,
        max_rss_slope=a.max_rss_slope,
        max_redis_slope=a.max_redis_slope,
        max_fd_slope=a.max_fd_slope,
        json_path=a.json,
        trace_memory=a.trace_memory,
        env_a=dict(item.split("=", 1) for item in a.env_a),
    )
    if a.workdir is not None:
        options.workdir = a.workdir
    options.workdir.mkdir(parents=True, exist_ok=True)
    return options


# ---------------------------------------------------------------------------- statistics


def pooled_slope(points: Sequence[tuple[Any, float, float]]) -> tuple[float, float]:
    """Least-squares slope of ``(segment, x, y)`` points with one intercept per segment (the
    within-segment slope, pooled); NaN without two points in some segment. Returns the slope
    and the length of x the segments cover together."""
    segments: dict[Any, list[tuple[float, float]]] = {}
    for key, x, y in points:
        segments.setdefault(key, []).append((x, y))
    num = den = covered = 0.0
    for values in segments.values():
        if len(values) < 2:
            continue
        mx = sum(x for x, _ in values) / len(values)
        my = sum(y for _, y in values) / len(values)
        num += sum((x - mx) * (y - my) for x, y in values)
        den += sum((x - mx) ** 2 for x, _ in values)
        covered += max(x for x, _ in values) - min(x for x, _ in values)
    return (num / den if den > 0 else math.nan), covered


@dataclass
class Series:
    """Samples ``(segment, t seconds since phase start, value)``; the slope skips the warm-up of
    the phase and of each segment."""

    points: list[tuple[Any, float, float]] = field(default_factory=list)
    starts: dict[Any, float] = field(default_factory=dict)

    def add(self, segment: Any, t: float, value: float) -> None:
        self.starts.setdefault(segment, t)
        self.points.append((segment, t, value))

    def slope_per_minute(
        self, warmup: float, segment_warmup: float, until: float
    ) -> tuple[float, float]:
        """The pooled slope per minute of the samples from ``warmup`` to ``until`` (the end
        of the load: the last games and the idle drain do not count), and the minutes of
        samples it rests on."""
        kept = [
            (k, t / 60, v)
            for k, t, v in self.points
            if warmup <= t <= until and t >= self.starts[k] + segment_warmup
        ]
        return pooled_slope(kept)

    def slope_across_restarts(
        self, warmup: float, segment_warmup: float, until: float, window: float = 60.0
    ) -> tuple[float, float]:
        """For a process that restarts (a segment each life): the slope per minute, across the
        run, of each life's mean value at the same age (``segment_warmup`` to ``segment_warmup
        + window`` seconds after its start), and the minutes between the first and the last such
        point. Growth within a life is its warm-up; growth from one life to the next at the same
        age is what a leak in shared state (Redis, the disk, the other process) would show."""
        lives: dict[Any, list[tuple[float, float]]] = {}
        for k, t, v in self.points:
            age = t - self.starts[k]
            if warmup <= t <= until and segment_warmup <= age <= segment_warmup + window:
                lives.setdefault(k, []).append((t, v))
        points = [
            ("run", sum(t for t, _ in s) / len(s) / 60, sum(v for _, v in s) / len(s))
            for s in lives.values()
        ]
        return pooled_slope(points) if len(points) >= 2 else (math.nan, 0.0)

    @property
    def restarts(self) -> int:
        return max(0, len(self.starts) - 1)

    @property
    def last(self) -> float:
        return self.points[-1][2] if self.points else math.nan

    def at(self, t: float, within: float) -> float:
        """The sample nearest to ``t`` if one is within ``within`` seconds, else NaN."""
        best = min(self.points, key=lambda p: abs(p[1] - t), default=None)
        return best[2] if best is not None and abs(best[1] - t) <= within else math.nan

    @property
    def peak(self) -> float:
        return max((v for _, _, v in self.points), default=math.nan)


# ---------------------------------------------------------------------------- infrastructure


class Backend:
    """The Redis side of a phase: start, the URL and env for servers, chaos, memory."""

    name = ""
    actions: ClassVar[dict[str, float]] = {}

    async def start(self) -> None: ...
    def server_env(self) -> dict[str, str]:
        raise NotImplementedError

    def ports(self) -> set[int]:
        raise NotImplementedError

    def used_memory(self) -> tuple[Any, float] | None:
        """(segment key, bytes) or None when it cannot be read now."""
        raise NotImplementedError

    def pids(self) -> list[int]:
        raise NotImplementedError

    def stop(self) -> None: ...


class SingleRedis(Backend):
    name = "single"
    actions: ClassVar[dict[str, float]] = {
        "kill_server": 1.0,
        "redis_restart": 1.0,
        "redis_freeze": 1.0,
        "drop_clients": 1.0,
    }

    def __init__(self, workdir: Path) -> None:
        self.redis = RedisProcess(workdir / "redis")

    async def start(self) -> None:
        await asyncio.to_thread(self.redis.start)

    def server_env(self) -> dict[str, str]:
        return {"REDIS_URL": self.redis.url}

    def ports(self) -> set[int]:
        return {self.redis.port}

    def used_memory(self) -> tuple[Any, float] | None:
        try:
            with redis.Redis(host="127.0.0.1", port=self.redis.port, socket_timeout=1) as c:
                return self.redis.pid, float(c.info("memory")["used_memory"])
        except (redis.RedisError, OSError, AssertionError):
            return None

    def pids(self) -> list[int]:
        process = self.redis.process
        return [process.pid] if process is not None and process.poll() is None else []

    def stop(self) -> None:
        self.redis.stop()


class Cluster(Backend):
    name = "cluster"
    actions: ClassVar[dict[str, float]] = {
        "kill_server": 1.0,
        "kill_master": 2.0,
        "drop_clients": 1.0,
    }

    def __init__(self) -> None:
        self.cluster = EmbeddedCluster(masters=3, replicas=1, node_timeout_ms=1000)

    async def start(self) -> None:
        self.cluster.start()  # in the main thread: the nodes die with this process

    def live(self) -> list[ClusterNodeProcess]:
        return [n for n in self.cluster.nodes if n.alive]

    def server_env(self) -> dict[str, str]:
        return {"REDIS_URL": f"redis://{self.live()[0].name}/0", "REDIS_CLUSTER": "1"}

    def ports(self) -> set[int]:
        return {n.port for n in self.cluster.nodes}

    def used_memory(self) -> tuple[Any, float] | None:
        total = 0.0
        key = []
        try:
            for node in self.live():
                with redis.Redis(host="127.0.0.1", port=node.port, socket_timeout=1) as c:
                    total += float(c.info("memory")["used_memory"])
                key.append((node.port, node.process.pid))
        except (redis.RedisError, OSError):
            return None
        return tuple(key), total

    def pids(self) -> list[int]:
        return [n.process.pid for n in self.live()]

    def masters(self) -> list[tuple[ClusterNodeProcess, list[tuple[int, int]]]]:
        """The masters serving slots now, with their slot ranges (asked of a live node)."""
        by_port = {n.port: n for n in self.cluster.nodes}
        for node in self.live():
            try:
                with node.client() as c:
                    slots = c.execute_command("CLUSTER", "SLOTS")
            except (redis.RedisError, OSError):
                continue
            found: dict[int, list[tuple[int, int]]] = {}
            for low, high, master, *_ in slots:
                found.setdefault(int(master[1]), []).append((int(low), int(high)))
            return [(by_port[p], r) for p, r in found.items() if p in by_port]
        return []

    def owner(self, slot: int) -> ClusterNodeProcess | None:
        try:
            return self.cluster.slot_owner(slot)
        except Exception:  # a node answered badly mid-failover: ask again later
            return None

    def stop(self) -> None:
        self.cluster.stop()


@dataclass
class Slot:
    """A server process slot (A or B): its port, log and the current process."""

    name: str
    port: int
    log_path: Path
    server: ServerProcess | None = None
    starts: int = 0

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def http(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def alive(self) -> bool:
        return (
            self.server is not None
            and self.server.process is not None
            and self.server.process.poll() is None
        )

    @property
    def pid(self) -> int | None:
        if self.alive:
            assert self.server is not None
            assert self.server.process is not None
            return self.server.process.pid
        return None


def server_env(backend: Backend, options: Options) -> dict[str, str]:
    return {
        **os.environ,
        **backend.server_env(),
        "REDIS_PREFIX": "soak:",
        "PYTHONPATH": str(ROOT),
        "YAHTZEE_LOG_LEVEL": "warning",
        "YAHTZEE_MAX_PER_ADDRESS": "100000",
        "YAHTZEE_ROOMS_PER_MINUTE": "1000000000",
        "YAHTZEE_ROOMS_PER_MINUTE_PER_ADDRESS": "100000",
        "YAHTZEE_ABSENT_TURN_SECONDS": "0",  # nobody's turn is played for them while away
        "YAHTZEE_RETENTION_SECONDS": str(options.retention),
        "YAHTZEE_SOLVER_CACHE": str(default_cache_dir()),
        "YAHTZEE_PRELOAD_TABLES": "yahtzee",
        # The archive is not under test here (each process would start its own embedded
        # PostgreSQL); DATABASE_URL in the environment still names a shared one.
        "YAHTZEE_DATABASE": os.environ.get("YAHTZEE_DATABASE", "off"),
    }


# ---------------------------------------------------------------------------- tables


@dataclass
class Seat:
    urls: list[str]
    label: str
    client: SoakClient
    player: str | None = None
    earlier: list[SoakClient] = field(default_factory=list)  # clients closed for a rejoin
    rejoin_after: int | None = None  # moves before the seat is rejoined

    @property
    def clients(self) -> list[SoakClient]:
        return [*self.earlier, self.client]


@dataclass
class SoakTable:
    number: int
    seats: list[Seat]
    spectators: list[SoakClient]
    computers: list[Level]
    first_player: str
    late_spectator_urls: list[str] | None
    rng: random.Random
    room: str = ""
    done: bool = False
    late: SoakClient | None = None
    hints: int = 0
    rejoins: int = 0
    tasks: dict[str, asyncio.Task[None]] = field(default_factory=dict)
    #: when (monotonic) a client of the table first saw the game finished, and when its room
    #: was created (to tell a room that expired before the check from one that was lost)
    over_at: float | None = None
    created_at: float | None = None

    @property
    def clients(self) -> list[SoakClient]:
        out = [c for s in self.seats for c in s.clients] + self.spectators
        return out + ([self.late] if self.late is not None else [])

    @property
    def live_clients(self) -> list[SoakClient]:
        out = [s.client for s in self.seats] + self.spectators
        return out + ([self.late] if self.late is not None else [])


def _needs(me: str | None, acted_at: int) -> Callable[[RoomModel], bool]:
    def needs_me(model: RoomModel) -> bool:
        if model.status is RoomStatus.FINISHED:
            return True
        if model.seq == acted_at:
            return False
        if model.status is RoomStatus.LOBBY:
            return model.host == me and len(model.players) >= model.max_seats
        return (
            model.current_player == me
            and not model.turn_over
            and model.phase in (Phase.AWAITING_ROLL, Phase.ROLLED)
        )

    return needs_me


class SoakClient(FaultClient):
    """A :class:`FaultClient` that also keeps a trail of what it did and saw (commands sent,
    acks, errors, snapshots, connection changes, the bot's decisions), with times, to explain a
    violation or a stuck table."""

    def __init__(
        self, urls: Sequence[str], stats: Stats, label: str, clock: Callable[[], float]
    ) -> None:
        super().__init__(urls, stats, label)
        self.clock = clock
        self.trail: deque[str] = deque(maxlen=80)

    def note(self, text: str) -> None:
        self.trail.append(f"{self.clock():.2f}s {text}")

    def _on_status(self, status: str) -> None:
        self.note(f"status {status} ({self.url})")
        super()._on_status(status)

    async def _send(self, ws: ClientConnection, command: Command) -> None:
        if not isinstance(command, Ping):
            seq = getattr(command, "expect_seq", None)
            self.note(f"send {message_type(command)} {command.id} expect_seq={seq}")
        await super()._send(ws, command)

    def _dispatch(self, message: object) -> bool:
        if isinstance(message, Error):
            self.note(f"error {message.code} to {message.id} seq={message.seq}")
        elif isinstance(message, Ack):
            self.note(f"ack {message.id} seq={message.seq}")
        elif isinstance(message, Snapshot):
            self.note(f"snapshot seq={message.seq} ({len(self.wire)} items before)")
        return super()._dispatch(message)


class Soak:
    """One phase: two servers on one backend, the tables, the chaos, the samples."""

    def __init__(self, options: Options, backend: Backend, rng: random.Random) -> None:
        self.options = options
        self.backend = backend
        self.rng = rng
        self.dir = options.workdir / backend.name
        self.dir.mkdir(parents=True, exist_ok=True)
        self.slots = [
            Slot(name, free_port(), self.dir / f"server-{name}.log") for name in ("A", "B")
        ]
        self.stats = Stats()
        self.t0 = time.monotonic()
        self.deadline = self.t0 + options.minutes * 60
        self.stopping = asyncio.Event()
        # results
        self.finished = 0
        self.failed: Counter[str] = Counter()  # games that did not finish, by reason
        self.failures: list[str] = []
        self.violations: Counter[str] = Counter()
        self.problems: list[str] = []
        self.dice: Counter[str] = Counter()
        self.hints = 0
        self.rejoins = 0
        self.late_spectators = 0
        self.cleanups_hung = 0  # tables whose clean-up took longer than CLEANUP_SECONDS
        self.computers = 0
        self.table_count = 0
        self.clients_made = 0
        self.running: set[int] = set()
        self.faults: Counter[str] = Counter()
        self.windows: list[tuple[float, float]] = []  # (fault start, fault end), in order
        self.window_kinds: list[str] = []
        self.fault_log: list[str] = []
        self.lobby_events = 0
        self.lobby_reconnects = 0
        self.lobby_statuses: Counter[int] = Counter()
        self.http_statuses: Counter[int] = Counter()  # every HTTP answer the soak read
        self.lobby_bad = 0
        self.rss: dict[str, Series] = {s.name: Series() for s in self.slots}
        self.fds: dict[str, Series] = {s.name: Series() for s in self.slots}
        self.fds_total: dict[str, Series] = {s.name: Series() for s in self.slots}
        self.redis_memory = Series()
        self.tables: dict[int, SoakTable] = {}
        self.cpu: dict[tuple[str, int], float] = {}  # (role, pid) -> CPU seconds used
        self.cpu_at_start = time.process_time()
        self.cpu_wall = 0.0

    # -- time --------------------------------------------------------------------------------

    def now(self) -> float:
        return time.monotonic() - self.t0

    # -- servers -----------------------------------------------------------------------------

    async def start_slot(self, slot: Slot) -> None:
        env = server_env(self.backend, self.options)
        if self.options.trace_memory and slot.name == "A":
            env.update(self.memtrace_env())
        if slot.name == "A":
            env.update(self.options.env_a)
        server = ServerProcess(port=slot.port, env=env, log_path=slot.log_path)
        for attempt in range(5):
            try:
                await asyncio.to_thread(server.start, 30.0)
                break
            except AssertionError as exc:
                say(f"server {slot.name} did not start (attempt {attempt + 1}): {exc!s:.300}")
                server.kill()
                await asyncio.sleep(2)
        else:
            raise RuntimeError(f"server {slot.name} does not start")
        slot.server = server
        slot.starts += 1

    def memtrace_env(self) -> dict[str, str]:
        """Process A's environment for ``--trace-memory``: ``memtrace/sitecustomize.py`` first
        on its path, the baseline at the warm-up, a report every ``--report-every`` seconds."""
        warmup = self.options.warmup_minutes(self.options.minutes) * 60
        return {
            "PYTHONPATH": f"{HERE / 'memtrace'}{os.pathsep}{ROOT}",
            "SOAK_MEMTRACE_DIR": str(self.dir / "memtrace-A"),
            "SOAK_MEMTRACE_WARMUP": str(warmup),
            "SOAK_MEMTRACE_EVERY": str(self.options.report_every),
        }

    def alive_http(self) -> list[str]:
        return [s.http for s in self.slots if s.alive]

    # -- tables ------------------------------------------------------------------------------

    def client(self, urls: list[str], label: str) -> SoakClient:
        self.clients_made += 1
        return SoakClient(urls, self.stats, label, self.now)

    def new_table(self, number: int) -> SoakTable:
        rng = random.Random(self.rng.getrandbits(64))
        a, b = self.slots[0].ws, self.slots[1].ws

        def urls(i: int) -> list[str]:
            return [a, b] if (number + i) % 2 == 0 else [b, a]

        people = rng.choice([1, 2, 2, 2, 3])
        computers = [rng.choice(LEVELS)] if people == 1 or rng.random() < 0.35 else []
        seats = []
        for i in range(people):
            seat = Seat(urls(i), f"t{number}p{i}", self.client(urls(i), f"t{number}p{i}"))
            if rng.random() < self.options.rejoin_rate:
                seat.rejoin_after = rng.randint(2, 30)
            seats.append(seat)
        spectators = [
            self.client(urls(i + 1), f"t{number}s{i}") for i in range(rng.choice([0, 1, 1, 2]))
        ]
        late = urls(number) if rng.random() < self.options.late_spectator_rate else None
        return SoakTable(
            number,
            seats,
            spectators,
            computers,
            rng.choice(["seat_order", "roll_off"]),
            late,
            rng,
        )

    async def play(self, table: SoakTable) -> None:
        for client in table.clients:
            await client.connect()
        host = table.seats[0].client
        created = await host.create_room(
            seats=len(table.seats) + len(table.computers),
            first_player=table.first_player,
            computers=table.computers,
            hints=True,
            computer_delay_ms=self.options.computer_delay_ms,
        )
        table.room = room = created.room
        table.created_at = time.monotonic()
        for spectator in table.spectators:
            await spectator.spectate(room)
        for i, seat in enumerate(table.seats):
            await seat.client.join(room, f"P{i}")
            seat.player = seat.client.player

        async def watch(client: FaultClient) -> None:
            # not `results` (faultkit.play): a snapshot of a finished room has none
            await client.wait_for(lambda m: m.room == room and m.status is RoomStatus.FINISHED)

        parts = {
            **{f"seat {s.label}": self.play_seat(table, s) for s in table.seats},
            **{f"spectator {s.label}": watch(s) for s in table.spectators},
            "late spectator": self.late_spectator(table, watch),
            "spectator hints": self.spectator_hints(table),
        }
        tasks = [asyncio.create_task(c, name=name) for name, c in parts.items()]
        table.tasks.update((t.get_name(), t) for t in tasks)
        await asyncio.gather(*tasks)
        table.done = True

    async def late_spectator(self, table: SoakTable, watch: Any) -> None:
        if table.late_spectator_urls is None:
            return
        await asyncio.sleep(table.rng.uniform(3, 30))
        client = self.client(table.late_spectator_urls, f"t{table.number}late")
        table.late = client
        await client.connect()
        await client.spectate(table.room)
        self.late_spectators += 1
        await watch(client)

    async def spectator_hints(self, table: SoakTable) -> None:
        """The first spectator asks for a hint now and then while the game is on."""
        if not table.spectators or self.options.hint_rate <= 0:
            return
        client = table.spectators[0]
        while True:
            await asyncio.sleep(
                table.rng.uniform(2, 6) * self.options.delay / self.options.hint_rate
            )
            model = client.model
            if model is None or model.status is RoomStatus.FINISHED:
                return
            if model.status is RoomStatus.PLAYING and not model.turn_over:
                with contextlib.suppress(CommandError):  # counted by the FaultClient
                    await client.hint()
                    self.hints += 1

    async def play_seat(self, table: SoakTable, seat: Seat) -> None:
        """:func:`clients.bot.play_seat`, plus hints and a rejoin between two moves."""
        acted_at = -1
        moves = 0
        delay = self.options.delay
        while True:
            if seat.rejoin_after is not None and moves >= seat.rejoin_after:
                seat.rejoin_after = None
                await self.rejoin(table, seat)
                acted_at = -1
            client = seat.client
            model = await client.wait_for(_needs(seat.player, acted_at))
            if model.status is RoomStatus.FINISHED:
                return
            acted_at = model.seq
            client.note(f"bot: my move at seq {model.seq} ({model.status} {model.phase})")
            if delay:
                await asyncio.sleep(delay * table.rng.uniform(0.5, 1.5))
            try:
                if model.status is RoomStatus.LOBBY:
                    await client.start()
                    continue
                if table.rng.random() < self.options.hint_rate:
                    with contextlib.suppress(CommandError):  # counted by the FaultClient
                        await client.hint()
                        self.hints += 1
                if model.phase is Phase.AWAITING_ROLL:
                    await client.roll()
                else:
                    decision = decide(model.dice, model.rolls_left, model.preview)
                    if decision.score is not None:
                        await client.score(decision.score)
                    else:
                        await client.roll(keep=decision.keep)
                moves += 1
            except CommandError as exc:
                client.note(f"bot: refused {exc.code} (retryable={exc.retryable}, seq={exc.seq})")
                if exc.code == "stale_state" and exc.seq is not None:
                    seq = exc.seq
                    await client.wait_for(lambda m, s=seq: m.seq >= s)
                elif exc.retryable:
                    await asyncio.sleep(0.5)
                    acted_at = -1
                elif (
                    model.phase is Phase.ROLLED
                    and model.current_player == seat.player
                    and not model.turn_over
                ):
                    with contextlib.suppress(CommandError):
                        await client.score(choose_box(model.preview))

    async def rejoin(self, table: SoakTable, seat: Seat) -> None:
        """Close the seat's client (no command of it is pending) and take the seat back with
        its token on a fresh client: a snapshot, then live events."""
        old = seat.client
        token = old.token
        assert token is not None
        await old.close()
        fresh = self.client(seat.urls, f"{seat.label}r{len(seat.earlier) + 1}")
        seat.earlier.append(old)
        seat.client = fresh
        await fresh.connect()
        await fresh.rejoin(table.room, token)
        table.rejoins += 1
        self.rejoins += 1

    async def worker(self, n: int) -> None:
        while time.monotonic() < self.deadline and not self.stopping.is_set():
            number = self.table_count
            self.table_count += 1
            table = self.new_table(number)
            self.tables[number] = table
            self.running.add(number)
            self.computers += len(table.computers)
            try:
                stuck = await self.watch_over(table)
                if stuck is not None:
                    self.game_failed(table, stuck, await self.describe(table))
            except Exception as exc:
                text = "".join(traceback.format_exception(exc, limit=-8))
                self.game_failed(table, f"harness: {type(exc).__name__}", text)
            finally:
                await self.clean_up(table)
                self.running.discard(number)
            if table.done:
                await self.check(table)
            del self.tables[number]

    async def clean_up(self, table: SoakTable) -> None:
        """Cancel the table's coroutines and close its clients, for at most ``CLEANUP_SECONDS``:
        a hang here (reported, with what still waits) must not hold the room's check past the
        room's retention, when its log is gone (the tenth session's "log unreadable" room was
        first read 14 minutes after its game ended; finished rooms are kept 4)."""
        for task in table.tasks.values():
            task.cancel()

        async def cancelled_and_closed() -> None:
            await asyncio.gather(*table.tasks.values(), return_exceptions=True)
            await asyncio.gather(*(c.close() for c in table.clients), return_exceptions=True)

        try:
            await asyncio.wait_for(cancelled_and_closed(), CLEANUP_SECONDS)
        except TimeoutError:
            self.cleanups_hung += 1
            say(f"table {table.number}: clean-up hung {CLEANUP_SECONDS:.0f} s; checked all the"
                f" same: {await self.describe(table)}")  # fmt: skip

    async def watch_over(self, table: SoakTable) -> str | None:
        """Play the table; the reason it is stuck (then it is left running, for
        :meth:`describe`; the caller cancels it), or None once it is over. Stuck: every client
        has seen the game end for ``STUCK_AFTER_OVER`` seconds but some coroutine still waits,
        or longer than ``--game-timeout`` in all."""
        game = table.tasks["game"] = asyncio.create_task(self.play(table))
        began = time.monotonic()
        over_since: float | None = None
        while True:
            await asyncio.wait({game}, timeout=2)
            if game.done():
                game.result()  # raises what the game raised
                return None
            models = [c.model for c in table.live_clients]
            if table.over_at is None and any(
                m is not None and m.status is RoomStatus.FINISHED for m in models
            ):
                table.over_at = time.monotonic()
            if table.room and all(
                m is not None and m.status is RoomStatus.FINISHED for m in models
            ):
                over_since = over_since or time.monotonic()
                if time.monotonic() - over_since > STUCK_AFTER_OVER:
                    return "stuck after game_over"
            else:
                over_since = None
            if time.monotonic() - began > self.options.game_timeout:
                return "stuck"

    async def describe(self, table: SoakTable) -> str:
        """What every client of a stuck table shows, what it waits for, which of the table's
        coroutines are still running (and where they wait), and the tail of the room's log."""
        parts = [f"room {table.room or '?'}"]
        for c in table.clients:
            m = c.model
            state = f"seq {m.seq} {m.status} {m.phase} cur {m.current_player}" if m else "no model"
            pending = {k: message_type(v.command) for k, v in c._pending.items()}
            acks = list(c.acked.items())[-3:]
            parts.append(
                f"{c.label}({c.player or '-'}) {c.status} on {c.url} reconnects {c.reconnects}: "
                f"{state}; pending {pending}; last acks {acks}"
            )
        for c in table.clients:
            trail = "\n      ".join(list(c.trail)[-15:])
            parts.append(f"{c.label} trail:\n      {trail}")
        for name, task in table.tasks.items():
            if not task.done() and name != "game":
                parts.append(f"waiting: {name} at {' > '.join(_await_chain(task.get_coro()))}")
        if table.room:
            try:
                async with asyncio.timeout(20):
                    raw = await self.fetch_log(table.room)
                tail = [(e.get("seq"), e.get("type"), e.get("player")) for e in raw[-5:]]
                parts.append(f"log tail {tail}")
            except (TimeoutError, RuntimeError) as exc:
                parts.append(f"log unreadable: {exc}")
        return "\n    ".join(parts)

    def game_failed(self, table: SoakTable, reason: str, detail: str) -> None:
        self.failed[reason] += 1
        text = f"t={self.now():.0f}s table {table.number} {reason}: {detail}"
        self.failures.append(text)
        if len(self.failures) <= 20:
            say(f"GAME FAILED {text[:3000]}")

    # -- the checker -------------------------------------------------------------------------

    def hooks(self) -> dict[str, list[Callable[..., Any]]]:
        async def count(response: httpx.Response) -> None:
            self.http_statuses[response.status_code] += 1

        return {"response": [count]}

    async def fetch_log(self, room: str) -> list[dict[str, Any]]:
        deadline = time.monotonic() + 180
        last: BaseException | None = None
        async with httpx.AsyncClient(timeout=10, event_hooks=self.hooks()) as http:
            while time.monotonic() < deadline:
                for base in self.alive_http():
                    try:
                        return await read_log(base, room, http=http)
                    except (AssertionError, httpx.HTTPError, OSError) as exc:
                        last = exc
                await asyncio.sleep(1)
        raise RuntimeError(f"the log of {room} could not be read: {last}")

    async def check(self, table: SoakTable) -> None:
        try:
            raw = await self.fetch_log(table.room)
        except RuntimeError as exc:
            now = time.monotonic()
            ages = [
                f"{what} {now - at:.0f} s before"
                for what, at in (("created", table.created_at), ("over", table.over_at))
                if at is not None
            ]
            kept = f"finished rooms are kept {self.options.retention} s"
            self.game_failed(table, "log unreadable", f"{exc} ({', '.join(ages)}; {kept})")
            return
        log = [as_event(e) for e in raw]
        found = check_soak_room(table, log, raw)
        self.finished += 1
        verdict = verify_log(raw)
        self.dice[verdict.status.value] += 1
        if verdict.status is not Status.VERIFIED:
            found.append(("dice", f"{table.room}: fair dice: {verdict.describe()}"))
        for kind, text in found:
            if kind != "(trail)":
                self.violations[kind] += 1
            if not text:
                continue
            self.problems.append(f"t={self.now():.0f}s {text}")
            if len(self.problems) <= 40:
                say(f"VIOLATION [{kind}] {text}")

    # -- lobby -------------------------------------------------------------------------------

    async def lobby_watcher(self, n: int) -> None:
        slot = self.slots[n % 2]
        timeout = httpx.Timeout(10, read=45)
        async with httpx.AsyncClient(timeout=timeout, event_hooks=self.hooks()) as http:
            while not self.stopping.is_set():
                try:
                    async with http.stream("GET", f"{slot.http}/lobby") as reply:
                        self.lobby_statuses[reply.status_code] += 1
                        if reply.status_code != 200:
                            await asyncio.sleep(1)
                            continue
                        async for line in reply.aiter_lines():
                            if not line.startswith("data:"):
                                continue
                            try:
                                body = json.loads(line[5:])
                                assert isinstance(body["rooms"], list)
                            except (ValueError, KeyError, TypeError, AssertionError):
                                self.lobby_bad += 1
                                continue
                            self.lobby_events += 1
                except (httpx.HTTPError, OSError):
                    pass
                self.lobby_reconnects += 1
                await asyncio.sleep(1)

    # -- chaos -------------------------------------------------------------------------------

    async def chaos(self) -> None:
        kinds = list(self.backend.actions)
        weights = [self.backend.actions[k] for k in kinds]
        while True:
            pause = self.rng.uniform(self.options.chaos_min, self.options.chaos_max)
            if time.monotonic() + pause > self.deadline - 5:
                return
            await asyncio.sleep(pause)
            kind = self.rng.choices(kinds, weights)[0]
            start = time.monotonic()
            try:
                detail = await getattr(self, kind)()
            except Exception as exc:
                detail = f"FAILED: {type(exc).__name__}: {exc}"
                self.failed["chaos step failed"] += 1
                self.failures.append(f"t={self.now():.0f}s chaos {kind} {detail}")
            end = self.cleared_at if self.cleared_at is not None else time.monotonic()
            self.windows.append((start, end))
            self.window_kinds.append(kind)
            self.cleared_at = None
            self.faults[kind] += 1
            line = f"t={start - self.t0:.0f}s {kind}: {detail}"
            self.fault_log.append(line)
            say(f"chaos {line}")

    cleared_at: float | None = None

    async def kill_server(self) -> str:
        names = [s for s in self.slots if s.alive]
        if not self.options.kill_both:
            names = [s for s in names if s.name == "B"] or names
        slot = self.rng.choice(names)
        assert slot.server is not None
        slot.server.kill()
        self.cleared_at = time.monotonic()  # the other process serves at once
        down = self.rng.uniform(1, 4)
        await asyncio.sleep(down)
        began = time.monotonic()
        await self.start_slot(slot)
        ready = time.monotonic() - began
        return f"SIGKILL {slot.name}, restarted after {down:.1f} s (ready in {ready:.1f} s)"

    async def redis_restart(self) -> str:
        assert isinstance(self.backend, SingleRedis)
        server = self.backend.redis
        how = self.rng.choice([signal.SIGKILL, signal.SIGTERM])
        began = time.monotonic()
        server.signal(how)
        await asyncio.to_thread(server.wait_exit, 30)
        await asyncio.sleep(self.rng.uniform(1, 3))
        await asyncio.to_thread(server.start, 60)
        self.cleared_at = time.monotonic()
        return f"{how.name}, down {self.cleared_at - began:.1f} s"

    async def redis_freeze(self) -> str:
        assert isinstance(self.backend, SingleRedis)
        server = self.backend.redis
        length = self.rng.uniform(2, 6)
        server.signal(signal.SIGSTOP)
        try:
            await asyncio.sleep(length)
        finally:
            server.signal(signal.SIGCONT)
        self.cleared_at = time.monotonic()
        return f"SIGSTOP for {length:.1f} s"

    async def drop_clients(self) -> str:
        clients = [
            c for t in list(self.tables.values()) for c in t.live_clients if c.status == "connected"
        ]
        share = self.rng.uniform(0.1, 0.4)
        chosen = self.rng.sample(clients, round(len(clients) * share))
        for client in chosen:
            await client.drop_connection()
        self.cleared_at = time.monotonic()
        return f"{len(chosen)} of {len(clients)} connections cut"

    async def kill_master(self) -> str:
        assert isinstance(self.backend, Cluster)
        backend = self.backend
        if not await asyncio.to_thread(backend.cluster.healthy):
            return "skipped: the cluster is not healthy"
        masters = await asyncio.to_thread(backend.masters)
        if not masters:
            return "skipped: no master found"
        victim, ranges = self.rng.choice(masters)
        began = time.monotonic()
        await asyncio.to_thread(backend.cluster.kill, victim)
        first = ranges[0][0]
        promoted: ClusterNodeProcess | None = None
        while time.monotonic() < began + 60:
            owner = await asyncio.to_thread(backend.owner, first)
            if owner is not None and owner is not victim and owner.alive:
                promoted = owner
                break
            await asyncio.sleep(0.05)
        self.cleared_at = time.monotonic()
        if promoted is None:
            raise RuntimeError(f"no replica took the slots of {victim.name} in 60 s")
        took = self.cleared_at - began
        await asyncio.sleep(self.rng.uniform(1, 5))
        await asyncio.to_thread(backend.cluster.restart, victim)
        return (
            f"SIGKILL master {victim.name} (slots {ranges}), {promoted.name} promoted in "
            f"{took:.1f} s, old master back as a replica"
        )

    # -- samples and reports -----------------------------------------------------------------

    def sample_now(self) -> None:
        t = self.now()
        for slot in self.slots:
            pid = slot.pid
            if pid is None:
                continue
            try:
                process = psutil.Process(pid)
                rss = process.memory_info().rss
                total = process.num_fds()
                clients = sum(
                    1
                    for c in process.net_connections("tcp")
                    if c.status == psutil.CONN_ESTABLISHED and c.laddr and c.laddr.port == slot.port
                )
            except (psutil.Error, OSError):
                continue
            self.rss[slot.name].add(pid, t, rss / KIB)
            self.fds_total[slot.name].add(pid, t, total)
            self.fds[slot.name].add(pid, t, total - clients)
        memory = self.backend.used_memory()
        if memory is not None:
            self.redis_memory.add(memory[0], t, memory[1] / KIB)
        if t <= self.options.minutes * 60:  # CPU while under load
            roles = [("servers", s.pid) for s in self.slots]
            roles += [("redis", pid) for pid in self.backend.pids()]
            for role, pid in roles:
                with contextlib.suppress(psutil.Error, OSError):
                    if pid is not None:
                        times = psutil.Process(pid).cpu_times()
                        self.cpu[(role, pid)] = times.user + times.system
            self.cpu[("soak driver", 0)] = time.process_time() - self.cpu_at_start
            self.cpu_wall = t

    async def sampler(self) -> None:
        while not self.stopping.is_set():
            await asyncio.to_thread(self.sample_now)
            await asyncio.sleep(self.options.sample_every)

    async def reporter(self) -> None:
        while True:
            await asyncio.sleep(self.options.report_every)
            say(self.summary_line())

    def cpu_shares(self) -> dict[str, float]:
        """CPU seconds per wall second (1.0 = one core) of the servers, Redis and this
        process, sampled while under load (a killed process counts up to its last sample)."""
        out: Counter[str] = Counter()
        for (role, _), seconds in self.cpu.items():
            out[role] += seconds
        return {k: round(v / max(self.cpu_wall, 1.0), 3) for k, v in out.items()}

    def recoveries(self, by_kind: bool = False) -> Any:
        """Per disruption: recovered - max(disrupted, end of the fault before the recovery);
        0 if it recovered before that fault's end was noted. ``by_kind``: a list per kind of
        that fault ("none" before the first)."""
        starts = [s for s, _ in self.windows]
        out: dict[str, list[float]] = {}
        for disrupted, recovered in self.stats.disruptions:
            i = bisect_right(starts, recovered) - 1
            if i < 0:
                out.setdefault("none", []).append(recovered - disrupted)
                continue
            end = self.windows[i][1]
            took = 0.0 if recovered < end else recovered - max(disrupted, end)
            out.setdefault(self.window_kinds[i], []).append(took)
        return out if by_kind else [r for values in out.values() for r in values]

    def recovery_by_kind(self) -> dict[str, str]:
        """p50 / p99 / max ms (count) of the recoveries after each kind of fault."""
        return {
            kind: f"{_ms(percentile(v, 50))} / {_ms(percentile(v, 99))} / {_ms(max(v))} ({len(v)})"
            for kind, v in sorted(self.recoveries(by_kind=True).items())
        }

    def slopes(self, with_cover: bool = False) -> dict[str, Any]:
        """Slopes per minute (RSS and Redis in KiB, descriptors in units); ``with_cover``:
        (slope, minutes of samples after the warm-ups) pairs."""
        window = (
            self.options.warmup_minutes(self.options.minutes) * 60,
            self.options.segment_warmup,
            self.options.minutes * 60,
        )
        out: dict[str, tuple[float, float]] = {}
        for name in self.rss:
            out[f"rss {name}"] = self._slope(self.rss[name], window)
            out[f"fds {name}"] = self._slope(self.fds[name], window)
        # Redis restarted (or, on the Cluster, a master failed over: the nodes' pids change)
        # is a new life too: a replica's full sync refills its buffers in each, so Redis is
        # judged by the same rule as the processes
        out["redis"] = self._slope(self.redis_memory, window)
        return out if with_cover else {k: v[0] for k, v in out.items()}

    @staticmethod
    def _slope(series: Series, window: tuple[float, float, float]) -> tuple[float, float]:
        """A process that ran the whole phase: its slope after the warm-up. One that was killed
        and restarted (lives of a few minutes, each mostly warm-up): the slope across its
        lives at the same age (:meth:`Series.slope_across_restarts`)."""
        if series.restarts < 3:
            return series.slope_per_minute(*window)
        return series.slope_across_restarts(*window)

    def warmup_slopes(self) -> dict[str, float]:
        """The pooled slopes within the lives of restarted processes (their warm-up, shown but
        not judged)."""
        window = (
            self.options.warmup_minutes(self.options.minutes) * 60,
            self.options.segment_warmup,
            self.options.minutes * 60,
        )
        out = {}
        for name, series in self.rss.items():
            if series.restarts >= 3:
                out[f"rss {name}"] = series.slope_per_minute(*window)[0]
                out[f"fds {name}"] = self.fds[name].slope_per_minute(*window)[0]
        if self.redis_memory.restarts >= 3:
            out["redis"] = self.redis_memory.slope_per_minute(*window)[0]
        return out

    def timeline(self) -> list[str]:
        """RSS (MiB), descriptors (all / other) and Redis memory (MiB) every tenth of the run
        (whole minutes)."""
        step = max(60, round(self.options.minutes / 10) * 60)
        near = 2 * self.options.sample_every
        rows = []
        for mark in range(0, int(self.now()) + 1, step):
            cells = [f"{mark / 60:4.0f} min"]
            for n in self.rss:
                cells.append(
                    f"{n} {self.rss[n].at(mark, near) / KIB:6.1f} MiB "
                    f"fds {self.fds_total[n].at(mark, near):4.0f}/{self.fds[n].at(mark, near):3.0f}"
                )
            cells.append(f"redis {self.redis_memory.at(mark, near) / KIB:6.2f} MiB")
            rows.append(" | ".join(cells))
        return rows

    def summary_line(self) -> str:
        rec = self.recoveries()
        top = _ms(max(rec, default=math.nan))
        slopes = self.slopes()
        servers = " ".join(
            f"{n}: rss {self.rss[n].last / KIB:.1f} MiB ({slopes[f'rss {n}']:+.0f} KiB/min) "
            f"fds {self.fds_total[n].last:.0f} other {self.fds[n].last:.0f} "
            f"({slopes[f'fds {n}']:+.2f}/min);"
            for n in self.rss
        )
        return (
            f"{self.backend.name} t={self.now() / 60:.1f} min: games {self.finished} checked, "
            f"{len(self.running)} playing, failed {dict(self.failed) or 0}; violations "
            f"{dict(self.violations) or 0}; internal_error {self.stats.errors['internal_error']}; "
            f"errors {dict(self.stats.errors)}; faults {dict(self.faults)}; recovery p50/p99/max "
            f"{_ms(percentile(rec, 50))}/{_ms(percentile(rec, 99))}/{top} "
            f"ms ({len(rec)}); {servers} redis {self.redis_memory.last / KIB:.1f} MiB "
            f"({slopes['redis']:+.0f} KiB/min); lobby events {self.lobby_events} reconnects "
            f"{self.lobby_reconnects}; HTTP {dict(self.http_statuses)}; "
            f"tracebacks {dict(self.tracebacks()[1]) or 0}"
        )

    def tracebacks(self) -> tuple[int, Counter[str], dict[str, str]]:
        """Tracebacks in the server logs: how many (a chained one counts once), how many of each
        kind (the last exception's type and the innermost frame of the service's own code),
        and one excerpt of each kind."""
        kinds: Counter[str] = Counter()
        excerpts: dict[str, str] = {}
        for slot in self.slots:
            if slot.log_path.exists():
                lines = slot.log_path.read_text(errors="replace").splitlines()
                for kind, excerpt in _traceback_incidents(lines):
                    kinds[kind] += 1
                    excerpts.setdefault(kind, f"server {slot.name}:\n{excerpt}")
        return sum(kinds.values()), kinds, excerpts

    # -- the phase ---------------------------------------------------------------------------

    async def run(self) -> dict[str, Any]:
        say(f"phase {self.backend.name}: starting Redis ({self.dir})")
        await self.backend.start()
        for slot in self.slots:
            await self.start_slot(slot)
        say(
            f"phase {self.backend.name}: servers A :{self.slots[0].port}, B :{self.slots[1].port};"
            f" {self.options.games} tables at once for {self.options.minutes:g} min"
        )
        self.t0 = time.monotonic()
        self.deadline = self.t0 + self.options.minutes * 60
        self.cpu_at_start = time.process_time()
        background = [
            asyncio.create_task(self.sampler()),
            asyncio.create_task(self.reporter()),
            *(asyncio.create_task(self.lobby_watcher(n)) for n in range(self.options.lobby)),
        ]
        chaos = asyncio.create_task(self.chaos())
        workers = [asyncio.create_task(self.worker(n)) for n in range(self.options.games)]
        try:
            await chaos
            say(f"{self.backend.name}: chaos over; the last games finish")
            # bounded: a table whose coroutine hangs (the harness's, not the server's) must not
            # keep the report from being written; it counts as a failed game
            _, hung = await asyncio.wait(workers, timeout=self.options.game_timeout + 120)
            for number in sorted(self.running) if hung else []:
                self.game_failed(
                    self.tables[number], "not finished after the run",
                    f"its coroutine did not end {self.options.game_timeout + 120:.0f} s after "
                    f"the chaos ended (room {self.tables[number].room or '?'})",
                )  # fmt: skip
            self.stopping.set()
            await asyncio.to_thread(self.sample_now)
        finally:
            for task in [*background, chaos, *workers]:
                task.cancel()
            await asyncio.gather(*background, chaos, *workers, return_exceptions=True)
            for table in list(self.tables.values()):
                await asyncio.gather(*(c.close() for c in table.clients), return_exceptions=True)
        return self.figures()

    def stop(self) -> None:
        for slot in self.slots:
            if slot.server is not None:
                slot.server.kill()
        self.backend.stop()

    def figures(self) -> dict[str, Any]:
        rec = self.recoveries()
        slopes = self.slopes()
        count, traceback_kinds, excerpts = self.tracebacks()
        o = self.options
        goals = {
            "games finished (none failed)": self.finished > 0 and not self.failed,
            "checker violations 0": not self.violations,
            "internal_error 0, HTTP 500 0": (
                self.stats.errors["internal_error"] == 0 and not self.http_statuses[500]
            ),
            "tracebacks 0": count == 0,
            "lobby streams readable, no 500": (
                self.lobby_events > 0 and self.lobby_bad == 0 and not self.lobby_statuses[500]
            ),
        }
        for name, (value, cover) in self.slopes(with_cover=True).items():
            limit = (
                o.max_redis_slope
                if name == "redis"
                else o.max_rss_slope
                if name.startswith("rss")
                else o.max_fd_slope
            )
            unit = "/min" if name.startswith("fds") else " KiB/min"
            if cover < MIN_SLOPE_MINUTES:
                goals[f"{name} slope: not judged ({cover:.1f} min of samples after warm-up)"] = True
            else:
                goals[f"{name} slope < {limit:g}{unit}"] = math.isnan(value) or value < limit
        return {
            "backend": self.backend.name,
            "minutes": round(self.now() / 60, 1),
            "games checked": self.finished,
            "tables started": self.table_count,
            "games failed": dict(self.failed),
            "events lost": self.violations["lost"],
            "events duplicated or reordered": self.violations["duplicate/reordered"],
            "events differing from the log": self.violations["differs"],
            "violations": dict(self.violations),
            "computers": self.computers,
            "hints": self.hints,
            "rejoins": self.rejoins,
            "late spectators": self.late_spectators,
            "table clean-ups that hung (checked all the same)": self.cleanups_hung,
            "clients": self.clients_made,
            "errors": dict(sorted(self.stats.errors.items())),
            "internal_error": self.stats.errors["internal_error"],
            "faults": dict(self.faults),
            "disrupted clients": self.stats.disrupted_clients,
            "recoveries": len(rec),
            "recovery ms p50": _ms(percentile(rec, 50)),
            "recovery ms p99": _ms(percentile(rec, 99)),
            "recovery ms max": _ms(max(rec, default=math.nan)),
            "recovery ms p50 / p99 / max by fault": self.recovery_by_kind(),
            "CPU (cores) while under load": self.cpu_shares(),
            "round trip ms p50": _ms(percentile(self.stats.latencies, 50)),
            "round trip ms p99": _ms(percentile(self.stats.latencies, 99)),
            "server starts": {s.name: s.starts for s in self.slots},
            "rss MiB last": {n: _round(s.last / KIB) for n, s in self.rss.items()},
            "rss MiB peak": {n: _round(s.peak / KIB) for n, s in self.rss.items()},
            "fds peak": {n: _round(s.peak) for n, s in self.fds_total.items()},
            "other fds last/peak": {
                n: (_round(s.last), _round(s.peak)) for n, s in self.fds.items()
            },
            "redis used_memory MiB last/peak": (
                _round(self.redis_memory.last / KIB),
                _round(self.redis_memory.peak / KIB),
            ),
            "slopes (KiB/min, fds/min)": {k: _round(v, 2) for k, v in slopes.items()},
            "slopes within lives of a restarted process (warm-up, not judged)": {
                k: _round(v, 2) for k, v in self.warmup_slopes().items()
            },
            "warm-up min": o.warmup_minutes(o.minutes),
            "lobby": {
                "events": self.lobby_events,
                "reconnects": self.lobby_reconnects,
                "statuses": dict(self.lobby_statuses),
                "unreadable": self.lobby_bad,
            },
            "dice": dict(self.dice),
            "http statuses (log reads, lobby)": dict(self.http_statuses),
            "tracebacks": count,
            "tracebacks by kind": dict(traceback_kinds),
            "traceback excerpts": excerpts,
            "failures": self.failures[:20],
            "problems": self.problems[:200],
            "fault log": self.fault_log,
            "timeline": self.timeline(),
            "samples": {
                "rss KiB": {n: s.points for n, s in self.rss.items()},
                "fds": {n: s.points for n, s in self.fds_total.items()},
                "other fds": {n: s.points for n, s in self.fds.items()},
                "redis KiB": self.redis_memory.points,
            },
            "goals": goals,
        }


_FRAME = re.compile(r'\s*File "([^"]+)", line (\d+), in (\S+)')


def _traceback_incidents(lines: list[str]) -> list[tuple[str, str]]:
    """(kind, excerpt) of every traceback in a log's lines; chained tracebacks ("During
    handling of the above exception", "The above exception was the direct cause") are one."""
    found: list[tuple[str, str]] = []
    i = 0
    while i < len(lines):
        if not lines[i].startswith("Traceback (most recent call last):"):
            i += 1
            continue
        start = max(0, i - 2)
        frames: list[str] = []  # the service's own frames, outermost first
        final = "?"
        while i < len(lines):
            line = lines[i]
            if line.startswith("  File "):
                match = _FRAME.match(line)
                if match and f"{os.sep}server{os.sep}" in line and "site-packages" not in line:
                    frames.append(f"{Path(match[1]).name}:{match[2]} {match[3]}")
            elif line and not line.startswith((" ", "Traceback", "During handling", "The above")):
                final = line
                following = lines[i + 1 : i + 4]
                if not any(f.startswith(("During handling", "The above")) for f in following):
                    break
            i += 1
        name = final.split(":", 1)[0]
        outer = [f for f in frames if not f.startswith("app.py")][:1]
        where = " -> ".join(dict.fromkeys([*outer, *frames[-1:]])) or "?"
        found.append((f"{name} in {where}", "\n".join(lines[start : i + 1])[-4000:]))
        i += 1
    return found


def _await_chain(coro: Any) -> list[str]:
    """Where a suspended coroutine waits: function:line of each coroutine it awaits, in."""
    out = []
    while coro is not None:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is not None:
            out.append(f"{frame.f_code.co_name}:{frame.f_lineno}")
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return out


def _ms(seconds: float) -> float | None:
    return None if math.isnan(seconds) else round(seconds * 1000, 1)


def _round(value: float, digits: int = 1) -> float | None:
    return None if math.isnan(value) else round(value, digits)


# ---------------------------------------------------------------------------- the room check


def check_soak_room(
    table: SoakTable, log: Sequence[Event], raw: Sequence[dict[str, Any]]
) -> list[tuple[str, str]]:
    """:func:`faultkit.check_room` for rooms with computers and rejoined seats: the effects of
    the people's acknowledged commands, and every client's stream (see the module docstring).
    Returns (kind, text) pairs; kinds: lost, duplicate/reordered, differs, resync, short stream,
    effects, log."""
    room = table.room
    found: list[tuple[str, str]] = []
    if [e.seq for e in log] != list(range(1, len(log) + 1)):
        found.append(("log", f"{room}: the log's seqs are not 1..{len(log)}"))
    kinds = Counter(message_type(e) for e in log)
    if kinds["game_started"] != 1 or kinds["game_over"] != 1:
        found.append(
            ("log", f"{room}: {kinds['game_started']} game_started, {kinds['game_over']} over")
        )
    people = {s.player for s in table.seats}
    used: set[int] = set()
    rolls = scores = 0
    for seat in table.seats:
        for client in seat.clients:
            for command_id, (kind, seq) in client.acked.items():
                if kind == "roll":
                    rolls += 1
                    event = log[seq - 1] if seq is not None and 0 < seq <= len(log) else None
                    if (
                        event is None
                        or message_type(event) != "rolled"
                        or getattr(event, "player", None) != seat.player
                    ):
                        found.append(
                            ("effects", f"{room}: acked roll {command_id} is not a rolled at {seq}")
                        )
                    elif seq in used:
                        found.append(("effects", f"{room}: two acked rolls share seq {seq}"))
                    else:
                        assert seq is not None
                        used.add(seq)
                elif kind == "score":
                    scores += 1
    logged_rolls = sum(
        1 for e in log if message_type(e) == "rolled" and getattr(e, "player", None) in people
    )
    logged_scores = sum(
        1
        for e in log
        if message_type(e) == "scored"
        and getattr(e, "player", None) in people
        and not getattr(e, "automatic", False)
    )
    if logged_rolls != rolls:
        found.append(("effects", f"{room}: {logged_rolls} people's rolled for {rolls} acked"))
    if logged_scores != scores:
        found.append(("effects", f"{room}: {logged_scores} people's scored for {scores} acked"))
    current = {id(c) for c in table.live_clients}
    for client in table.clients:
        problems = check_stream(client, room, log, to_the_end=id(client) in current)
        if problems and isinstance(client, SoakClient):  # the trail first: it explains them
            trail = "\n      ".join(list(client.trail)[-30:])
            found.append(("(trail)", f"{room}/{client.label} trail:\n      {trail}"))
        for n, problem in enumerate(problems):
            # every one counted; the first few of a client told, then how many more
            shown = problem if n < PROBLEMS_TOLD else ""
            if n == len(problems) - 1 and n >= PROBLEMS_TOLD:
                shown = f"{room}/{client.label}: {n + 1 - PROBLEMS_TOLD} more like these"
            found.append((_kind(problem), shown))
    return found


def _kind(problem: str) -> str:
    for marker, kind in (
        ("lost seq", "lost"),
        ("duplicate or reordered", "duplicate/reordered"),
        ("differs from the log", "differs"),
        ("beyond the log", "differs"),
        ("resynchronised", "resync"),
        ("does not start with a snapshot", "resync"),
        ("the stream stops", "short stream"),
    ):
        if marker in problem:
            return kind
    return "log"


# ---------------------------------------------------------------------------- main


def print_report(figures: dict[str, Any]) -> None:
    print(f"\n===== chaos soak: {figures['backend']} =====", flush=True)
    skip = {"samples", "traceback excerpts", "problems", "failures", "fault log", "goals"}
    skip.add("timeline")
    for key, value in figures.items():
        if key not in skip and value is not None:
            print(f"  {key}: {value}")
    for name in ("failures", "problems"):
        for line in figures[name][:10]:
            print(f"  {name[:-1]}: {line[:1500]}")
    print("  timeline (RSS, descriptors all/other, Redis used_memory):")
    for row in figures["timeline"]:
        print(f"    {row}")
    for kind, excerpt in list(figures["traceback excerpts"].items())[:5]:
        print(f"  traceback {kind}:\n    " + excerpt[-2500:].replace("\n", "\n    "))
    print("  goals:")
    for goal, met in figures["goals"].items():
        print(f"    [{'ok' if met else 'MISSED'}] {goal}")


async def run(options: Options) -> int:
    say(
        f"seed {options.seed}; phases {', '.join(options.backends)}, {options.minutes:g} min each;"
        f" workdir {options.workdir}"
    )
    began = time.monotonic()
    await asyncio.to_thread(table_for, SolverRules(), default_cache_dir())
    say(f"strategy table ready in {time.monotonic() - began:.1f} s ({default_cache_dir()})")
    rng = random.Random(options.seed)
    reports = []
    for name in options.backends:
        backend: Backend = SingleRedis(options.workdir / name) if name == "single" else Cluster()
        soak = Soak(options, backend, rng)
        try:
            figures = await soak.run()
        finally:
            soak.stop()
        print_report(figures)
        reports.append(figures)
    target = options.json_path or options.workdir / "report.json"
    meta = {"seed": options.seed, "options": {k: str(v) for k, v in vars(options).items()}}
    target.write_text(json.dumps({**meta, "phases": reports}, indent=1, default=str) + "\n")
    missed = [f"{r['backend']}: {g}" for r in reports for g, ok in r["goals"].items() if not ok]
    say(f"report written to {target}; seed {options.seed}")
    if missed:
        say("GOALS MISSED: " + "; ".join(missed))
        return 1
    say("every goal met")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    options = parse(sys.argv[1:] if argv is None else argv)
    return asyncio.run(run(options))


if __name__ == "__main__":
    sys.exit(main())
