"""Helpers for client tests: start and stop real ``yahtzee serve`` processes.

A server is a subprocess (``python -m server.cli serve``) on a free port; the tests and the
clients under test know only its URL, never the ``server`` package.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class LiveServer:
    http: str  # base URL, e.g. http://127.0.0.1:8000
    log_path: Path

    @property
    def ws(self) -> str:
        return "ws" + self.http.removeprefix("http") + "/ws"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log_path: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited early:\n{log_path.read_text()}")
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=1) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.05)  # polling a starting process, not synchronising a test
    raise AssertionError(f"server did not become healthy:\n{log_path.read_text()}")


def spawn_server(
    redis_url: str, prefix: str, directory: Path, port: int | None = None
) -> tuple[subprocess.Popen[bytes], LiveServer]:
    """Start ``python -m server.cli serve`` and wait until it answers ``/healthz``."""
    port = port or _free_port()
    log_path = directory / f"server-{port}.log"
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "REDIS_PREFIX": prefix,
        "PYTHONPATH": str(ROOT),
        "YAHTZEE_LOG_LEVEL": "warning",
    }
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "server.cli", "serve", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server = LiveServer(http=f"http://127.0.0.1:{port}", log_path=log_path)
    try:
        _wait_healthy(server.http, process, log_path)
    except BaseException:
        stop_server(process)
        raise
    return process, server


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the server drains: clients get 1012), then wait; kill if it hangs."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
