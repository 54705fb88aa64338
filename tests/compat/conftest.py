"""Fixtures for the compatibility suite: one real ``yahtzee serve`` process for the session."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator

import pytest
from procs import ROOT, ServerProcess, free_port


@pytest.fixture(scope="session")
def compat_server(
    redis_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    """A server process on a free port, with its own Redis key prefix."""
    server = ServerProcess(
        port=free_port(),
        env={
            **os.environ,
            "REDIS_URL": redis_server_url,
            "REDIS_PREFIX": f"tcompat{secrets.token_hex(4)}:",
            "PYTHONPATH": str(ROOT),
            "YAHTZEE_LOG_LEVEL": "warning",
        },
        log_path=tmp_path_factory.mktemp("compat") / "server.log",
    )
    try:
        server.start(timeout=30)
        yield server
    finally:
        if server.process is not None and server.process.poll() is None:
            server.terminate()
