"""The servers under test as subprocesses, and what they cost (CPU seconds, RSS) by process tree.

``yahtzee serve`` is started as ``python -m server.cli serve`` (a subprocess: the bench never
imports the server); without ``REDIS_URL`` it starts its own embedded Valkey as a child, so the
tree of the serve process holds the workers and their Redis. On a Redis Cluster
(``--redis-cluster``) it is ``python -m server.ops.cluster_demo`` (what ``.ci/dev.py cluster``
runs): an embedded cluster of 3 masters with a replica each and N server processes on
consecutive ports, all children of that one process, so their CPU is counted the same way.
Each bare server process is ``python -m clients.bench.bare`` on a port of its own.
"""

from __future__ import annotations

import contextlib
import os
import random
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import psutil

__all__ = [
    "Cost",
    "ServerGroup",
    "free_port",
    "start_bare",
    "start_game",
    "start_game_on_cluster",
    "start_game_processes",
]

REDIS_NAMES = ("valkey", "redis")
READY_TIMEOUT = 60.0
READY_POLL = 0.05  # seconds between readiness probes, bounded by READY_TIMEOUT


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def free_ports_in_a_row(count: int) -> int:
    """The first of ``count`` consecutive free ports, below the kernel's ephemeral range (the
    cluster's nodes, started after this choice, take ephemeral ports)."""
    rng = random.Random()
    for _ in range(500):
        first = rng.randrange(20_000, 32_000 - count)
        try:
            for port in range(first, first + count):
                with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                    sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        return first
    raise RuntimeError(f"no {count} consecutive free ports")


@dataclass(frozen=True)
class Cost:
    """CPU seconds (user + system) and RSS bytes of a group's processes, Redis apart."""

    server_cpu: float = 0.0
    redis_cpu: float = 0.0
    server_rss: int = 0
    redis_rss: int = 0

    def __sub__(self, other: Cost) -> Cost:
        return Cost(
            self.server_cpu - other.server_cpu,
            self.redis_cpu - other.redis_cpu,
            self.server_rss - other.server_rss,
            self.redis_rss - other.redis_rss,
        )


def _is_redis(proc: psutil.Process) -> bool:
    with contextlib.suppress(psutil.Error):
        return any(name in proc.name().lower() for name in REDIS_NAMES)
    return False


@dataclass(frozen=True)
class Collections:
    """Full garbage collections a game server ran, and the seconds they stopped its loop."""

    count: int
    seconds: float

    #: the histogram the server keeps of them (``server/ops/metrics.py``)
    METRIC: ClassVar[str] = "yahtzee_gc_collection_seconds"

    @classmethod
    def parse(cls, metrics: str) -> Collections:
        """Read them from a ``/metrics`` page (Prometheus' text format)."""
        values: dict[str, float] = {}
        for line in metrics.splitlines():
            name, _, value = line.partition(" ")
            if name in (f"{cls.METRIC}_count", f"{cls.METRIC}_sum"):
                values[name] = float(value)
        return cls(int(values.get(f"{cls.METRIC}_count", 0)), values.get(f"{cls.METRIC}_sum", 0.0))

    def __add__(self, other: Collections) -> Collections:
        return Collections(self.count + other.count, self.seconds + other.seconds)

    def __sub__(self, other: Collections) -> Collections:
        return Collections(self.count - other.count, self.seconds - other.seconds)


@dataclass
class ServerGroup:
    """The processes of one server under test, with the ports they listen on."""

    name: str
    ports: list[int]
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    log_paths: list[Path] = field(default_factory=list)
    # Processes seen in a tree stay counted after they exit (a worker that was replaced):
    # psutil keeps a Process's last CPU times only while we hold it.
    _seen: dict[int, psutil.Process] = field(default_factory=dict)

    def tree(self) -> list[psutil.Process]:
        procs: list[psutil.Process] = []
        for popen in self.processes:
            with contextlib.suppress(psutil.Error):
                root = psutil.Process(popen.pid)
                procs += [root, *root.children(recursive=True)]
        for proc in procs:
            self._seen.setdefault(proc.pid, proc)
        return [self._seen[p.pid] for p in procs]

    def cost(self) -> Cost:
        """CPU times and RSS summed over every process of the group's trees, now."""
        server_cpu = redis_cpu = 0.0
        server_rss = redis_rss = 0
        for proc in self.tree():
            try:
                times = proc.cpu_times()
                cpu = times.user + times.system
                rss = int(proc.memory_info().rss)
            except psutil.Error:
                continue
            if _is_redis(proc):
                redis_cpu, redis_rss = redis_cpu + cpu, redis_rss + rss
            else:
                server_cpu, server_rss = server_cpu + cpu, server_rss + rss
        return Cost(server_cpu, redis_cpu, server_rss, redis_rss)

    def collections(self) -> Collections:
        """The server's own garbage collections so far (``server/ops/collector.py``), summed
        over the ports' ``/metrics`` (with ``--workers N`` on one port, the worker that
        answered). None with ``YAHTZEE_GC_YOUNG_THRESHOLD`` set: Python's are not counted."""
        total = Collections(0, 0.0)
        for port in self.ports:
            url = f"http://127.0.0.1:{port}/metrics"
            with urllib.request.urlopen(url, timeout=READY_TIMEOUT) as resp:
                total += Collections.parse(resp.read().decode())
        return total

    def log(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-3000:] for p in self.log_paths)

    def stop(self) -> None:
        """SIGTERM each process (the game server drains), then wait; kill one that hangs."""
        for popen in self.processes:
            if popen.poll() is None:
                popen.terminate()
        for popen in self.processes:
            try:
                popen.wait(timeout=20)
            except subprocess.TimeoutExpired:
                popen.kill()
                popen.wait()


def _spawn(argv: list[str], env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    with log_path.open("ab") as log:
        return subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)


def _wait_ready(group: ServerGroup, path: str) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    for port in group.ports:
        while True:
            if any(p.poll() is not None for p in group.processes):
                raise RuntimeError(f"{group.name} server exited early:\n{group.log()}")
            with contextlib.suppress(OSError):
                url = f"http://127.0.0.1:{port}{path}"
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if resp.status == 200:
                        break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{group.name} server not ready:\n{group.log()}")
            time.sleep(READY_POLL)


def _start_game(group: ServerGroup, argv: list[str], env: dict[str, str], log: Path) -> ServerGroup:
    group.log_paths.append(log)
    group.processes.append(_spawn(argv, {**os.environ, **env}, log))
    try:
        _wait_ready(group, "/readyz")
    except BaseException:
        group.stop()
        raise
    return group


def start_game(workers: int, env: dict[str, str], directory: Path) -> ServerGroup:
    """``yahtzee serve --workers N`` on a free port; returns once ``/readyz`` answers."""
    port = free_port()
    argv = [sys.executable, "-m", "server.cli", "serve", "--port", str(port)]
    argv += ["--workers", str(workers)]
    return _start_game(ServerGroup("game", [port]), argv, env, directory / "game.log")


def start_game_on_cluster(servers: int, env: dict[str, str], directory: Path) -> ServerGroup:
    """An embedded Redis Cluster and ``servers`` game server processes on it (consecutive free
    ports); returns once every process's ``/readyz`` answers."""
    return _start_processes(servers, env, directory, [])


def start_game_processes(servers: int, env: dict[str, str], directory: Path) -> ServerGroup:
    """One embedded Redis-compatible server and ``servers`` game server processes on it, each on
    its own port (as a deployment behind a load balancer would run them)."""
    return _start_processes(servers, env, directory, ["--single"])


def _start_processes(
    servers: int, env: dict[str, str], directory: Path, extra: list[str]
) -> ServerGroup:
    port = free_ports_in_a_row(servers)
    argv = [sys.executable, "-m", "server.ops.cluster_demo", "--servers", str(servers)]
    argv += ["--port", str(port), *extra]
    group = ServerGroup("game", list(range(port, port + servers)))
    return _start_game(group, argv, env, directory / "game-cluster.log")


def start_bare(processes: int, heartbeat: float, directory: Path) -> ServerGroup:
    """``processes`` bare servers, each on its own free port."""
    group = ServerGroup("bare", [free_port() for _ in range(processes)])
    for i, port in enumerate(group.ports):
        argv = [sys.executable, "-m", "clients.bench.bare", "--port", str(port)]
        argv += ["--heartbeat", str(heartbeat)]
        group.log_paths.append(directory / f"bare-{i}.log")
        group.processes.append(_spawn(argv, dict(os.environ), group.log_paths[-1]))
    try:
        _wait_ready(group, "/")
    except BaseException:
        group.stop()
        raise
    return group
