"""Computer players, the advisor and the analysis, end to end: real server processes, real
WebSocket clients, the strategy table of the official rules built once per session."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from typing import Any

import psutil
import pytest
from gameplay import assert_gap_free, play_turn, replay, totals_of
from procs import ServerProcess, StartServer, scaled, until
from wsclient import Msg, WsClient, get_json, http_get

from server import game
from server.solver import Table

pytestmark = pytest.mark.usefixtures("official_table")


@pytest.fixture
def fast(start_server: StartServer) -> ServerProcess:
    """A server whose computers move without delay."""
    return start_server({"YAHTZEE_COMPUTER_DELAY_MS": "0"})


def turn_of(events: list[Msg]) -> str | None:
    """The player on turn after ``events`` (``None`` at game over or before the start)."""
    for event in reversed(events):
        if event["type"] == "game_over":
            return None
        if event["type"] == "turn_changed":
            return str(event["player"])
    return None


async def play_against_computers(person: WsClient) -> Msg:
    """Play ``person``'s turns (one roll, the best box) until game over; returns it."""
    while True:
        await person.wait_for(
            lambda: (
                any(e["type"] == "game_over" for e in person.events)
                or turn_of(person.events) == person.player
            ),
            within=60,
        )
        over = [e for e in person.events if e["type"] == "game_over"]
        if over:
            return over[0]
        await play_turn(person, rolls=1)


async def test_a_person_plays_a_whole_game_against_two_computers(fast: ServerProcess) -> None:
    person = await WsClient(fast.ws, "json", "P").connect()
    watcher = await WsClient(fast.ws, "msgpack", "W").connect()
    try:
        created = await person.ok(
            "create_room",
            seats=3,
            public=True,
            computers=[{"level": "optimal"}, {"level": "easy", "name": "Greedy"}],
            options={"first_player": "seat_order"},
        )
        room = created["result"]["room"]
        await watcher.ok("spectate", room=room)
        snapshot = (await watcher.wait_for(lambda: watcher.snapshots))[0]["state"]
        seated = {p["name"]: p["computer"] for p in snapshot["players"]}
        assert seated == {"Ada": "optimal", "Greedy": "easy"}
        assert snapshot["host"] is None  # computers are never the host
        await person.join(room, "Pat")
        assert person.snapshots[-1]["state"]["host"] == person.player
        await person.ok("start")
        over = await play_against_computers(person)
        await watcher.wait_for(lambda: any(e["type"] == "game_over" for e in watcher.events))
        assert len(over["results"]) == 3
        computers = {p["player"] for p in snapshot["players"]}
        moves = [e for e in watcher.events if e.get("player") in computers]
        assert {e["type"] for e in moves} >= {"rolled", "scored", "turn_changed"}
        scored = [e for e in moves if e["type"] == "scored"]
        assert len(scored) == 2 * 13
        assert not any(e["automatic"] for e in scored)
        assert_gap_free(watcher.events, watcher.snapshots[0]["seq"])
    finally:
        await person.close()
        await watcher.close()


async def test_the_host_seats_and_removes_computers_in_the_lobby(fast: ServerProcess) -> None:
    host = await WsClient(fast.ws, "json", "H").connect()
    guest = await WsClient(fast.ws, "json", "G").connect()
    try:
        room = (await host.ok("create_room", seats=3, public=True))["result"]["room"]
        await host.join(room, "Host")
        await guest.join(room, "Guest")
        refused = await guest.call("add_computer", level="hard")
        assert refused["code"] == "not_host"
        added = await host.ok("add_computer", level="hard", name="Robo")
        robo = added["result"]["player"]
        assert added["result"]["seat"] == 2
        joined = await guest.wait_event(lambda e: e["seq"] == added["seq"])
        assert joined["type"] == "player_joined"
        assert joined["computer"] == "hard"
        assert joined["name"] == "Robo"
        full = await host.call("add_computer", level="easy")
        assert full["code"] == "room_full"
        not_computer = await host.call("remove_computer", player=guest.player)
        assert not_computer["code"] == "invalid_field"
        removed = await host.ok("remove_computer", player=robo)
        left = await guest.wait_event(lambda e: e["seq"] == removed["seq"])
        assert left["type"] == "player_left"
        assert left["player"] == robo
        await host.ok("add_computer", level="easy")
        await host.ok("start")
        late = await host.call("add_computer", level="easy")
        assert late["code"] == "game_already_started"
    finally:
        await host.close()
        await guest.close()


async def test_the_advisor_answers_for_the_player_on_turn(fast: ServerProcess) -> None:
    person = await WsClient(fast.ws, "json", "P").connect()
    watcher = await WsClient(fast.ws, "json", "W").connect()
    try:
        room = (await person.ok("create_room", seats=1, public=True))["result"]["room"]
        await person.join(room, "Pat")
        early = await person.call("hint")
        assert early["code"] == "wrong_phase"
        await person.ok("start")
        await person.wait_event(lambda e: e["type"] == "turn_changed")
        first = (await person.ok("hint"))["result"]
        assert first["player"] == person.player
        assert first["rolls_left"] == 3
        assert [o["kind"] for o in first["options"]] == ["roll"]
        assert 240 < first["options"][0]["expected"] < 270  # the game's value: about 254.6
        ack = await person.ok("roll")
        rolled = await person.wait_event(lambda e: e["seq"] == ack["seq"])
        await watcher.ok("spectate", room=room)
        advice = (await watcher.ok("hint"))["result"]  # spectators may ask too
        options = advice["options"]
        assert len(options) == 3
        assert advice["rolls_left"] == 2
        expected = [o["expected"] for o in options]
        assert expected == sorted(expected, reverse=True)
        for option in options:
            if option["kind"] == "roll":
                assert len(option["keep"]) < 5
                assert option["box"] is None
            else:
                assert option["kind"] == "score"
                assert option["box"] in {p["box"] for p in rolled["preview"] if p["allowed"]}
    finally:
        await person.close()
        await watcher.close()


async def test_a_room_without_hints_refuses_them(fast: ServerProcess) -> None:
    person = await WsClient(fast.ws, "json", "P").connect()
    try:
        room = (await person.ok("create_room", seats=1, public=True, hints=False))["result"]["room"]
        await person.join(room, "Pat")
        assert person.snapshots[-1]["state"]["hints"] is False
        await person.ok("start")
        refused = await person.call("hint")
        assert refused["code"] == "hints_disabled"
    finally:
        await person.close()


async def test_the_analysis_shows_optimal_play_loses_nothing(
    fast: ServerProcess, official_table: Table
) -> None:
    person = await WsClient(fast.ws, "json", "P").connect()
    try:
        created = await person.ok(
            "create_room", seats=2, public=True, computers=[{"level": "optimal"}]
        )
        room = created["result"]["room"]
        await person.join(room, "Pat")
        await person.ok("start")
        await play_against_computers(person)
        analysis: dict[str, Any] = await get_json(f"{fast.http}/rooms/{room}/analysis")
        assert analysis["room"] == room
        assert analysis["options"]["rules"] == "yahtzee"
        by_kind = {p["computer"]: p for p in analysis["players"]}
        optimal, pat = by_kind["optimal"], by_kind[None]
        assert optimal["decisions"]
        assert pat["decisions"]
        assert optimal["total_loss"] == pytest.approx(0, abs=1e-6)
        # one roll and the best-looking box: many decisions cost Pat expected points
        assert pat["total_loss"] > 5
        assert pat["mean_loss"] > 0
        boxes = [d for d in pat["decisions"] if d["kind"] == "box"]
        assert len(boxes) == 13
        for d in pat["decisions"]:
            assert d["loss"] == pytest.approx(d["best_expected"] - d["chosen_expected"], abs=1e-2)
        missing = await http_get(f"{fast.http}/rooms/nosuchroom/analysis")
        assert missing.status_code == 404
    finally:
        await person.close()


async def test_computers_leave_when_the_last_person_leaves(fast: ServerProcess) -> None:
    person = await WsClient(fast.ws, "json", "P").connect()
    watcher = await WsClient(fast.ws, "json", "W").connect()
    try:
        created = await person.ok(
            "create_room", seats=3, public=True, computers=[{"level": "easy"}, {"level": "medium"}]
        )
        room = created["result"]["room"]
        await person.join(room, "Pat")
        await watcher.ok("spectate", room=room)
        await person.ok("start")
        await person.ok("leave")
        over = await watcher.wait_event(lambda e: e["type"] == "game_over")
        assert all(r["forfeited"] for r in over["results"])
    finally:
        await person.close()
        await watcher.close()


async def test_another_process_plays_the_computers_when_one_dies(
    start_server: StartServer,
) -> None:
    delay = {"YAHTZEE_COMPUTER_DELAY_MS": "200"}
    first, second = start_server(delay), start_server(delay)
    person = await WsClient(first.ws, "json", "P").connect()
    watcher = await WsClient(second.ws, "json", "W").connect()
    try:
        created = await person.ok(
            "create_room",
            seats=3,
            public=True,
            computers=[{"level": "hard"}, {"level": "easy"}],
            options={"first_player": "seat_order"},  # the computers play first
        )
        room = created["result"]["room"]
        await person.join(room, "Pat")
        await watcher.ok("spectate", room=room)
        await person.ok("start")
        await watcher.wait_event(lambda e: e["type"] == "rolled")
        first.kill()  # the process that started the game, and woke the computers, is gone
        await watcher.wait_for(
            lambda: sum(e["type"] == "turn_changed" for e in watcher.events) >= 3, within=30
        )
        turns = [e["player"] for e in watcher.events if e["type"] == "turn_changed"]
        assert turns[2] not in turns[:2]  # both computers moved: the person's turn came
        scored = [e for e in watcher.events if e["type"] == "scored"]
        assert len(scored) == 2
        assert len({e["player"] for e in scored}) == 2
    finally:
        await person.close()
        await watcher.close()


async def _children_running(pid: int, module: str, within: float = 30.0) -> list[psutil.Process]:
    """The children of ``pid`` running ``module``, once there is one: on a busy machine the
    child may start a while after the command that asked for it was answered."""
    deadline = time.monotonic() + within
    while True:
        found = []
        for child in psutil.Process(pid).children():
            with contextlib.suppress(psutil.NoSuchProcess):
                if module in " ".join(child.cmdline()):
                    found.append(child)
        if found or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.05)  # polling for the child, bounded by the deadline


async def test_a_missing_table_is_built_in_the_background(
    start_server: StartServer, tmp_path: Any
) -> None:
    """With an empty table cache, a hint answers `unavailable` (retryable) at once instead of
    waiting for the build; the game itself is not held up."""
    server = start_server({"YAHTZEE_SOLVER_CACHE": str(tmp_path / "empty")})
    person = await WsClient(server.ws, "json", "P").connect()
    try:
        room = (await person.ok("create_room", seats=1, public=True))["result"]["room"]
        await person.join(room, "Pat")
        await person.ok("start")
        refused = await person.call("hint")
        assert refused["code"] == "unavailable"
        assert refused["retryable"] is True
        ack = await person.ok("roll")  # play goes on meanwhile
        assert ack["seq"] > 0
        # the build runs in a child process at a lower priority, not in the server's interpreter
        assert server.process is not None
        builders = await _children_running(server.process.pid, "server.strategy.tablebuild")
        assert len(builders) == 1
        # the child lowers its own priority once it runs: found before that, it is lowered a
        # moment later (bounded)
        lowered = min(19, psutil.Process().nice() + 10)  # 19: the cap
        await until(lambda: builders[0].nice() == lowered, scaled(10), "the build's niceness")
        # and only when nothing else wants the CPU (niceness alone is per session under the
        # kernel's autogroup scheduling)
        assert os.sched_getscheduler(builders[0].pid) == os.SCHED_IDLE
    finally:
        await person.close()
    server.kill()  # the build does not outlive the server that asked for it
    _, alive = psutil.wait_procs(builders, timeout=30)
    assert alive == []


async def test_two_processes_make_each_computer_move_exactly_once(
    start_server: StartServer,
) -> None:
    """Both processes poll the shared schedule and the committing one also wakes locally:
    still every move happens once (the log replays through the engine to the same totals)."""
    fast = {"YAHTZEE_COMPUTER_DELAY_MS": "0", "YAHTZEE_TIMER_POLL_SECONDS": "0.05"}
    first, second = start_server(fast), start_server(fast)
    person = await WsClient(first.ws, "json", "P").connect()
    watcher = await WsClient(second.ws, "json", "W").connect()
    try:
        computers = [{"level": "hard"}, {"level": "medium"}, {"level": "easy"}]
        created = await person.ok("create_room", seats=4, public=True, computers=computers)
        room = created["result"]["room"]
        await watcher.ok("spectate", room=room)
        await person.join(room, "Pat")
        await person.ok("start")
        over = await play_against_computers(person)
        await watcher.wait_for(lambda: any(e["type"] == "game_over" for e in watcher.events))
        log = await game_log(first, room)
        state = replay(log, game.RuleOptions(), 4)
        assert state.phase is game.Phase.FINISHED
        assert {p.player_id: p.card.totals().grand for p in state.players} == totals_of(over)
        scored = [e["player"] for e in log if e["type"] == "scored"]
        assert sorted(scored.count(p) for p in set(scored)) == [13, 13, 13, 13]
    finally:
        await person.close()
        await watcher.close()


async def game_log(server: ServerProcess, room: str) -> list[Msg]:
    events: list[Msg] = []
    after: int | None = 0
    while after is not None:
        page = await get_json(f"{server.http}/rooms/{room}/events?after={after}&limit=500")
        events += page["events"]
        after = page["next_after"]
    return events
