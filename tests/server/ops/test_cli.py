"""``yahtzee serve`` as a real process."""

from __future__ import annotations

import os
import signal
import urllib.request
from pathlib import Path

import pytest
from procs import ROOT, ServerProcess, StartServer, free_port

from server.cli import build_parser


def test_parser_has_serve() -> None:
    args = build_parser().parse_args(["serve", "--port", "1234", "--workers", "2"])
    assert (args.command, args.port, args.workers) == ("serve", 1234, 2)


def test_serve_answers_health_and_ready(start_server: StartServer) -> None:
    server = start_server()
    with urllib.request.urlopen(f"{server.http}/healthz", timeout=5) as resp:
        assert resp.read() == b"ok"
    assert "Yahtzee server on http://127.0.0.1:" in server.log()
    # uvicorn shuts down cleanly, then re-raises the signal it caught
    assert server.terminate() in (0, -signal.SIGTERM)
    assert "Traceback" not in server.log()


@pytest.mark.parametrize("workers", [1, 2])
def test_serve_without_redis_url_uses_embedded_server(tmp_path: Path, workers: int) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["PYTHONPATH"] = str(ROOT)
    port = free_port()
    server = ServerProcess(
        port=port, env=env, log_path=tmp_path / "serve.log", extra_args=["--workers", str(workers)]
    )
    try:
        server.start()
        with urllib.request.urlopen(f"{server.http}/readyz", timeout=5) as resp:
            assert resp.status == 200
        assert "vanish when it stops" in server.log()
    finally:
        if server.process is not None:
            server.terminate()
