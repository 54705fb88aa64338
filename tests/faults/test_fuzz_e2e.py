"""The live server under fuzzed frames while honest games run.

One server process on a Redis with the deployed persistence (``appendfsync everysec``); first
honest bot games alone (the baseline), then the same games again while
``fuzzer.py`` (its own process) sends random, mutated-valid, oversize, deeply nested, wrong-type,
container-bomb and wrong-frame-type frames on many connections. Asserted (robust on a shared
2-core machine): every honest game finishes and passes the checker, the server neither dies nor
logs a traceback, every reply the fuzzer gets is a valid protocol message whose errors carry
known codes, connections end only with documented close codes, RSS stays flat within a
tolerance. Printed: the honest players' round-trip p99 without and with fuzz, and their ratio
(the goal is at most 2; on a loaded 2-core machine it is a measurement, not an assertion).

``YAHTZEE_FAULT_SCALE`` multiplies the games, the fuzz connections and the fuzz duration.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import pytest
from faultkit import (
    SCALE,
    RedisProcess,
    StartServers,
    Stats,
    check_tables,
    close_all,
    games,
    make_tables,
    percentile,
    play,
    record,
    tracebacks,
)
from procs import ServerProcess

from protocol import ERROR_CODES
from server.solver import Table

FUZZER = Path(__file__).with_name("fuzzer.py")
DOCUMENTED_CLOSES = {"1000", "1008", "1009", "1011", "4000", "None"}


async def honest_games(
    server: ServerProcess, name: str, more: Callable[[], bool] = lambda: False, **extra: object
) -> Stats:
    """Rounds of 6 honest bot games, one after another while ``more()`` says so (at least one):
    a p99 over several rounds rests on more than the hundred round trips of one."""
    stats = Stats()
    all_tables = []
    while True:
        tables = make_tables(games(6), stats, lambda t, i: [server.ws], lambda t, i: [server.ws])
        all_tables.extend(tables)
        try:
            async with asyncio.timeout(120 * max(1.0, SCALE)):
                await asyncio.gather(*(play(t, 0.01) for t in tables))
        finally:
            await close_all(tables)
        problems = await check_tables(server.http, tables)
        assert problems == [], "\n".join(problems[:30])
        if not more():
            break
    record(name, stats, all_tables, violations=0, **extra)
    assert stats.errors["internal_error"] == 0
    return stats


def rounds(count: int) -> Callable[[], bool]:
    """``more`` for :func:`honest_games`: ``count`` rounds in all."""
    left = [count]

    def more() -> bool:
        left[0] -= 1
        return left[0] > 0

    return more


@pytest.fixture
def fault_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """The deployed persistence (``docker-compose.yml``: ``appendfsync everysec``) rather than
    the fault suite's ``always``: with an fsync in every command's round trip the p99 measures
    the disk's latency, not what the fuzz costs the server."""
    server = RedisProcess(tmp_path / "redis", appendfsync="everysec")
    server.start()
    yield server
    server.stop()


def cpu(server: ServerProcess) -> float:
    assert server.process is not None
    times = psutil.Process(server.process.pid).cpu_times()
    return float(times.user + times.system)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def rss(server: ServerProcess) -> int:
    assert server.process is not None
    return int(psutil.Process(server.process.pid).memory_info().rss)


async def test_fuzzed_frames_on_many_connections_while_honest_games_run(
    start_servers: StartServers, official_table: Table
) -> None:
    # The official table is on disk, as on a running service (built at its first start): the
    # fuzz's hints load it in milliseconds instead of starting a build that takes a core.
    (server,) = start_servers(1)
    await honest_games(server, "warm-up (not measured)")
    rss_before = rss(server)
    cpu_0, started = cpu(server), time.monotonic()
    baseline = await honest_games(server, "honest games, no fuzz", rounds(3))
    cpu_base, seconds_base = cpu(server) - cpu_0, time.monotonic() - started

    connections, seconds = max(4, round(16 * SCALE)), 20 * max(1.0, SCALE)
    fuzzer = await asyncio.create_subprocess_exec(
        sys.executable, str(FUZZER), server.ws, str(connections), str(seconds), "12",
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    started, cpu_1, fuzzer_cpu_0 = time.monotonic(), cpu(server), children_cpu()
    try:
        # honest games for as long as the fuzz lasts (at least one round)
        fuzzed = await honest_games(
            server, "honest games, fuzz running", lambda: fuzzer.returncode is None
        )
        honest_done = time.monotonic() - started
        async with asyncio.timeout(seconds + 60):
            out, _ = await fuzzer.communicate()
    finally:
        if fuzzer.returncode is None:
            fuzzer.kill()
            await fuzzer.wait()
    assert fuzzer.returncode == 0
    tally = json.loads(out)
    cpu_fuzz, seconds_fuzz = cpu(server) - cpu_1, time.monotonic() - started
    fuzzer_cpu = children_cpu() - fuzzer_cpu_0
    rss_after = rss(server)

    p99_base = percentile(baseline.latencies, 99)
    p99_fuzz = percentile(fuzzed.latencies, 99)
    assert server.process is not None
    assert server.process.poll() is None
    logs = [server.log_path]
    record(
        "fuzz summary",
        fuzzed,
        [],
        fuzz_connections=connections,
        fuzz_seconds=seconds,
        honest_games_during_fuzz_s=round(honest_done, 1),
        frames_sent=sum(tally["sent"].values()),
        fuzz_replies=tally["replies"],
        fuzz_errors=tally["errors"],
        fuzz_closes=tally["closes"],
        fuzz_connections_opened=tally["connections"],
        honest_p99_ms_no_fuzz=round(p99_base * 1000, 1),
        honest_p99_ms_fuzz=round(p99_fuzz * 1000, 1),
        p99_ratio=round(p99_fuzz / p99_base, 2),
        server_cpu_share_no_fuzz=round(cpu_base / seconds_base, 2),
        server_cpu_share_fuzz=round(cpu_fuzz / seconds_fuzz, 2),
        fuzzer_cpu_share=round(fuzzer_cpu / seconds_fuzz, 2),
        rss_mib_before=round(rss_before / 2**20, 1),
        rss_mib_after=round(rss_after / 2**20, 1),
        tracebacks=tracebacks(logs),
    )
    assert tracebacks(logs) == 0
    assert sum(tally["sent"].values()) > 1000
    assert tally["replies"].get("undecodable", 0) == 0
    assert set(tally["errors"]) <= set(ERROR_CODES)
    assert "internal_error" not in tally["errors"]
    assert tally["errors"]  # the fuzz was answered with typed errors, not silence
    assert set(tally["closes"]) <= DOCUMENTED_CLOSES, tally["closes"]
    assert rss_after < rss_before * 1.5 + 40 * 2**20


async def test_the_worst_frames_the_limits_admit_on_eight_connections(
    start_servers: StartServers, official_table: Table
) -> None:
    """Eight connections from one address send the costliest frames the limits admit (16 KiB
    of nested empty arrays around a valid ``ping``, as fast as the byte budget lets them) while
    honest games run. Asserted: every honest game finishes and passes the checker, no
    traceback, no ``internal_error``. Printed: the honest p99 without and with them (the goal:
    at most 2 x) and the server's CPU share."""
    (server,) = start_servers(1)
    await honest_games(server, "warm-up (not measured)")
    cpu_0, started = cpu(server), time.monotonic()
    baseline = await honest_games(server, "honest games, no hostile frames", rounds(3))
    cpu_base, seconds_base = cpu(server) - cpu_0, time.monotonic() - started
    seconds = 20 * max(1.0, SCALE)
    hostile = await asyncio.create_subprocess_exec(
        sys.executable, str(FUZZER), server.ws, "8", str(seconds), "7", "worst",
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    started, cpu_1 = time.monotonic(), cpu(server)
    try:
        attacked = await honest_games(
            server, "honest games, 8 worst-frame connections", lambda: hostile.returncode is None
        )
        async with asyncio.timeout(seconds + 60):
            out, _ = await hostile.communicate()
    finally:
        if hostile.returncode is None:
            hostile.kill()
            await hostile.wait()
    tally = json.loads(out)
    cpu_attacked, seconds_attacked = cpu(server) - cpu_1, time.monotonic() - started
    p99_base = percentile(baseline.latencies, 99)
    p99_attacked = percentile(attacked.latencies, 99)
    record(
        "worst frames summary",
        attacked,
        [],
        worst_frames_sent=tally["sent"].get("worst", 0),
        replies=tally["replies"],
        errors=tally["errors"],
        honest_p99_ms_alone=round(p99_base * 1000, 1),
        honest_p99_ms_attacked=round(p99_attacked * 1000, 1),
        p99_ratio=round(p99_attacked / p99_base, 2),
        server_cpu_share_alone=round(cpu_base / seconds_base, 2),
        server_cpu_share_attacked=round(cpu_attacked / seconds_attacked, 2),
    )
    assert tally["sent"].get("worst", 0) > 8
    assert "internal_error" not in tally["errors"]
    assert tracebacks([server.log_path]) == 0
