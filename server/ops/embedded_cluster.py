"""A private Redis Cluster on this machine: masters with one replica each, for tests and demos.

Every node is the embedded ``valkey-server`` binary (``embedded_redis.find_server_binary``) in
cluster mode on free loopback ports, without persistence, in one temporary directory. The
slots are assigned here, with plain commands over redis-py (no ``--cluster create`` tool): the
16384 slots are split evenly over the masters (``CLUSTER ADDSLOTSRANGE``), the nodes meet
(``CLUSTER MEET``), each replica follows its master (``CLUSTER REPLICATE``), and the cluster is
ready when every node reports ``cluster_state:ok``, knows every other node, and every replica's
link to its master is up. Readiness is polled with a deadline, never slept for.

The nodes run with a short ``cluster-node-timeout`` (a replica is promoted about a second or two
after its master dies) and ``cluster-require-full-coverage no`` (the other masters go on serving
their slots while one is down).
"""

from __future__ import annotations

import atexit
import contextlib
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import redis

from server.ops.child_server import PORT_ATTEMPTS, Started, end_with_parent, free_port
from server.ops.embedded_redis import EmbeddedRedisError, answers_ping, find_server_binary

__all__ = ["ClusterNodeProcess", "EmbeddedCluster"]

SLOTS = 16384


@dataclass
class ClusterNodeProcess:
    """One ``valkey-server`` of the cluster."""

    port: int
    bus_port: int
    process: subprocess.Popen[bytes]
    log_path: Path
    node_id: str = ""
    #: The master this node was started to replicate (its index), or None for a master.
    replica_of: int | None = None
    slots: tuple[int, int] | None = None  # the range a master was given
    #: how many times this node was started again on other ports (see ``_all_answer``)
    restarts: int = 0

    @property
    def name(self) -> str:
        """redis-py's node name."""
        return f"127.0.0.1:{self.port}"

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None


@dataclass
class EmbeddedCluster(Started):
    """``masters`` masters, each with ``replicas`` replicas. Use as a context manager or call
    :meth:`start` / :meth:`stop`; :attr:`url` is a ``redis://`` URL of the first master."""

    masters: int = 3
    replicas: int = 1
    node_timeout_ms: int = 1000
    start_timeout: float = 30.0
    binary: str | None = None
    nodes: list[ClusterNodeProcess] = field(default_factory=list)
    _tmpdir: str | None = None

    @property
    def url(self) -> str:
        if not self.nodes:
            raise EmbeddedRedisError("the embedded cluster is not running")
        return f"redis://127.0.0.1:{self.nodes[0].port}/0"

    @property
    def master_nodes(self) -> list[ClusterNodeProcess]:
        return [n for n in self.nodes if n.replica_of is None]

    def replicas_of(self, index: int) -> list[ClusterNodeProcess]:
        return [n for n in self.nodes if n.replica_of == index]

    # -- starting -----------------------------------------------------------------------------

    def start(self) -> str:
        if self.nodes:
            return self.url
        binary = self.binary or find_server_binary()
        self._tmpdir = tempfile.mkdtemp(prefix="yahtzee-cluster-")
        atexit.register(self.stop)
        try:
            count = self.masters * (1 + self.replicas)
            for i in range(count):
                replica_of = None if i < self.masters else (i - self.masters) % self.masters
                self.nodes.append(self._spawn(binary, replica_of))
            self._wait(lambda: self._all_answer(binary), "start")
            self._assign()
        except BaseException:
            self.stop()
            raise
        return self.url

    def _spawn(
        self, binary: str, replica_of: int | None, ports: tuple[int, int] | None = None
    ) -> ClusterNodeProcess:
        assert self._tmpdir is not None
        if ports is None:
            # Every port of the cluster distinct: the kernel can hand the same free port out
            # twice before the first node binds it (a start failed so once in 45 runs).
            taken = {p for n in self.nodes for p in (n.port, n.bus_port)}
            port = _unused_port(taken)
            bus = _unused_port(taken | {port})
        else:
            port, bus = ports
        log_path = Path(self._tmpdir) / f"node-{port}.log"
        with log_path.open("ab") as log:
            process = subprocess.Popen(
                [
                    binary,
                    "--port", str(port),
                    "--cluster-port", str(bus),
                    "--bind", "127.0.0.1",
                    "--cluster-enabled", "yes",
                    "--cluster-config-file", f"nodes-{port}.conf",
                    "--cluster-node-timeout", str(self.node_timeout_ms),
                    "--cluster-require-full-coverage", "no",
                    "--cluster-replica-validity-factor", "0",
                    "--save", "",
                    "--appendonly", "no",
                    "--dir", self._tmpdir,
                    "--daemonize", "no",
                    "--loglevel", "warning",
                ],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self._tmpdir,
                start_new_session=True,
                preexec_fn=end_with_parent(signal.SIGTERM),
            )  # fmt: skip
        return ClusterNodeProcess(port, bus, process, log_path, replica_of=replica_of)

    def _all_answer(self, binary: str) -> bool:
        """Whether every node answers; a node that exited at start (its ports were taken by
        another process meanwhile) is started again on other ports, a few times at most."""
        for index, node in enumerate(self.nodes):
            if node.process.poll() is not None and node.restarts < PORT_ATTEMPTS:
                fresh = self._spawn(binary, node.replica_of)
                fresh.restarts = node.restarts + 1
                self.nodes[index] = fresh
        return all(answers_ping("127.0.0.1", n.port, 0.5) for n in self.nodes)

    def _assign(self) -> None:
        masters = self.master_nodes
        for node in self.nodes:
            with node.client() as c:
                node.node_id = str(c.execute_command("CLUSTER", "MYID").decode())
        step = SLOTS // len(masters)
        for i, node in enumerate(masters):
            low = i * step
            high = SLOTS - 1 if i == len(masters) - 1 else (i + 1) * step - 1
            node.slots = (low, high)
            with node.client() as c:
                c.execute_command("CLUSTER ADDSLOTSRANGE", low, high)
        first = self.nodes[0]
        with first.client() as c:
            for node in self.nodes[1:]:
                c.execute_command("CLUSTER MEET", "127.0.0.1", node.port, node.bus_port)
        self._wait(self._all_met, "meet")
        for node in self.nodes:
            if node.replica_of is not None:
                with node.client() as c:
                    c.execute_command("CLUSTER REPLICATE", masters[node.replica_of].node_id)
        self._wait(self.healthy, "become healthy")

    def _all_met(self) -> bool:
        for node in self.nodes:
            with node.client() as c:
                lines = c.execute_command("CLUSTER", "NODES").decode().splitlines()
            if len(lines) != len(self.nodes) or any("handshake" in ln for ln in lines):
                return False
        return True

    def healthy(self) -> bool:
        """Every running node reports ``cluster_state:ok`` and each running replica's link
        to its master is up."""
        for node in self.nodes:
            if not node.alive:
                continue
            try:
                with node.client() as c:
                    info = c.execute_command("CLUSTER", "INFO").decode()
                    if "cluster_state:ok" not in info:
                        return False
                    repl = c.info("replication")
            except redis.RedisError:
                return False
            if repl.get("role") == "slave" and repl.get("master_link_status") != "up":
                return False
        return True

    def _wait(self, ready: Callable[[], bool], what: str, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (timeout or self.start_timeout)
        while time.monotonic() < deadline:
            with contextlib.suppress(redis.RedisError, OSError):
                if ready():
                    return
            time.sleep(0.05)  # polling interval, bounded by the deadline
        logs = "\n".join(n.log_path.read_text(errors="replace")[-800:] for n in self.nodes)
        raise EmbeddedRedisError(f"the cluster did not {what} in time:\n{logs}")

    # -- topology -----------------------------------------------------------------------------

    def slot_owner(self, slot: int) -> ClusterNodeProcess:
        """The node serving ``slot`` now (asked of a running node)."""
        for node in self.nodes:
            if not node.alive:
                continue
            with node.client() as c:
                for low, high, master, *_ in c.execute_command("CLUSTER", "SLOTS"):
                    if low <= slot <= high:
                        port = int(master[1])
                        return next(n for n in self.nodes if n.port == port)
        raise EmbeddedRedisError(f"slot {slot} is not served")

    def kill(self, node: ClusterNodeProcess) -> None:
        """SIGKILL one node, like a crashed machine."""
        if node.alive:
            node.process.send_signal(signal.SIGKILL)
            node.process.wait(timeout=10)

    def restart(self, node: ClusterNodeProcess) -> None:
        """Start a killed node again on its ports with its cluster config (its identity): it
        rejoins, as a replica of whoever took its slots meanwhile. Returns once the cluster is
        healthy again (every replica's link to its master up)."""
        if node.alive:
            return
        fresh = self._spawn(self.binary or find_server_binary(), None, (node.port, node.bus_port))
        node.process, node.log_path = fresh.process, fresh.log_path
        self._wait(self.healthy, "take the restarted node back")

    def wait_promoted(self, dead: ClusterNodeProcess, timeout: float = 30.0) -> ClusterNodeProcess:
        """Wait until another node serves the slots of the killed master ``dead``; returns it."""
        assert dead.slots is not None
        found: list[ClusterNodeProcess] = []

        def promoted() -> bool:
            owner = self.slot_owner(dead.slots[0])  # type: ignore[index]
            if owner is dead or not self.healthy():
                return False
            found.append(owner)
            return True

        self._wait(promoted, "promote a replica", timeout)
        return found[-1]

    # -- stopping -----------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop every node and remove the directory. Idempotent."""
        nodes, self.nodes = self.nodes, []
        for node in nodes:
            if node.alive:
                node.process.terminate()
        for node in nodes:
            try:
                node.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                node.process.kill()
                node.process.wait()
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None
        with contextlib.suppress(Exception):
            atexit.unregister(self.stop)


def _unused_port(taken: set[int]) -> int:
    """A free loopback port that is not in ``taken``."""
    while True:
        port = free_port("127.0.0.1")
        if port not in taken:
            return port
