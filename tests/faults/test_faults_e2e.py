"""Faults injected into real processes while bot games run, checked by an independent checker.

Two ``yahtzee serve`` processes share a Redis-compatible server that the test owns (append-only,
``appendfsync always``). Bots play concurrent games with spectators through clients that fail
over between the processes and resume by ``seq``; one fault is injected mid-game; afterwards
every game must finish and :mod:`faultkit` compares every client's received stream with the
room's log (nothing lost, duplicated or reordered; every acknowledged command exactly once; the
dice verify). Nobody may see ``internal_error``. The figures (recovery time, errors by code,
round trips) are printed at the end of the session.

``YAHTZEE_FAULT_SCALE`` multiplies the number of games (default 1: a few games per scenario,
the whole folder in about 90 s; e.g. ``YAHTZEE_FAULT_SCALE=10`` for a long manual run).
"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, cast

import httpx
import pytest
import websockets
from faultkit import (
    FaultClient,
    RedisProcess,
    StartServers,
    Stats,
    Table,
    as_event,
    check_stream,
    check_tables,
    close_all,
    games,
    make_tables,
    play,
    pubsub_addresses,
    read_log,
    record,
    rolled_so_far,
    tracebacks,
)
from procs import ServerProcess, scaled, until
from websockets.typing import Subprotocol

DELAY = 0.03  # seconds a bot waits before each action: games last a few seconds
GAME_SECONDS = 90.0


async def run_scenario(
    name: str,
    tables: list[Table],
    stats: Stats,
    servers: Sequence[ServerProcess],
    fault: Callable[[], Awaitable[dict[str, object]]],
    *,
    progress: int | None = None,
) -> dict[str, object]:
    """Play the tables; once ``progress`` rolls were seen, run ``fault``; check everything."""
    started = time.monotonic()
    playing = [asyncio.create_task(play(t, DELAY)) for t in tables]
    try:
        target = progress if progress is not None else 6 * len(tables)
        await until(lambda: rolled_so_far(tables) >= target, 60, "the games to get going")
        assert not all(t.done for t in tables), "the games ended before the fault"
        extra = await fault()
        async with asyncio.timeout(GAME_SECONDS * max(1.0, len(tables) / 8)):
            await asyncio.gather(*playing)
    finally:
        for task in playing:
            task.cancel()
        await asyncio.gather(*playing, return_exceptions=True)
        await close_all(tables)
    alive = next(s for s in servers if s.process is not None and s.process.poll() is None)
    problems = await check_tables(alive.http, tables)
    figures = record(
        name,
        stats,
        tables,
        seconds=round(time.monotonic() - started, 1),
        tracebacks=tracebacks([s.log_path for s in servers]),
        violations=len(problems),
        **extra,
    )
    assert problems == [], "\n".join(problems[:30])
    assert stats.errors["internal_error"] == 0
    assert all(t.done for t in tables)
    assert figures["tracebacks"] == 0
    return figures


def spread(servers: Sequence[ServerProcess]) -> Callable[[int, int], list[str]]:
    """Client ``i`` of table ``t`` prefers server ``(t + i) % n``; the others are fail-overs."""

    def urls(t: int, i: int) -> list[str]:
        first = (t + i) % len(servers)
        return [servers[(first + k) % len(servers)].ws for k in range(len(servers))]

    return urls


def only(server: ServerProcess, *others: ServerProcess) -> Callable[[int, int], list[str]]:
    return lambda t, i: [server.ws, *(o.ws for o in others)]


async def test_sigkill_one_of_two_processes(start_servers: StartServers) -> None:
    a, b = start_servers(2)
    stats = Stats()
    tables = make_tables(games(6), stats, spread([a, b]), spread([b, a]), spectators=2)
    on_a = [c for t in tables for c in t.clients if c.url == a.ws]

    async def kill() -> dict[str, object]:
        a.kill()
        stats.cleared_at = time.monotonic()
        return {"clients moved": len(on_a)}

    figures = await run_scenario("SIGKILL one of two processes", tables, stats, [a, b], kill)
    assert figures["reconnects"]


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
async def test_redis_restart(
    how: str, start_servers: StartServers, fault_redis: RedisProcess
) -> None:
    a, b = start_servers(2)
    stats = Stats()
    tables = make_tables(games(4), stats, spread([a, b]), spread([b, a]))

    async def restart() -> dict[str, object]:
        down = time.monotonic()
        fault_redis.signal(signal.SIGTERM if how == "SIGTERM" else signal.SIGKILL)
        await asyncio.to_thread(fault_redis.wait_exit)
        await asyncio.sleep(1.5)  # the outage's length (so that commands meet it), not a wait
        await asyncio.to_thread(fault_redis.start)
        stats.cleared_at = time.monotonic()
        return {"redis down ms": round((stats.cleared_at - down) * 1000)}

    await run_scenario(f"Redis restarted ({how}, AOF always)", tables, stats, [a, b], restart)
    assert stats.errors["unavailable"] > 0  # commands met the outage and got a typed error


async def test_redis_frozen_for_five_seconds(
    start_servers: StartServers, fault_redis: RedisProcess
) -> None:
    a, b = start_servers(2)
    stats = Stats()
    tables = make_tables(games(4), stats, spread([a, b]), spread([b, a]))

    async def freeze() -> dict[str, object]:
        fault_redis.signal(signal.SIGSTOP)
        try:
            await asyncio.sleep(5)  # the fault's duration, not a synchronisation
        finally:
            fault_redis.signal(signal.SIGCONT)
        stats.cleared_at = time.monotonic()
        return {}

    figures = await run_scenario("Redis frozen 5 s (SIGSTOP)", tables, stats, [a, b], freeze)
    assert stats.errors["unavailable"] > 0  # the freeze was felt, and answered with a typed error
    assert isinstance(figures["recovery ms max"], float)
    assert figures["recovery ms max"] < 10_000


async def test_a_command_refused_as_unavailable_runs_when_resent_with_its_id(
    start_servers: StartServers, fault_redis: RedisProcess
) -> None:
    # The connection's answer cache used to keep the `unavailable` refusal, so the resend that
    # the error invites (same id) got the same refusal for ever.
    (server,) = start_servers(1)
    async with websockets.connect(server.ws, subprotocols=[Subprotocol("yahtzee.v1.json")]) as ws:

        async def call(command_id: str, kind: str, **fields: object) -> dict[str, Any]:
            await ws.send(json.dumps({"type": kind, "id": command_id, **fields}))
            async with asyncio.timeout(scaled(15)):
                while True:
                    message = json.loads(await ws.recv())
                    if message.get("id") == command_id:
                        return cast(dict[str, Any], message)

        created = await call("c1", "create_room", seats=1, public=True)
        assert (await call("j1", "join", room=created["result"]["room"], name="P"))["type"] == "ack"
        fault_redis.signal(signal.SIGSTOP)
        try:
            refused = await call("s1", "start")
        finally:
            fault_redis.signal(signal.SIGCONT)
        assert (refused["type"], refused["code"], refused["retryable"]) == (
            "error",
            "unavailable",
            True,
        )
        await until(lambda: _ready(server), 10, "readiness")
        assert (await call("s1", "start"))["type"] == "ack"


async def _ready(server: ServerProcess) -> bool:
    async with httpx.AsyncClient(timeout=5) as http:
        return (await http.get(f"{server.http}/readyz")).status_code == 200


async def test_pubsub_connection_of_a_process_drops(
    start_servers: StartServers, fault_redis: RedisProcess
) -> None:
    a, b = start_servers(2)
    stats = Stats()
    # one player on each process, spectators on a: a hears b's events only through pub/sub
    tables = make_tables(games(4), stats, spread([a, b]), only(a, b), spectators=2)
    admin = fault_redis.client()
    assert a.process is not None
    pid = a.process.pid

    async def cut() -> dict[str, object]:
        kills = 0
        for _ in range(5):
            addresses = await asyncio.to_thread(pubsub_addresses, admin, pid, fault_redis.port)
            for address in addresses:
                await asyncio.to_thread(admin.client_kill, address)
                kills += 1
            stats.cleared_at = time.monotonic()
            before = rolled_so_far(tables)
            if all(t.done for t in tables):
                break
            # the feed subscribes again, and the games go on meanwhile
            await until(
                lambda: (
                    bool(pubsub_addresses(admin, pid, fault_redis.port))
                    or all(t.done for t in tables)
                ),
                10,
                "the feed to resubscribe",
            )
            await until(
                lambda b=before: rolled_so_far(tables) >= b + 4 or all(t.done for t in tables),
                20,
                "more rolls",
            )
        return {"pub/sub connections killed": kills}

    try:
        await run_scenario("pub/sub connection killed (x5)", tables, stats, [a, b], cut)
    finally:
        admin.close()


async def test_spectator_churn_on_one_process_while_players_sit_on_another(
    start_servers: StartServers,
) -> None:
    a, b = start_servers(2)
    stats = Stats()
    tables = make_tables(games(4), stats, only(a), only(b), spectators=2)
    churned: list[tuple[str, FaultClient]] = []

    async def churner(n: int) -> None:
        round_ = 0
        while not all(t.done for t in tables):
            table = tables[(n + round_) % len(tables)]
            round_ += 1
            await until(lambda t=table: bool(t.room), 30, "the room to exist")
            client = FaultClient([b.ws], stats, f"churn{n}.{round_}")
            await client.connect()
            try:
                await client.spectate(table.room)
                churned.append((table.room, client))
                seen = len(client.wire)
                await until(
                    lambda c=client, s=seen, t=table: len(c.wire) > s or t.done, 10, "an event"
                )
            finally:
                await client.close()

    async def churn() -> dict[str, object]:
        stats.cleared_at = time.monotonic()
        workers = [asyncio.create_task(churner(n)) for n in range(6)]
        await until(lambda: all(t.done for t in tables), GAME_SECONDS, "the games to end")
        await asyncio.gather(*workers)
        return {"spectators churned": len(churned)}

    await run_scenario("spectator churn on b, players on a", tables, stats, [a, b], churn)
    assert len(churned) > 10
    # what each short-lived spectator saw is a gap-free stretch of the log, too
    logs = {t.room: [as_event(e) for e in await read_log(a.http, t.room)] for t in tables}
    problems = [
        p for room, c in churned for p in check_stream(c, room, logs[room], to_the_end=False)
    ]
    assert problems == [], "\n".join(problems[:30])
