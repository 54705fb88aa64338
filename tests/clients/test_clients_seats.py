"""The terminal's kept seats (``clients/seats.py``) and ``tournament create``'s durations: the
file, its mode and its limits, without a server."""

from __future__ import annotations

import argparse
import stat
from pathlib import Path

import pytest

from clients import seats
from clients.seats import (
    KIND_CORRESPONDENCE,
    KIND_TOURNAMENT,
    KeptSeat,
    default_seat_file,
    forget_seat,
    keep_seat,
    kept_seat,
    kept_seats,
)
from clients.tournament_cli import parse_duration

BASE = "http://127.0.0.1:8000"


def test_seats_are_kept_per_server_newest_last_and_forgotten(tmp_path: Path) -> None:
    path = tmp_path / "cfg" / "seats.json"
    first = KeptSeat(room="r1", token="secret-1", kind=KIND_TOURNAMENT, tournament="t1",
                     attempt=1, ends_ms=5)  # fmt: skip
    second = KeptSeat(room="r2", token="secret-2", kind=KIND_CORRESPONDENCE)
    keep_seat(path, BASE, first)
    keep_seat(path, BASE + "/", second)  # the same server, written another way
    keep_seat(path, "http://other:1", second)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert kept_seats(path, BASE) == [first, second]
    keep_seat(path, BASE, first)  # kept again: now the newest
    assert kept_seats(path, BASE) == [second, first]
    assert kept_seat(path, BASE, "r1") == first
    forget_seat(path, BASE, "r1")
    assert kept_seat(path, BASE, "r1") is None
    assert kept_seats(path, "http://other:1") == [second]
    assert "secret" not in repr(first)


def test_only_the_newest_seats_are_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seats, "MAX_SEATS_PER_SERVER", 3)
    path = tmp_path / "seats.json"
    for n in range(5):
        keep_seat(path, BASE, KeptSeat(room=f"r{n}", token="t", kind=KIND_CORRESPONDENCE))
    assert [s.room for s in kept_seats(path, BASE)] == ["r2", "r3", "r4"]


def test_a_damaged_file_keeps_nothing(tmp_path: Path) -> None:
    path = tmp_path / "seats.json"
    path.write_text('{"http://127.0.0.1:8000": {"r1": {"kind": "tournament"}}, "x": [')
    assert kept_seats(path, BASE) == []
    path.write_text('{"http://127.0.0.1:8000": {"r1": {"kind": "tournament"}, "r2": 3}}')
    assert kept_seats(path, BASE) == []  # r1 has no token, r2 is not a seat


def test_the_seat_file_lies_beside_the_player_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("YAHTZEE_SEAT_FILE", raising=False)
    monkeypatch.setenv("YAHTZEE_PLAYER_FILE", str(tmp_path / "p" / "players.json"))
    assert default_seat_file() == tmp_path / "p" / "seats.json"
    assert default_seat_file(tmp_path / "q" / "me.json") == tmp_path / "q" / "seats.json"
    monkeypatch.setenv("YAHTZEE_SEAT_FILE", str(tmp_path / "mine.json"))
    assert default_seat_file() == tmp_path / "mine.json"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("45s", 45), ("90m", 5400), ("90", 5400), ("2h", 7200), ("3d", 259_200), (" 1H ", 3600)],
)
def test_durations(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "0h", "-1h", "2w", "h", "1.5h"])
def test_bad_durations_are_refused(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        parse_duration(text)
