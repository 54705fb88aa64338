"""The web page's protocol module (``clients/web/yahtzee-client.js``) under Node's test runner.

``node --test`` runs ``tests/clients/web/*.test.mjs`` against the session's real server process;
the JavaScript tests read its URL from ``YAHTZEE_TEST_HTTP``. They need Node.js 18 or newer and
the npm packages of ``tests/clients/web/package.json`` (``ws``: Node 20 has no global WebSocket),
which ``python3 .ci/dev.py setup`` installs with ``npm ci``. Without Node the test is skipped with
the reason, unless ``YAHTZEE_REQUIRE_NODE=1`` (CI), where a missing Node is a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from clients_live import LiveServer

WEB_TESTS = Path(__file__).resolve().parent / "web"
NODE = os.environ.get("YAHTZEE_NODE", "node")


def _node_or_skip() -> str:
    path = shutil.which(NODE)
    problem = None
    if path is None:
        problem = f"Node.js not found ({NODE}): install it (apt-get install nodejs npm)"
    else:
        version = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        found = re.match(r"v(\d+)\.", version)
        if found is None or int(found.group(1)) < 18:
            problem = f"Node.js {version.strip()} is too old: the tests need 18 or newer"
        elif not (WEB_TESTS / "node_modules" / "ws").is_dir():
            problem = "npm packages missing: run `python3 .ci/dev.py setup` (it runs npm ci)"
    if problem is None:
        assert path is not None
        return path
    if os.environ.get("YAHTZEE_REQUIRE_NODE") == "1":
        pytest.fail(problem)
    pytest.skip(problem)


def _run_node(node: str, files: list[str], env: dict[str, str]) -> tuple[int, int, int]:
    """``node --test files``; (passed, failed, skipped) after asserting it succeeded."""
    run = subprocess.run(
        [node, "--test", *files],
        cwd=WEB_TESTS,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=180,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output[-6000:]
    counts = []
    for what in ("pass", "fail", "skipped"):
        found = re.search(rf"^# {what} (\d+)$", output, re.MULTILINE)
        assert found, output[-3000:]
        counts.append(int(found.group(1)))
    assert counts[1] == 0, output[-3000:]
    return counts[0], counts[1], counts[2]


def test_yahtzee_client_js_against_the_server(live_server: LiveServer) -> None:
    node = _node_or_skip()
    files = sorted(str(p) for p in WEB_TESTS.glob("*.test.mjs"))
    assert files, "no JavaScript tests found"
    passed, _, _ = _run_node(node, files, {"YAHTZEE_TEST_HTTP": live_server.http})
    assert passed >= 6


def test_remembered_players_js_against_a_server_with_a_database(
    live_server: LiveServer, db_server: LiveServer
) -> None:
    """players.test.mjs with both servers: its tests that need a database run too."""
    node = _node_or_skip()
    env = {"YAHTZEE_TEST_HTTP": live_server.http, "YAHTZEE_TEST_DB_HTTP": db_server.http}
    passed, _, skipped = _run_node(node, [str(WEB_TESTS / "players.test.mjs")], env)
    assert (passed, skipped) == (11, 0)  # every test of the file
