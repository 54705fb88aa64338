"""Fixtures for client tests: one real ``yahtzee serve`` process for the whole session.

The server runs as a subprocess (``python -m server.cli serve``) against the session's
Redis-compatible server, with a key prefix private to this session; rooms have random ids, so
tests share the server without seeing each other's games. The clients under test know only its
URL: they never import ``server``.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from clients_live import LiveServer, spawn_server, stop_server


@pytest.fixture(scope="session")
def live_server(
    redis_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """A real server process on a free port (with its own key prefix).

    ``YAHTZEE_TEST_SERVER=http://host:port`` runs the client tests against a server that is
    already running instead (no process is started).
    """
    external = os.environ.get("YAHTZEE_TEST_SERVER")
    if external:
        yield LiveServer(http=external.rstrip("/"), log_path=Path(os.devnull))
        return
    prefix = f"tc{secrets.token_hex(4)}:"
    process, server = spawn_server(redis_server_url, prefix, tmp_path_factory.mktemp("server"))
    try:
        yield server
    finally:
        stop_server(process)


@pytest.fixture(scope="session")
def computer_server(
    redis_server_url: str, tmp_path_factory: pytest.TempPathFactory, official_table: object
) -> Iterator[LiveServer]:
    """A server whose computer players move without delay (``YAHTZEE_COMPUTER_DELAY_MS=0``),
    started after the session built the official rules' strategy table, which it loads from
    the session's cache in milliseconds (computers, hints and the analysis need it)."""
    external = os.environ.get("YAHTZEE_TEST_SERVER")
    if external:
        yield LiveServer(http=external.rstrip("/"), log_path=Path(os.devnull))
        return
    prefix = f"tk{secrets.token_hex(4)}:"
    process, server = spawn_server(
        redis_server_url,
        prefix,
        tmp_path_factory.mktemp("computer-server"),
        env={"YAHTZEE_COMPUTER_DELAY_MS": "0"},
    )
    try:
        yield server
    finally:
        stop_server(process)
