"""Helpers for client tests: start and stop real ``yahtzee serve`` processes.

A server is a subprocess (``python -m server.cli serve``) on a free port; the tests and the
clients under test know only its URL, never the ``server`` package.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from procs import ROOT, ServerProcess, free_port

#: the operator's token of the ``db_server`` fixture (``POST /tournaments``)
DB_SERVER_ADMIN_TOKEN = "clients-admin-token-for-tests"


@dataclass(frozen=True)
class LiveServer:
    http: str  # base URL, e.g. http://127.0.0.1:8000
    log_path: Path
    redis_url: str = ""  # the Redis it keeps its rooms in, under this key prefix
    redis_prefix: str = ""

    @property
    def ws(self) -> str:
        return "ws" + self.http.removeprefix("http") + "/ws"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def spawn_server(
    redis_url: str,
    prefix: str,
    directory: Path,
    port: int | None = None,
    env: dict[str, str] | None = None,
) -> tuple[subprocess.Popen[bytes], LiveServer]:
    """Start ``python -m server.cli serve`` and wait until it is ready (``env``: more
    environment variables, e.g. ``YAHTZEE_COMPUTER_DELAY_MS``)."""
    port = port or free_port()
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "REDIS_PREFIX": prefix,
        "PYTHONPATH": str(ROOT),
        "YAHTZEE_LOG_LEVEL": "warning",
        **(env or {}),
    }
    server = ServerProcess(port=port, env=env, log_path=directory / f"server-{port}.log")
    try:
        server.start(timeout=30)
    except BaseException:
        if server.process is not None:
            stop_server(server.process)
        raise
    assert server.process is not None
    live = LiveServer(
        http=server.http, log_path=server.log_path, redis_url=redis_url, redis_prefix=prefix
    )
    return server.process, live


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM (the server drains: clients get 1012), then wait; kill if it hangs."""
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
