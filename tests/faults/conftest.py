"""Fixtures of the fault suite: a Redis process per test (append-only, ``appendfsync always``)
and server processes on it; the figures of every scenario are printed at the end."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from faultkit import DICE, FIGURES, RedisProcess, StartServers
from procs import ROOT, ServerProcess, free_port


@pytest.fixture
def fault_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """A Redis-compatible server private to the test, which it may stop, kill and freeze."""
    server = RedisProcess(tmp_path / "redis")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def start_servers(fault_redis: RedisProcess, tmp_path: Path) -> Iterator[StartServers]:
    """Start ``n`` server processes on the test's Redis."""
    started: list[ServerProcess] = []

    def start(n: int = 2, env: dict[str, str] | None = None) -> list[ServerProcess]:
        batch = []
        for _ in range(n):
            port = free_port()
            server = ServerProcess(
                port=port,
                env={
                    **os.environ,
                    "REDIS_URL": fault_redis.url,
                    "REDIS_PREFIX": "yzf:",
                    "PYTHONPATH": str(ROOT),
                    "YAHTZEE_LOG_LEVEL": "warning",
                    # not under test here: the abuse limits
                    # (tests/server/transport/test_abuse_e2e.py)
                    "YAHTZEE_MAX_PER_ADDRESS": "100000",
                    "YAHTZEE_ROOMS_PER_MINUTE": "1000000000",
                    "YAHTZEE_ROOMS_PER_MINUTE_PER_ADDRESS": "100000",
                    # nobody's turn is played for them while they fail over
                    "YAHTZEE_ABSENT_TURN_SECONDS": "0",
                    **(env or {}),
                },
                log_path=tmp_path / f"server-{port}.log",
            )
            started.append(server)
            server.start()
            batch.append(server)
        return batch

    yield start
    for server in started:
        server.kill()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FIGURES:
        return
    terminalreporter.section("fault and fuzz figures")
    for figures in FIGURES:
        terminalreporter.write_line(json.dumps(figures))
    terminalreporter.write_line(f"fair-dice verdicts of the checked rooms: {dict(DICE)}")
    target = os.environ.get("YAHTZEE_FAULT_REPORT")
    if target:
        Path(target).write_text(json.dumps(FIGURES, indent=2) + "\n")
        terminalreporter.write_line(f"written to {target}")
