"""Fixtures for server tests: real ``yahtzee serve`` processes on free ports."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from procs import ROOT, ServerProcess, StartServer, free_port


@pytest.fixture
def start_server(
    redis_url: str, redis_prefix: str, redis_backend: str, tmp_path: Path
) -> Iterator[StartServer]:
    """Start server processes sharing this test's Redis URL and key prefix (on a cluster
    with ``REDIS_CLUSTER=1``)."""
    started: list[ServerProcess] = []

    def start(env: dict[str, str] | None = None, args: list[str] | None = None) -> ServerProcess:
        full_env = {
            **os.environ,
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": redis_prefix,
            "PYTHONPATH": str(ROOT),
            "YAHTZEE_LOG_LEVEL": "warning",
            "REDIS_CLUSTER": "1" if redis_backend == "cluster" else "0",
            **(env or {}),
        }
        port = free_port()
        server = ServerProcess(
            port=port,
            env=full_env,
            log_path=tmp_path / f"server-{port}.log",
            extra_args=list(args or []),
        )
        started.append(server)
        server.start()
        return server

    yield start
    for server in started:
        server.kill()
