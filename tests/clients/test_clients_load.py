"""The load generator (``clients.load``) against a real server: a small load, its report, and
that the integrity checks do catch a tampered stream. No timing assertions: the speed figures
are for the benchmark's printout, not for tests."""

from __future__ import annotations

import argparse
import json

import msgspec
import pytest
from clients_live import LiveServer

from clients import load
from protocol import Rules, Scored

GAMES, PLAYERS, SPECTATORS = 3, 2, 1


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    load.add_arguments(parser)
    return parser.parse_args(list(argv))


def small_load(server: LiveServer, *extra: str) -> argparse.Namespace:
    return parse(
        "--url",
        server.ws,
        "--games",
        str(GAMES),
        "--players",
        str(PLAYERS),
        "--spectators",
        str(SPECTATORS),
        "--duration-limit",
        "120",
        *extra,
    )


@pytest.mark.parametrize("encoding", ["msgpack", "json"])
async def test_a_small_load_completes_with_a_clean_report(
    live_server: LiveServer, encoding: str, capsys: pytest.CaptureFixture[str]
) -> None:
    report = await load.run(small_load(live_server, "--encoding", encoding))

    assert report.ok, report.format_table()
    assert report.games_completed == report.games_requested == GAMES
    assert report.games_verified == GAMES
    assert report.integrity_violations == []
    assert report.failures == []
    assert not report.timed_out
    assert report.clients == GAMES * (PLAYERS + SPECTATORS)

    # Counts that follow from the set-up: one hello per connection, one room and one start per
    # game, a join per player, a spectate per spectator; every player fills all 13 boxes.
    # Play commands carry expect_seq, so a move decided just before another event (the
    # coalesced spectator count, a presence change) is refused with stale_state and decided
    # again: that is the only error allowed, and each extra start or score is one of them.
    by_type = report.commands_by_type
    assert set(report.errors) <= {"stale_state"}, report.errors
    stale = report.errors.get("stale_state", 0)
    assert by_type["hello"] == report.clients
    assert by_type["create_room"] == GAMES
    assert GAMES <= by_type["start"] <= GAMES + stale
    assert by_type["join"] == GAMES * PLAYERS
    assert by_type["spectate"] == GAMES * SPECTATORS
    assert GAMES * PLAYERS * 13 <= by_type["score"] <= GAMES * PLAYERS * 13 + stale
    assert GAMES * PLAYERS * 13 <= by_type["roll"] <= GAMES * PLAYERS * 13 * 3 + stale
    assert report.commands_sent == sum(by_type.values())
    assert report.replies == report.commands_sent  # every command got its ack (or error)

    lat = report.latency_ms
    assert set(lat) == {"p50", "p95", "p99", "max", "mean"}
    assert all(value > 0 for value in lat.values())
    assert lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]

    # Every client sees at least every scored event of its game (and much more).
    assert report.events_received >= report.clients * PLAYERS * 13
    assert report.events_per_second > 0
    assert report.wall_seconds > 0

    out = capsys.readouterr().out
    assert f"{GAMES}/{GAMES} completed" in out
    assert "result: OK" in out


async def test_json_output_is_the_report(
    live_server: LiveServer, capsys: pytest.CaptureFixture[str]
) -> None:
    report = await load.run(small_load(live_server, "--json"))
    data = json.loads(capsys.readouterr().out)
    assert data == json.loads(json.dumps(report.to_dict()))
    assert data["ok"] is True
    assert data["games_completed"] == GAMES
    assert data["integrity_violations"] == []
    assert data["latency_ms"]["p99"] > 0


async def test_the_integrity_check_catches_a_tampered_stream(live_server: LiveServer) -> None:
    args = small_load(live_server)
    stats = load._Stats()
    game = load._Game(
        index=0,
        players=[load._MeasuredClient(live_server.ws, stats, f"p{i}") for i in range(2)],
        spectators=[load._MeasuredClient(live_server.ws, stats, "s0")],
    )
    try:
        await load._play_game(game, args)
    finally:
        await load._close_all([game])
    assert game.completed
    assert game.room is not None
    assert load._check_room(game.room, game.clients, Rules.YAHTZEE) == []

    # The spectator "saw" different points in one scored event: its stream no longer matches
    # the players', and the totals no longer follow from the events.
    spectator = game.spectators[0]
    index, scored = next((i, u) for i, u in enumerate(spectator.delivered) if isinstance(u, Scored))
    spectator.delivered[index] = msgspec.structs.replace(scored, points=scored.points + 1)
    problems = load._check_room(game.room, game.clients, Rules.YAHTZEE)
    assert any("differs" in p for p in problems), problems

    # A client that missed an event on the wire is reported as a gap.
    spectator.delivered[index] = scored
    del spectator.wire[len(spectator.wire) // 2]
    problems = load._check_room(game.room, game.clients, Rules.YAHTZEE)
    assert any("wire gap" in p for p in problems), problems


@pytest.mark.parametrize(
    "url", ["ws://example.com/ws", "ws://10.0.0.1:8000/ws", "http://127.0.0.1:8000/ws"]
)
async def test_non_loopback_servers_are_refused(url: str) -> None:
    with pytest.raises(SystemExit, match=r"loopback|not a WebSocket"):
        await load.run(parse("--url", url))


@pytest.mark.parametrize(
    "url", ["ws://127.0.0.1:8000/ws", "ws://[::1]:8000/ws", "ws://localhost/ws"]
)
def test_loopback_servers_are_accepted(url: str) -> None:
    load.check_url(url, allow_remote=False)
    load.check_url("ws://example.com/ws", allow_remote=True)
