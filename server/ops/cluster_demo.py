"""Scale-out on one machine: a local Redis Cluster and several server processes.

    python3 .ci/dev.py cluster [--servers N] [--port FIRST_PORT] [--single]

starts an embedded 3-master cluster (one replica per master, :mod:`server.ops.embedded_cluster`)
and N ``yahtzee serve`` processes on it (``REDIS_CLUSTER=1``), prints their URLs and the
cluster's masters, and runs until Ctrl+C, then stops them all. Every process serves every room:
point clients at different ones and they play together. Nothing is kept on disk. With
``--single`` the processes share one embedded Redis-compatible server instead of a cluster.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Sequence

from server.ops.embedded_cluster import EmbeddedCluster
from server.ops.embedded_redis import EmbeddedRedis

__all__ = ["main"]


def _wait_ready(port: int, process: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server on port {port} exited early")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.1)  # polling interval, bounded by the deadline
    raise SystemExit(f"the server on port {port} was not ready after {timeout}s")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="cluster", description="A local Redis Cluster and N game server processes."
    )
    parser.add_argument("--servers", type=int, default=2, help="server processes (default 2)")
    parser.add_argument("--port", type=int, default=8000, help="port of the first server")
    parser.add_argument("--masters", type=int, default=3, help="cluster masters (default 3)")
    parser.add_argument(
        "--single", action="store_true", help="one embedded Redis-compatible server, no cluster"
    )
    args = parser.parse_args(argv)

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if args.single:
        with EmbeddedRedis() as single:
            print(f"Redis: one embedded server at {single.url}", flush=True)
            env = {**os.environ, "REDIS_URL": single.url}
            env.pop("REDIS_CLUSTER", None)
            return _run_servers(args.servers, args.port, env, stop)
    with EmbeddedCluster(masters=args.masters) as cluster:
        print(f"Redis Cluster: {args.masters} masters, one replica each", flush=True)
        for node in cluster.master_nodes:
            assert node.slots is not None
            low, high = node.slots
            print(f"  master {node.name}  slots {low}-{high}", flush=True)
        env = {**os.environ, "REDIS_URL": cluster.url, "REDIS_CLUSTER": "1"}
        return _run_servers(args.servers, args.port, env, stop)


def _run_servers(count: int, first_port: int, env: dict[str, str], stop: threading.Event) -> int:
    """``count`` server processes on consecutive ports, until Ctrl+C, SIGTERM or one exits."""
    servers: list[subprocess.Popen[bytes]] = []
    try:
        for i in range(count):
            port = first_port + i
            command = [sys.executable, "-m", "server.cli", "serve", "--port", str(port)]
            servers.append(subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL))
            _wait_ready(port, servers[-1])
            print(f"Yahtzee server {i + 1} on http://127.0.0.1:{port}  "
                  f"(WebSocket: ws://127.0.0.1:{port}/ws)", flush=True)  # fmt: skip
        print("Ctrl+C stops the servers and Redis.", flush=True)
        while not stop.wait(0.5):
            if any(s.poll() is not None for s in servers):
                print("a server process exited; stopping", flush=True)
                break
    except KeyboardInterrupt:
        pass
    finally:
        for server in servers:
            if server.poll() is None:
                server.send_signal(signal.SIGTERM)
        for server in servers:
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
