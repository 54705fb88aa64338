"""The client subcommands, through a parser built like ``yahtzee``'s."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import pytest
from clients_live import LiveServer

from clients.cli import register, service_url


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="yahtzee")
    register(root.add_subparsers(dest="command", required=True))
    return root


def test_subcommands_and_defaults() -> None:
    args = parser().parse_args(["watch", "r1", "--url", "ws://h:1/ws"])
    assert (args.command, args.room, args.url) == ("watch", "r1", "ws://h:1/ws")
    args = parser().parse_args(["bot", "-n", "3", "--rules", "yatzy", "--private"])
    assert (args.bots, args.rules, args.private, args.room) == (3, "yatzy", True, None)
    args = parser().parse_args(["play", "--name", "Ann", "--room", "r1"])
    assert (args.name, args.room) == ("Ann", "r1")
    args = parser().parse_args(["play", "--computer"])
    assert (args.computer, args.computers, args.no_hints) == ("medium", 1, False)
    args = parser().parse_args(["play", "--computer", "optimal", "--computers", "3"])
    assert (args.computer, args.computers, args.room) == ("optimal", 3, None)
    args = parser().parse_args(["play", "--computer", "hard", "--bonus-turn", "--upper-first"])
    assert (args.bonus_turn, args.upper_first) == (True, True)
    args = parser().parse_args(["load", "-g", "3", "-p", "4", "--json"])
    assert (args.command, args.games, args.players, args.json) == ("load", 3, 4, True)
    args = parser().parse_args(["tournament", "enter", "t1", "--invite-code", "c", "--no-play"])
    assert (args.action, args.tournament, args.invite_code, args.no_play) == (
        "enter",
        "t1",
        "c",
        True,
    )
    args = parser().parse_args(["tournament", "resume", "t1"])
    assert (args.action, args.tournament) == ("resume", "t1")
    args = parser().parse_args(["tournament", "create", "Cup", "--ends-in", "2h", "--rated"])
    assert (args.name, args.ends_in, args.attempts, args.rated) == ("Cup", 7200, 1, True)
    args = parser().parse_args(["tournament", "verify", "t1", "--room", "r", "--invite-code", "c"])
    assert (args.room, args.invite_code, args.tournament_invite) == ("r", "c", None)
    args = parser().parse_args(["turns", "--play", "r1"])
    assert (args.command, args.play) == ("turns", "r1")


def test_play_quick_takes_seats_rules_and_computers(capsys: pytest.CaptureFixture[str]) -> None:
    args = parser().parse_args(["play", "--quick"])
    assert (args.quick, args.seats, args.rules, args.no_computers) == (True, 2, "yahtzee", False)
    args = parser().parse_args(["play", "--quick", "--seats", "4", "--rules", "yatzy",
                                "--no-computers"])  # fmt: skip
    assert (args.seats, args.rules, args.no_computers) == (4, "yatzy", True)
    for wrong in (["--seats", "5"], ["--anonymous"]):  # refused before connecting
        assert args.func(parser().parse_args(["play", "--quick", *wrong])) == 2
        assert "--quick takes --seats 2 to 4" in capsys.readouterr().out


def test_bad_option_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        parser().parse_args(["bot", "--joker", "sometimes"])
    assert "invalid choice" in capsys.readouterr().err


def test_bots_play_a_whole_game(
    live_server: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    args = parser().parse_args(
        ["bot", "--url", live_server.ws, "-n", "2", "--delay", "0", "--first-player", "random"]
    )
    assert args.func(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("room ")
    assert out[1].startswith("1. ")
    assert len(out) == 3


def test_bot_reports_an_unknown_room(
    live_server: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    args = parser().parse_args(["bot", "--url", live_server.ws, "--room", "nope", "--delay", "0"])
    assert args.func(args) == 1
    assert "room_not_found" in capsys.readouterr().out


def test_load_command_plays_and_reports_json(
    live_server: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    args = parser().parse_args(["load", "--url", live_server.ws, "-g", "1", "-p", "2", "--json"])
    assert args.func(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["ok"], report["games_completed"], report["integrity_violations"]) == (
        True,
        1,
        [],
    )


@pytest.mark.parametrize(
    ("given", "url"),
    [
        ("ws://h:1/ws", "ws://h:1/ws"),
        ("http://127.0.0.1:8001", "ws://127.0.0.1:8001/ws"),
        ("https://yz.example/", "wss://yz.example/ws"),
        ("127.0.0.1:8001", "ws://127.0.0.1:8001/ws"),
        ("wss://yz.example/game/ws", "wss://yz.example/game/ws"),
    ],
)
def test_service_url_accepts_what_serve_prints(given: str, url: str) -> None:
    assert service_url(given) == url


def test_every_client_command_reads_yahtzee_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("YAHTZEE_URL", "http://127.0.0.1:8123")
    for argv in (["play"], ["watch", "r1"], ["bot"]):
        assert parser().parse_args(argv).url == "ws://127.0.0.1:8123/ws"


def test_watching_an_unknown_room_fails(live_server: LiveServer) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "server.cli", "watch", "nosuchroom", "--url", live_server.http],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 1
    assert "cannot watch nosuchroom: room_not_found" in run.stdout + run.stderr
