"""``yahtzee verify`` against a small local HTTP server that serves synthetic paginated logs.

The server (stdlib ``http.server`` in a thread) speaks the decided events API: ``after`` and
``limit`` (it serves at most ``PAGE_CAP`` events per page to force many pages), ``next_after``
null on the last page, 404 ``room_not_found``, 403 for a private room without the right
``X-Invite-Code`` header, 400 if an invite code ever appears in the URL. The logs are whole
games played by the real engine with dice from the generator (``tests/fairlogs.py``).
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from fairlogs import Seat, fair_game_log, first, tampered

from clients.cli import register
from clients.verify import fetch_events, http_url

PAGE_CAP = 7
SEED = bytes(range(32))
SEATS = (Seat("p-ann", "Ann", "ann"), Seat("p-bob", "Bob"))
ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Served:
    """What the fake service holds and what it was asked."""

    rooms: dict[str, tuple[list[dict[str, Any]], str | None]] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, list[str]], str | None]] = field(default_factory=list)
    stuck_cursor: bool = False
    url: str = ""


def make_handler(served: Served) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet test output
            pass

        def reply(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            code = self.headers.get("X-Invite-Code")
            served.requests.append((parts.path, query, code))
            segments = parts.path.strip("/").split("/")
            if "invite_code" in parts.query or len(segments) != 3 or segments[2] != "events":
                self.reply(400, {"code": "bad_request", "message": "not the events API"})
                return
            if segments[1] not in served.rooms:
                self.reply(404, {"code": "room_not_found", "message": "no such room"})
                return
            log, invite = served.rooms[segments[1]]
            if invite is not None and code != invite:
                self.reply(403, {"code": "invalid_invite_code", "message": "private room"})
                return
            after = int(query.get("after", ["0"])[0])
            limit = min(int(query.get("limit", ["500"])[0]), PAGE_CAP)
            page = [e for e in log if e["seq"] > after][:limit]
            more = bool(page) and page[-1]["seq"] < log[-1]["seq"]
            following = (after if served.stuck_cursor else page[-1]["seq"]) if more else None
            self.reply(200, {"room": segments[1], "events": page, "next_after": following})

    return Handler


@pytest.fixture
def served() -> Iterator[Served]:
    state = Served()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


@pytest.fixture(scope="module")
def game_log() -> list[dict[str, Any]]:
    return fair_game_log(SEED, SEATS, room="r-done")


def verify(served: Served, *argv: str) -> int:
    root = argparse.ArgumentParser(prog="yahtzee")
    register(root.add_subparsers(dest="command", required=True))
    args = root.parse_args(["verify", *argv, "--url", served.url])
    result: int = args.func(args)
    return result


def test_a_fair_game_verifies_over_every_page(
    served: Served, game_log: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    served.rooms["r-done"] = (game_log, None)
    assert verify(served, "r-done") == 0
    out = capsys.readouterr().out
    assert f"room r-done: {len(game_log)} events" in out
    assert "verdict: verified" in out
    pages = -(-len(game_log) // PAGE_CAP)
    assert len(served.requests) == pages
    afters = [int(q["after"][0]) for _, q, _ in served.requests]
    assert afters == [page * PAGE_CAP for page in range(pages)]
    assert all(q["limit"] == ["1000"] for _, q, _ in served.requests)
    assert all(path == "/rooms/r-done/events" for path, _, _ in served.requests)


def test_fetch_events_returns_the_log_in_order(
    served: Served, game_log: list[dict[str, Any]]
) -> None:
    served.rooms["r-done"] = (game_log, None)
    assert fetch_events(served.url + "/", "r-done", page_size=3) == game_log


def test_a_tampered_die_exits_1_and_names_the_event(
    served: Served, game_log: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    target = first(game_log, "rolled", roll_number=1)
    dice = [d % 6 + 1 for d in target["dice"]]
    served.rooms["r-bad"] = (tampered(game_log, target["seq"], dice=dice), None)
    assert verify(served, "r-bad") == 1
    out = capsys.readouterr().out
    assert "verdict: mismatch" in out
    assert f"MISMATCH seq {target['seq']}:" in out


def test_a_game_in_progress_exits_2(served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    served.rooms["r-live"] = (fair_game_log(SEED, SEATS, finish=False, max_turns=4), None)
    assert verify(served, "r-live") == 2
    assert "not verifiable yet: the game is not over" in capsys.readouterr().out


def test_an_unknown_room_exits_2(served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    assert verify(served, "r-nope") == 2
    assert "room r-nope: room not found (room_not_found: no such room)" in capsys.readouterr().out


def test_a_private_room_needs_the_invite_code_in_a_header(
    served: Served, game_log: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    served.rooms["r-done"] = (game_log, "K3Y-42")
    assert verify(served, "r-done") == 2
    assert "HTTP 403 (invalid_invite_code: private room)" in capsys.readouterr().out
    assert verify(served, "r-done", "--invite-code", "wrong") == 2
    served.requests.clear()
    assert verify(served, "r-done", "--invite-code", "K3Y-42") == 0
    assert "verdict: verified" in capsys.readouterr().out
    assert all(code == "K3Y-42" for _, _, code in served.requests)
    assert all("invite" not in json.dumps(q) for _, q, _ in served.requests)


def test_json_output(
    served: Served, game_log: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    served.rooms["r-done"] = (game_log, None)
    assert verify(served, "r-done", "--json") == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["room"] == "r-done"
    assert verdict["status"] == "verified"
    assert verdict["seeds"] == ["ann", ""]
    assert verdict["draws_checked"] == verdict["rolls"] > 0


def test_a_cursor_that_does_not_move_is_refused(
    served: Served, game_log: list[dict[str, Any]], capsys: pytest.CaptureFixture[str]
) -> None:
    served.rooms["r-done"] = (game_log, None)
    served.stuck_cursor = True
    assert verify(served, "r-done") == 2
    assert "`next_after` 0 does not follow `after` 0" in capsys.readouterr().out
    assert len(served.requests) == 1


def test_no_server_answering_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    root = argparse.ArgumentParser(prog="yahtzee")
    register(root.add_subparsers(dest="command", required=True))
    with socket.socket() as bound:  # bound but not listening: connections are refused
        bound.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{bound.getsockname()[1]}"
        args = root.parse_args(["verify", "r-x", "--url", url])
        assert args.func(args) == 2
    assert "no answer from" in capsys.readouterr().out


def test_the_yahtzee_command_runs_verify(served: Served, game_log: list[dict[str, Any]]) -> None:
    served.rooms["r-done"] = (game_log, None)
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "verify", "r-done", "--url", served.url],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "verdict: verified" in done.stdout


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("127.0.0.1:8792", "http://127.0.0.1:8792"),
        ("http://127.0.0.1:8792/", "http://127.0.0.1:8792"),
        ("https://yahtzee.example", "https://yahtzee.example"),
        ("ws://127.0.0.1:8792/ws", "http://127.0.0.1:8792"),
        ("wss://yahtzee.example/ws", "https://yahtzee.example"),
        ("http://host:1/prefix", "http://host:1/prefix"),
    ],
)
def test_the_url_forms_of_play_are_understood(given: str, expected: str) -> None:
    assert http_url(given) == expected


def test_verify_takes_host_port_and_the_websocket_url(
    served: Served, game_log: list[dict[str, Any]]
) -> None:
    served.rooms["r-done"] = (game_log, None)
    bare = served.url.removeprefix("http://")
    for url in (bare, f"ws://{bare}/ws"):
        root = argparse.ArgumentParser(prog="yahtzee")
        register(root.add_subparsers(dest="command", required=True))
        args = root.parse_args(["verify", "r-done", "--url", url])
        assert args.func(args) == 0, url
