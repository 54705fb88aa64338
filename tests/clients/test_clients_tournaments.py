"""Tournaments and correspondence games in the terminal client, against a real server with a
real PostgreSQL (``db_server``): ``yahtzee tournament create|enter|play|verify`` and ``yahtzee
turns [--play ROOM]`` through the command line, the table of a kept seat (``SeatApp``) driven
by textual's pilot. Waiting is on conditions with deadlines, never a fixed sleep."""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import stat
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from clients_live import DB_SERVER_ADMIN_TOKEN, LiveServer
from test_clients_tui import play_turn, until
from textual.widgets import DataTable

from clients import tournament_cli
from clients.cli import register
from clients.client import Client
from clients.correspondence import ELSEWHERE
from clients.players import create_guest, fetch_turns, load_guest, remembered_guest
from clients.seats import KIND_CORRESPONDENCE, KIND_TOURNAMENT, kept_seats
from clients.strategy import decide
from clients.tournaments import fetch_standings, unfinished_entry
from clients.tui import PlayApp, TableScreen
from clients.tui_seat import CorrespondenceApp, CorrespondenceGame, SeatApp
from protocol import Phase, RoomOptions, RoomStatus

DEADLINE = 60.0


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="yahtzee")
    register(root.add_subparsers(dest="command", required=True))
    return root


async def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    """Run ``yahtzee ARGV`` in a thread (it blocks, and ``play`` runs its own event loop);
    returns its exit status and everything it wrote (stdout and stderr)."""
    args = parser().parse_args(list(argv))
    code = await asyncio.to_thread(args.func, args)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The terminal's player file and seat file, private to the test."""
    player_file, seat_file = tmp_path / "cfg" / "players.json", tmp_path / "cfg" / "seats.json"
    monkeypatch.setenv("YAHTZEE_PLAYER_FILE", str(player_file))
    monkeypatch.delenv("YAHTZEE_SEAT_FILE", raising=False)  # beside the player file
    monkeypatch.delenv("YAHTZEE_ADMIN_TOKEN", raising=False)
    return player_file, seat_file


async def create_tournament(
    capsys: pytest.CaptureFixture[str], server: LiveServer, *extra: str
) -> tuple[str, str]:
    """``yahtzee tournament create``; returns the new tournament's id and what was printed."""
    name = f"Cup {secrets.token_hex(3)}"
    code, out = await cli(capsys, "tournament", "create", name, "--url", server.http, *extra)
    assert code == 0, out
    assert name in out
    return out.split()[0], out


async def bounded(check: Callable[[], object], what: str) -> None:
    """Poll the blocking ``check`` (in a thread) until it is truthy, within the deadline."""
    deadline = time.monotonic() + DEADLINE
    while not await asyncio.to_thread(check):
        assert time.monotonic() < deadline, f"{what}: not in time"
        await asyncio.sleep(0.2)  # polling interval of a bounded wait


async def play_to_the_end(client: Client) -> int:
    """Play the client's seat with the greedy strategy until game over; returns its total."""
    while True:
        model = await client.wait_for(
            lambda m: m.status is RoomStatus.FINISHED or m.current_player == client.player
        )
        if model.status is RoomStatus.FINISHED:
            me = model.player(client.player)
            assert me is not None
            return me.grand
        if model.phase is Phase.AWAITING_ROLL:
            await client.roll()
            continue
        move = decide(model.dice, model.rolls_left, model.preview)
        if move.score:
            await client.score(move.score)
        else:
            await client.roll(keep=move.keep)


async def test_enter_play_stop_resume_with_the_same_dice_and_finish(
    db_server: LiveServer,
    files: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    player_file, seat_file = files
    monkeypatch.setenv("YAHTZEE_ADMIN_TOKEN", DB_SERVER_ADMIN_TOKEN)
    tid, _ = await create_tournament(capsys, db_server, "--ends-in", "2h")
    monkeypatch.delenv("YAHTZEE_ADMIN_TOKEN")
    name = f"Tess {secrets.randbelow(10**6)}"

    # enter as the remembered player (made now), keep the seat, print no token
    code, out = await cli(capsys, "tournament", "enter", tid, "--no-play", "--name", name,
                          "--url", db_server.http)  # fmt: skip
    assert code == 0, out
    [seat] = kept_seats(seat_file, db_server.http)
    assert (seat.kind, seat.tournament, seat.attempt) == (KIND_TOURNAMENT, tid, 1)
    assert f"entered {tid} as {name}: room {seat.room}, attempt 1" in out
    assert stat.S_IMODE(seat_file.stat().st_mode) == 0o600
    guest_token = json.loads(player_file.read_text())[db_server.http]["token"]
    # entering twice: the server's typed refusal, exit 1
    again, refused = await cli(capsys, "tournament", "enter", tid, "--no-play",
                               "--url", db_server.http)  # fmt: skip
    assert again == 1
    assert "already_entered" in refused
    for printed in (out, refused):
        assert seat.token not in printed
        assert guest_token not in printed

    # play two turns and the first roll of the third in the terminal, then quit
    app = SeatApp(db_server.ws, seat=seat, name=name, player_file=player_file)
    async with app.run_test(size=(150, 60)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TableScreen), "the table")
        table = app.screen
        assert isinstance(table, TableScreen)
        me = app.client.player
        assert me is not None
        for turn in (1, 2):
            await play_turn(pilot, app, table, me, turn, ask=False)
        model = app.client.model
        assert model is not None
        await until(pilot, lambda: model.phase is Phase.AWAITING_ROLL, "the third turn")
        await pilot.press("r")
        await until(pilot, lambda: model.phase is Phase.ROLLED, "the roll")
        before = (list(model.dice), model.roll_number, model.player(me).scorecard)  # type: ignore[union-attr]

    # `tournament play` finds the unfinished entry (the table is stubbed: no terminal here)
    chosen: list[str] = []

    def no_terminal(args: argparse.Namespace, kept: object) -> int:
        chosen.append(getattr(kept, "room", ""))
        return 0

    monkeypatch.setattr(tournament_cli, "_play_seat", no_terminal)
    code, out = await cli(capsys, "tournament", "play", tid, "--url", db_server.http)
    assert (code, chosen) == (0, [seat.room])
    assert f"back to {seat.room} (attempt 1)" in out
    assert seat.token not in out

    # back at the table: the same dice, roll and scorecard; then play to game over
    resumed = await unfinished_entry(db_server.ws, seat_file, tid)
    assert resumed == seat
    app = SeatApp(db_server.ws, seat=seat, name=name, player_file=player_file)
    async with app.run_test(size=(150, 60)) as pilot:
        await until(pilot, lambda: app.client.model is not None, "the snapshot")
        model = app.client.model
        assert model is not None
        me = app.client.player
        assert me is not None
        assert (list(model.dice), model.roll_number, model.player(me).scorecard) == before  # type: ignore[union-attr]
        table = app.screen
        assert isinstance(table, TableScreen)
        best = max((e for e in model.preview if e.allowed), key=lambda e: e.points)
        table.query_one("#scorecard", DataTable).move_cursor(row=list(model.boxes).index(best.box))
        await pilot.press("enter")
        for turn in range(4, 14):
            await play_turn(pilot, app, table, me, turn, ask=False)
        await until(pilot, lambda: model.status is RoomStatus.FINISHED, "game over")
        total = model.player(me).grand  # type: ignore[union-attr]

    board = await asyncio.to_thread(fetch_standings, db_server.http, tid)
    assert [(r["name"], r["score"]) for r in board["entries"]] == [(name, total)]
    # played to the end: nothing to resume, and the finished seat is forgotten
    chosen.clear()
    code, out = await cli(capsys, "tournament", "play", tid, "--url", db_server.http)
    assert (code, chosen) == (1, [])
    assert f"no unfinished entry of {tid}" in out
    assert kept_seats(seat_file, db_server.http) == []


async def test_a_closed_tournament_is_said_so_and_its_entries_verify(
    db_server: LiveServer,
    files: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    player_file, seat_file = files
    # a remembered player creates it here (db_server lets players create tournaments)
    guest = await asyncio.to_thread(
        remembered_guest, player_file, db_server.http, f"Vera {secrets.randbelow(10**6)}"
    )
    assert guest is not None
    tid, made = await create_tournament(capsys, db_server, "--ends-in", "15s", "--invite-only")
    invite = made.split("invite code ")[1].split()[0]
    code, out = await cli(capsys, "tournament", "enter", tid, "--no-play", "--url", db_server.http)
    assert code == 1  # invite-only: without its code the tournament does not exist
    assert "tournament_not_found" in out
    code, out = await cli(capsys, "tournament", "enter", tid, "--no-play",
                          f"--invite-code={invite}", "--url", db_server.http)  # fmt: skip
    assert code == 0, out
    [seat] = kept_seats(seat_file, db_server.http)
    async with Client(db_server.ws) as client:  # the library plays the kept seat
        await client.rejoin(seat.room, seat.token)
        total = await play_to_the_end(client)

    def final() -> bool:
        return bool(fetch_standings(db_server.http, tid, invite_code=invite)["final"])

    await bounded(final, "the final standings after the end time")
    board = await asyncio.to_thread(fetch_standings, db_server.http, tid, invite_code=invite)
    [row] = board["entries"]
    assert (row["room"], row["score"]) == (seat.room, total)

    code, out = await cli(capsys, "tournament", "play", tid, "--url", db_server.http)
    assert code == 1
    assert f"{tid} is closed: play is over" in out

    verify = ("tournament", "verify", tid, "--room", row["room"], "--url", db_server.http,
              f"--invite-code={row['invite_code']}", f"--tournament-invite={invite}")  # fmt: skip
    code, out = await cli(capsys, *verify)
    assert code == 0, out
    assert "verdict: verified" in out
    code, out = await cli(capsys, *verify, "--seed", "0" * 64)
    assert code == 1
    assert "verdict: verified" not in out
    assert "verdict: " in out


async def test_turns_lists_the_games_waiting_for_the_player_and_plays_a_kept_one(
    db_server: LiveServer, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    player_file, seat_file = files
    suffix = secrets.randbelow(10**6)
    bob = await asyncio.to_thread(create_guest, db_server.http, f"Bob {suffix}")
    async with Client(db_server.ws, player_token=bob.token) as bob_client:
        kept = await bob_client.create_room(2, first_player="seat_order",
                                            correspondence_seconds=3 * 3600)  # fmt: skip
        await bob_client.join(kept.room, "Bob")
        # Ann sits down from the terminal (`yahtzee play --room R`): her seat is kept
        ann_name = f"Ann {suffix}"
        app = PlayApp(db_server.ws, name=ann_name, room=kept.room, player_file=player_file)
        async with app.run_test(size=(150, 60)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, TableScreen), "the table")
        [seat] = kept_seats(seat_file, db_server.http)
        assert (seat.room, seat.kind) == (kept.room, KIND_CORRESPONDENCE)
        ann = load_guest(player_file, db_server.http)
        assert ann is not None
        # Bob starts once he saw Ann go (his commands carry the seq he saw) and plays his
        # first turn: Ann's move now
        await bob_client.wait_for(
            lambda m: any(p.name == ann_name and not p.connected for p in m.players)
        )
        await bob_client.start()
        await bob_client.roll()
        await bob_client.score("chance")

        # another game of Ann's, joined elsewhere (the library, nothing kept)
        async with Client(db_server.ws, player_token=ann.token) as web:
            other = await web.create_room(1, correspondence_seconds=24 * 3600)
            await web.join(other.room, "Ann")
            await web.start()

        def both_listed() -> bool:
            listed = fetch_turns(db_server.http, ann.player, ann.token)
            return {t["room"] for t in listed["turns"]} == {kept.room, other.room}

        await bounded(both_listed, "both games in Ann's turns")
        code, out = await cli(capsys, "turns", "--url", db_server.http)
        assert code == 0, out
        lines = {line.split(" ", 1)[0]: line for line in out.splitlines()}
        assert "YOUR TURN" in lines[kept.room]
        assert ELSEWHERE not in lines[kept.room]
        assert "YOUR TURN" in lines[other.room]
        assert ELSEWHERE in lines[other.room]
        assert seat.token not in out
        assert ann.token not in out
        code, out = await cli(capsys, "turns", "--play", other.room, "--url", db_server.http)
        assert code == 1
        assert f"no seat kept here in {other.room}" in out

        # the kept one is played in the terminal: roll, score the best box
        app = SeatApp(db_server.ws, seat=seat, name=ann_name, player_file=player_file)
        async with app.run_test(size=(150, 60)) as pilot:
            await until(pilot, lambda: isinstance(app.screen, TableScreen), "the table")
            table = app.screen
            assert isinstance(table, TableScreen)
            me = app.client.player
            assert me is not None
            await play_turn(pilot, app, table, me, 2, ask=False)

        def no_longer_my_turn() -> bool:
            listed = fetch_turns(db_server.http, ann.player, ann.token)
            return kept.room not in {t["room"] for t in listed["turns"]}

        await bounded(no_longer_my_turn, "Ann's move taken off her turns")


async def test_play_correspondence_creates_a_room_and_keeps_its_seat(
    db_server: LiveServer, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    player_file, seat_file = files
    code, out = await cli(capsys, "play", "--correspondence", "400", "--url", db_server.ws)
    assert code == 2  # refused before connecting
    assert "--correspondence takes 1 to 336 hours" in out
    game = CorrespondenceGame(seats=2, hours=48, options=RoomOptions())
    name = f"Cora {secrets.randbelow(10**6)}"
    app = CorrespondenceApp(db_server.ws, game=game, name=name, player_file=player_file)
    async with app.run_test(size=(150, 60)) as pilot:
        await until(pilot, lambda: isinstance(app.screen, TableScreen), "the table")
        model = app.client.model
        assert model is not None
        assert (model.correspondence_seconds, model.auto_start) == (48 * 3600, True)
        [seat] = kept_seats(seat_file, db_server.http)
        assert (seat.room, seat.kind) == (model.room, KIND_CORRESPONDENCE)
        async with Client(db_server.ws) as dan:  # the last seat taken starts the game
            await dan.join(model.room, "Dan")
            await until(pilot, lambda: model.status is RoomStatus.PLAYING, "the start")
