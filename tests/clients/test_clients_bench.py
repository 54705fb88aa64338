"""``yahtzee bench``: a short real run (the game server with its Redis, and the bare server, as
subprocesses) and unit tests of what its figures rest on: the stream verifier, open-loop timing
from intended send times (on a fake clock) and the game / bare ratios. No assertion is about
speed: the figures are for the printout."""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from clients_live import LiveServer
from procs import ROOT

from clients.bench import cli as bench_cli
from clients.bench.ccu import ccu_summary, generator_may_be_the_limit, rooms_summary
from clients.bench.crowd import CCU_MIX, CrowdSink, mix_for
from clients.bench.pacing import LoopClock, closed_loop, open_loop, run_generator
from clients.bench.plot import PlotUnavailableError, plot
from clients.bench.procs import Collections
from clients.bench.report import BenchReport, Figures, ratios
from clients.bench.streams import LatencyHistogram, RoomStreams
from clients.bench.targets import GameRoom, RoomShape, Sink
from server.ops.metrics import Metrics

# ---------------------------------------------------------------------------- a fake clock


class FakeClock:
    """Time moves only when a coroutine sleeps until a later time or a step takes time."""

    def __init__(self) -> None:
        self.time = 0.0

    def now(self) -> float:
        return self.time

    async def sleep_until(self, when: float) -> None:
        self.time = max(self.time, when)


def slow_server(clock: FakeClock, service: float) -> Any:
    """A step that takes ``service`` seconds of the fake clock: it returns its ack time."""

    async def step(intended: float) -> float:
        del intended
        clock.time += service
        return clock.time

    return step


async def nothing() -> None:
    """A room that needs no preparation."""


async def test_open_loop_counts_latency_from_the_intended_send_time() -> None:
    # One command intended every second, each taking 3 s: the k-th is sent when the previous
    # one is acked (3k), acked at 3k + 3, and measured from its intended time k.
    clock = FakeClock()
    acks: list[float] = []
    pace = await open_loop(
        nothing,
        slow_server(clock, 3.0),
        clock,
        start=0.0,
        interval=1.0,
        end=5.0,
        deadline=100.0,
        record_ack=acks.append,
        record_unsent=pytest.fail,
    )
    assert acks == [3.0, 5.0, 7.0, 9.0, 11.0]  # 3k + 3 - k: the queueing shows
    assert (pace.sent, pace.unsent) == (5, 0)


async def test_open_loop_records_commands_not_sent_by_the_deadline() -> None:
    clock = FakeClock()
    acks: list[float] = []
    unsent: list[float] = []
    pace = await open_loop(
        nothing,
        slow_server(clock, 3.0),
        clock,
        start=0.0,
        interval=1.0,
        end=5.0,
        deadline=7.0,
        record_ack=acks.append,
        record_unsent=unsent.append,
    )
    # Sent at 0, 3, 6; at 9 the deadline (7) has passed: commands intended at 3 and 4 were never
    # sent and count with the latency they had reached by the deadline.
    assert acks == [3.0, 5.0, 7.0]
    assert unsent == [4.0, 3.0]
    assert (pace.sent, pace.unsent) == (3, 2)


async def test_open_loop_moves_the_schedule_on_by_a_new_game_s_set_up() -> None:
    # One command a second taking 0.5 s; before the third, the room sets up a new game for 2.5 s
    # (a dozen commands outside the measured stream): that time counts against no command, the
    # room's later commands are intended 2.5 s later, and the round still ends at ``end``.
    clock = FakeClock()
    acks: list[float] = []
    prepared = 0

    async def prepare() -> float | None:
        nonlocal prepared
        prepared += 1
        if prepared == 3:
            clock.time += 2.5
            return 2.5
        return None

    pace = await open_loop(
        prepare,
        slow_server(clock, 0.5),
        clock,
        start=0.0,
        interval=1.0,
        end=6.0,
        deadline=100.0,
        record_ack=acks.append,
        record_unsent=pytest.fail,
    )
    assert acks == [0.5] * 4  # intended at 0, 1, then 2 + 2.5 and 3 + 2.5; 4 + 2.5 is past the end
    assert (pace.sent, pace.unsent) == (4, 0)


async def test_closed_loop_counts_latency_from_the_real_send() -> None:
    clock = FakeClock()
    acks: list[float] = []
    pace = await closed_loop(nothing, slow_server(clock, 2.0), clock, 7.0, acks.append)
    assert acks == [2.0, 2.0, 2.0, 2.0]  # sent at 0, 2, 4, 6
    assert pace.sent == 4


# ---------------------------------------------------------------------------- the verifier


def streams(members: int = 2) -> tuple[RoomStreams, list[float]]:
    delivered: list[float] = []
    room = RoomStreams("r1", members, delivered.append)
    for connection in ("a", "b")[:members]:
        room.start(connection, 0)
    return room, delivered


def test_clean_streams_have_no_violations_and_time_the_last_delivery() -> None:
    room, delivered = streams()
    room.expect(1, intended=10.0)
    room.arrive("a", 1, b"x", now=10.5)
    assert delivered == []  # one connection still waits
    room.arrive("b", 1, b"x", now=11.0)
    room.arrive("a", 2, b"y", now=12.0)
    room.arrive("b", 2, b"y", now=12.5)
    room.expect(2, intended=12.0)  # the events may arrive before the ack
    assert delivered == [1.0, 0.5]
    assert room.finish() == []


def test_a_gap_is_a_violation() -> None:
    room, _ = streams()
    room.arrive("a", 1, b"x", now=1.0)
    room.arrive("a", 3, b"z", now=2.0)
    assert any("a: gap: seq 3 after 1" in v for v in room.finish())


def test_a_duplicate_is_a_violation() -> None:
    room, _ = streams()
    room.arrive("a", 1, b"x", now=1.0)
    room.arrive("a", 1, b"x", now=2.0)
    assert any("duplicate" in v for v in room.finish())


def test_different_payloads_for_one_seq_are_a_violation() -> None:
    room, _ = streams()
    room.arrive("a", 1, b"x", now=1.0)
    room.arrive("b", 1, b"tampered", now=1.0)
    assert any("seq 1 differs at b" in v for v in room.finish())


def test_a_command_not_delivered_to_every_connection_is_a_violation() -> None:
    room, delivered = streams()
    room.expect(1, intended=0.0)
    room.arrive("a", 1, b"x", now=1.0)  # b never gets it
    assert room.outstanding == 1
    assert any("1 commands not delivered to all 2" in v for v in room.finish())
    assert delivered == []


def test_a_second_snapshot_is_a_violation() -> None:
    room, _ = streams()
    room.start("a", 5)
    assert any("resynchronised" in v for v in room.finish())


# ---------------------------------------------------------------------------- figures


def test_ratios_are_game_over_bare_of_the_measured_figures() -> None:
    game, bare = Figures(commands=100, seconds=2.0), Figures(commands=400, seconds=2.0)
    for figures, ms in ((game, 8.0), (bare, 2.0)):
        for _ in range(10):
            figures.ack.record(ms / 1000)
            figures.delivery.record(2 * ms / 1000)
    g, b = game.to_dict(), bare.to_dict()
    ratio = ratios(g, b)
    assert ratio["commands_per_second"] == pytest.approx(50 / 200)
    assert ratio["ack_ms"]["p99"] == pytest.approx(g["ack_ms"]["p99"] / b["ack_ms"]["p99"])
    assert ratio["delivery_ms"]["max"] == pytest.approx(4.0, rel=1e-2)
    assert ratio["cpu_ms_per_command"]["total"] is None  # no CPU measured for bare: no ratio


def test_latency_histogram_percentiles() -> None:
    hist = LatencyHistogram()
    for ms in range(1, 1001):
        hist.record(ms / 1000)
    summary = hist.summary_ms()
    assert summary["p50"] == pytest.approx(500, rel=1e-2)
    assert summary["p99"] == pytest.approx(990, rel=1e-2)
    assert summary["p99.9"] == pytest.approx(999, rel=1e-2)
    assert summary["max"] == pytest.approx(1000, rel=1e-2)


def test_a_failed_check_makes_the_exit_code_non_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    async def broken_run(opts: Any) -> BenchReport:
        del opts
        return BenchReport(scenario={}, violations=["r1/a: gap: seq 3 after 1"])

    monkeypatch.setattr(bench_cli, "run", broken_run)
    args = bench_args("--quiet")
    assert bench_cli.execute(args) == 1


def test_plot_without_matplotlib_says_how_to_get_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    with pytest.raises(PlotUnavailableError, match=r"yahtzee-service\[plot\]"):
        plot({"open_loop": []}, tmp_path / "x.png")


def bench_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    bench_cli.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_spectators_scenario_is_one_room_of_four_players() -> None:
    opts = bench_cli.options_from(bench_args("--spectators", "1000"))
    assert (opts.rooms, opts.players, opts.room_spectators) == (1, 4, 1000)


# ---------------------------------------------------------------------------- a real run


def run_bench(*argv: str) -> tuple[int, dict[str, Any], str]:
    """``yahtzee bench --json`` as a subprocess (it starts both servers itself)."""
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "bench", "--json", "--quiet", *argv],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return done.returncode, json.loads(done.stdout), done.stderr


FIGURES = {"commands", "unsent", "setup_commands", "seconds", "commands_per_second", "ack_ms",
           "delivery_ms", "cpu_ms_per_command", "driver_cpu_ms_per_command"}  # fmt: skip
PERCENTILES = {"p50", "p99", "p99.9", "max"}


def check_pair(entry: dict[str, Any]) -> None:
    game, bare, ratio = entry["game"], entry["bare"], entry["ratio"]
    for figures in (game, bare):
        assert set(figures) == FIGURES
        assert figures["commands"] > 0
        assert set(figures["ack_ms"]) == set(figures["delivery_ms"]) == PERCENTILES
        assert figures["ack_ms"]["p50"] <= figures["ack_ms"]["p99"] <= figures["ack_ms"]["max"]
        assert set(figures["cpu_ms_per_command"]) == {"server", "redis", "total"}
    assert game["cpu_ms_per_command"]["server"] > 0
    assert ratio["commands_per_second"] == pytest.approx(
        game["commands_per_second"] / bare["commands_per_second"]
    )
    for kind in ("ack_ms", "delivery_ms"):
        for key in PERCENTILES:
            assert ratio[kind][key] == pytest.approx(game[kind][key] / bare[kind][key])
    bare_cpu = bare["cpu_ms_per_command"]["total"]
    if bare_cpu:  # a short round of the bare server may fall under the CPU clock's tick
        assert ratio["cpu_ms_per_command"]["total"] == pytest.approx(
            game["cpu_ms_per_command"]["total"] / bare_cpu
        )


def test_a_short_bench_run_reports_every_figure_and_verifies_the_streams() -> None:
    code, report, stderr = run_bench(
        "--rooms", "2", "--players", "2", "--room-spectators", "1",
        "--rounds", "1", "--round-seconds", "1", "--rates", "20,40",
    )  # fmt: skip
    assert code == 0, stderr + json.dumps(report, indent=1)[:3000]
    assert report["ok"]
    assert report["verification"] == {"ok": True, "violations": []}
    assert report["failures"] == []
    assert report["scenario"]["rooms"] == 2
    assert report["machine"]["cpus"] >= 1
    check_pair(report["closed_loop"])
    assert [e["offered_rate"] for e in report["open_loop"]] == [20.0, 40.0]
    for entry in report["open_loop"]:
        check_pair(entry)
    rss = report["rss_per_connection"]
    assert rss["connections"] == 2 * 3
    assert {t["target"].split(" (")[0] for t in report["targets"]} >= {
        "CPU per command <= 2 x bare"
    }


def test_a_short_bench_run_on_the_embedded_cluster_with_two_processes_verifies_the_streams() -> (
    None
):
    # The game server on a 3-master Redis Cluster (with replicas: every transition waits for
    # one), two server processes, each room's connections spread over both.
    code, report, stderr = run_bench(
        "--redis-cluster", "--workers", "2", "--spread", "--rooms", "2", "--players", "2",
        "--room-spectators", "1", "--rounds", "1", "--round-seconds", "1", "--rates", "20",
    )  # fmt: skip
    assert code == 0, stderr + json.dumps(report, indent=1)[:3000]
    assert report["ok"]
    assert report["verification"] == {"ok": True, "violations": []}
    assert report["failures"] == []
    assert report["scenario"]["workers"] == 2
    assert report["scenario"]["redis"].startswith("embedded Redis Cluster")
    check_pair(report["closed_loop"])
    for entry in report["open_loop"]:
        check_pair(entry)
    game = report["closed_loop"]["game"]
    assert game["cpu_ms_per_command"]["redis"] > 0  # the cluster's nodes are counted


def test_two_server_processes_on_one_valkey_each_serve_their_own_rooms() -> None:
    # `--workers 2` on a single Valkey: two processes on their own ports, room i on process
    # i mod 2 (as the bare server's rooms); the shared Valkey's CPU is still counted.
    code, report, stderr = run_bench(
        "--workers", "2", "--rooms", "2", "--players", "2", "--room-spectators", "1",
        "--rounds", "1", "--round-seconds", "1", "--rates", "20",
    )  # fmt: skip
    assert code == 0, stderr + json.dumps(report, indent=1)[:3000]
    assert report["ok"]
    assert report["verification"] == {"ok": True, "violations": []}
    assert report["scenario"]["workers"] == 2
    assert report["scenario"]["spread"] is False
    check_pair(report["closed_loop"])
    assert report["closed_loop"]["game"]["cpu_ms_per_command"]["redis"] > 0


def test_idle_connections_report_rss_per_connection() -> None:
    code, report, stderr = run_bench("--idle-connections", "50", "--heartbeat", "0.5")
    assert code == 0, stderr
    rss = report["rss_per_connection"]
    assert rss["connections"] == 50
    assert {"game_bytes_per_connection", "bare_bytes_per_connection", "ratio"} <= set(rss)
    assert any(t["target"].startswith("RSS per idle connection") for t in report["targets"])


def test_bench_is_a_yahtzee_subcommand() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "bench", "--help"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert "--idle-connections" in done.stdout
    assert "--plot" in done.stdout


async def test_game_rooms_play_through_a_game_and_set_up_the_next(
    live_server: LiveServer,
) -> None:
    # One player and one spectator on the session's server: step until the first game is over
    # and the next room is set up on the same connections; every command is delivered.
    sink = Sink()
    room = GameRoom(
        live_server.ws, 0, RoomShape(players=1, spectators=1), LoopClock(), lambda: sink
    )
    await room.open()
    first_room = room.current
    steps = 0
    try:
        while room.current is first_room:
            # 13 turns of at most 3 rolls, 2 holds and a score.
            assert steps < 13 * 6
            await room.prepare()
            if room.current is first_room:
                await room.step(LoopClock().now())
                steps += 1
    finally:
        await room.close()
    assert room.violations() == []
    assert sink.delivery.count == steps  # each command reached both connections
    # Set-up commands: create, 2 enter (join, spectate), start; then 2 leaves and the same again.
    assert sink.setup_commands == 4 + 2 + 4


# ---------------------------------------------------------------------------- players at human pace

STEP_FIGURES = {"rooms", "users", "people", "spectators", "computers", "lobby_streams",
                "commands_per_second", "delivery_ms", "computer_moves_per_second",
                "computer_lateness_ms", "server_cores", "valkey_cores", "generator_cores",
                "server_rss_bytes", "valkey_rss_bytes", "errors", "violations", "held",
                "generator_loop_lag_ms", "machine_busy_cores", "others_cores",
                "server_collections", "server_collection_seconds"}  # fmt: skip


def test_the_servers_collections_are_read_from_its_metrics() -> None:
    metrics = Metrics()
    metrics.collection(0.25, 40)
    metrics.collection(0.5, 2)
    read = Collections.parse(metrics.render().decode())
    assert read == Collections(2, 0.75)
    assert read - Collections(1, 0.25) == Collections(1, 0.5)
    assert Collections.parse("# nothing counted yet\n") == Collections(0, 0.0)


def test_the_generator_runs_on_uvloop_where_it_is_installed() -> None:
    async def loop_module() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert run_generator(loop_module()).startswith("uvloop")


def test_a_busy_or_late_generator_is_named_as_a_possible_limit() -> None:
    assert not generator_may_be_the_limit(0.46, 6.2)  # 9,002 users: the server's figures
    assert generator_may_be_the_limit(0.57, 38.8)  # 10,000: its loop lagged, not its CPU
    assert generator_may_be_the_limit(0.83, 4.0)  # a process near a whole core


def test_the_room_mix_holds_the_users_asked_for_with_every_kind_of_room() -> None:
    rooms = mix_for(64)
    assert sum(r.users for r in rooms) >= 64
    assert sum(r.users for r in rooms[:-1]) < 64  # no room more than needed
    assert {r.people for r in rooms} == {1, 2, 3, 4}
    assert any(r.computers for r in rooms)
    assert all(r.spectators for r in rooms if r.people == 4)  # busy rooms are watched
    assert mix_for(10, first=8)[0] == CCU_MIX[8]  # a ramp's next rooms continue the cycle


def test_a_computer_move_is_late_by_what_exceeds_the_pace_after_the_previous_move() -> None:
    sink = CrowdSink()
    sink.computer_moved(0.030)
    sink.computer_moved(-0.020)  # sooner than the pace: counted, recorded as on time
    assert sink.computer_moves == 2
    assert sink.early_moves == 1
    assert sink.lateness.summary_ms()["max"] == pytest.approx(30.0, rel=1e-2)


def test_the_ccu_summary_extrapolates_from_the_largest_step_held_and_says_so() -> None:
    steps = [
        {"users": 100, "rooms": 30, "server_cores": 0.10, "held": True},
        {"users": 200, "rooms": 60, "server_cores": 0.25, "held": True},
        {"users": 400, "rooms": 120, "server_cores": 0.90, "held": False},
    ]
    summary = ccu_summary(steps, pinned=True)
    assert summary["largest_users_held"] == 200
    assert summary["met_measured"] is False
    assert summary["server_cores_per_1000_users"] == pytest.approx(1.25)
    extrapolated = summary["extrapolated_users_per_server_core"]
    assert extrapolated["value"] == pytest.approx(800)
    assert extrapolated["label"].startswith("EXTRAPOLATION")
    assert rooms_summary(steps)["largest_rooms_held"] == 60


def check_steps(ramp: dict[str, Any], sizes: list[int]) -> None:
    assert [s["step"] for s in ramp["steps"]] == sizes
    for step in ramp["steps"]:
        assert set(step) >= STEP_FIGURES
        assert step["errors"] == 0, step["error_samples"]
        assert step["violations"] == 0
        assert step["commands_per_second"] > 0
        assert step["server_cores"] > 0
        assert step["lobby_streams"] >= 1
        assert set(step["delivery_ms"]) == set(step["computer_lateness_ms"]) == PERCENTILES


def test_a_tiny_ccu_ramp_plays_mixed_rooms_and_verifies_every_stream(
    official_table: object,
) -> None:
    # Two steps of a few rooms at a fast human pace, dealt to two generator processes (the
    # bench and one child); the computers' table is the session's.
    del official_table
    code, report, stderr = run_bench(
        "--ccu", "12,40", "--step-seconds", "3", "--warmup-seconds", "1", "--think", "0.05,0.1",
        "--computer-delay-ms", "100", "--drivers", "2",
    )  # fmt: skip
    assert code == 0, stderr + json.dumps(report, indent=1)[:3000]
    assert report["verification"] == {"ok": True, "violations": []}
    assert report["scenario"]["kind"] == "ccu"
    ramp = report["ccu"]
    check_steps(ramp, [12, 40])
    last = ramp["steps"][-1]
    assert last["generator_processes"] == 2
    assert last["users"] >= 40
    assert last["people"] + last["spectators"] == last["users"]
    assert last["spectators"] > 0
    assert last["computers"] > 0
    assert last["computer_moves_per_second"] > 0
    assert ramp["summary"]["target_users_per_process"] == 25_000
    assert any(t["target"].startswith(">= 25,000 concurrent players") for t in report["targets"])
    assert last["lobby_events_since_open"] >= last["lobby_streams"]  # each got the list at least
    # The table for people shows every step and the summary.
    table = BenchReport(scenario=report["scenario"], ccu=ramp).format_table()
    assert "concurrent players (--ccu)" in table
    assert table.count("    command -> last delivery (ms)") == 2
    assert "summary: {" in table


def test_a_tiny_vs_computer_ramp_times_the_computers_moves(official_table: object) -> None:
    del official_table
    code, report, stderr = run_bench(
        "--vs-computer", "2,4", "--step-seconds", "3", "--warmup-seconds", "1",
        "--think", "0.05,0.1", "--computer-delay-ms", "100",
    )  # fmt: skip
    assert code == 0, stderr + json.dumps(report, indent=1)[:3000]
    assert report["verification"] == {"ok": True, "violations": []}
    ramp = report["vs_computer"]
    check_steps(ramp, [2, 4])
    for step in ramp["steps"]:
        assert step["computers"] == 3 * step["rooms"] == 3 * step["people"]
        assert step["computer_moves_per_second"] > 0
        assert 0 < step["computer_lateness_ms"]["p50"] <= step["computer_lateness_ms"]["max"]
    assert ramp["summary"]["target_rooms_per_process"] == 3_000


def test_the_generator_settles_its_collector_as_the_server_does() -> None:
    # in a process of its own: the collector's state belongs to the whole process
    script = (
        "import gc\n"
        "from clients.bench.crowdrun import settle_collector\n"
        "settle_collector()\n"
        "print(not gc.isenabled(), gc.get_freeze_count() > 1_000)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == ["True", "True"]
