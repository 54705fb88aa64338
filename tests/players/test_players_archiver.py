"""The archiver on the real Redis and a real PostgreSQL, without sockets: a finished game is
marked by the transition that finishes it, written once with its seats and log, kept in Redis
until then; a database killed in the middle of a write loses and doubles nothing."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from procs import BOTH_BACKENDS, async_client

from server import game
from server.ops.database_settings import ArchiveSettings
from server.ops.embedded_postgres import EmbeddedPostgres
from server.service.archiver import Archiver
from server.service.identities import Identities
from server.service.outcomes import Cached, Change
from server.service.rooms import GameService
from server.service.seats import Seats
from server.settings import Settings
from server.storage.archive import Archive
from server.storage.archived_game import game_id
from server.storage.pending import PendingArchive
from server.storage.postgres import Database
from server.storage.redis_store import RedisStore

RETENTION = 600
GRACE = 30


class Clock:
    """The test's clock (Unix ms): archiver leases and retries move only when it says."""

    def __init__(self) -> None:
        self.now = int(time.time() * 1000)

    def __call__(self) -> int:
        return self.now


@dataclass
class Node:
    store: RedisStore
    service: GameService
    seats: Seats
    pending: PendingArchive
    clock: Clock


@pytest.fixture
async def node(redis_url: str, redis_prefix: str, redis_backend: str) -> AsyncIterator[Node]:
    client = async_client(redis_url, redis_backend)
    settings = Settings(redis_url=redis_url, redis_prefix=redis_prefix, retention_seconds=RETENTION)
    store = RedisStore(client, redis_prefix)
    clock = Clock()
    service = GameService(store, settings, clock=clock, dice=lambda n: (6,) * n)
    pending = PendingArchive(store)
    service.endings.connect(pending.add)  # as the players part does when it starts
    try:
        yield Node(store, service, Seats(service), pending, clock)
    finally:
        await client.aclose()


async def finished_room(
    node: Node, identity: str | None = None, tournament: tuple[str, str, int] | None = None
) -> tuple[str, str]:
    """A one-seat room played to its end (every turn: one roll, the best box)."""
    service = node.service
    room_id, _ = await service.create_room(
        options=game.RuleOptions(first_player=game.FirstPlayer.SEAT_ORDER),
        seats=1,
        tournament=tournament,
    )
    joined = await node.seats.join(room_id, "Ann", None, identity=identity)
    player = str(joined.result.player)

    def start(cached: Cached) -> Change:
        return Change(*service.apply(room_id, cached.record, [game.Start(player)]))

    await service.transact(room_id, start)

    def turn(cached: Cached) -> Change | None:
        if cached.record.game.phase == game.Phase.FINISHED:
            return None
        record, events = service.apply(room_id, cached.record, [game.Roll(player, ())])
        best = game.best_auto_score(record.game)
        record, more = service.apply(room_id, record, [game.Score(player, best)])
        return Change(record, events + more)

    while True:
        outcome = await service.transact(room_id, turn)
        assert outcome.record is not None
        if outcome.record.game.phase == game.Phase.FINISHED:
            return room_id, player


def archiver_for(node: Node, db: Database) -> Archiver:
    return Archiver(
        node.store,
        Archive(db),
        node.pending,
        retention_seconds=RETENTION,
        grace_seconds=GRACE,
        lease_ms=10_000,
        retry_ms=1_000,
        clock=node.clock,
    )


@BOTH_BACKENDS
async def test_a_finished_game_is_archived_once_with_its_seats_log_and_dice(
    node: Node, database: Database
) -> None:
    identities = Identities(database, ArchiveSettings())
    ann, _token = await identities.create_guest("Ann Lee")
    room_id, player = await finished_room(node, identity=ann.id)
    assert await node.pending.count() == 1
    archiver = archiver_for(node, database)
    assert await archiver.run_once() == 1
    assert await node.pending.count() == 0

    body = await Archive(database).game(game_id(room_id))
    assert body is not None
    log = await node.store.read_events(room_id, 0)
    assert body["event_count"] == len(log) == len(body["events"])
    assert [e["seq"] for e in body["events"]] == [seq for seq, _ in log]
    assert body["outcome"] == "finished"
    assert body["server_seed"] is not None
    assert body["events"][-1]["type"] == "game_over"
    assert body["events"][-1]["server_seed"] == body["server_seed"]
    assert body["dice_commitment"] == next(
        e["dice_commitment"] for e in body["events"] if e["type"] == "game_started"
    )
    (seat,) = body["players"]
    assert seat["player"] == player
    assert seat["identity"] == ann.id
    assert seat["place"] == 1
    upper_bonus = 35 if seat["upper_bonus"] else 0
    bonuses = 100 * seat["yahtzee_bonuses"]
    assert seat["total"] == sum(s for s in seat["scores"] if s) + upper_bonus + bonuses
    assert seat["yahtzees"] >= 1  # sixes every roll: a Yahtzee in the first turn
    # the room is still there for late readers, but only a grace longer, not its retention
    keys = node.store.keys(room_id)
    for key in (keys.room, keys.log, keys.seats):
        assert 0 < await node.store.redis.ttl(key) <= GRACE < RETENTION

    # the same game again (a second archiver, a retried pass): nothing more is written
    await node.pending.add(room_id, node.clock())
    assert await archiver.run_once() == 0
    assert await Archive(database).count() == 1
    assert await node.pending.count() == 0


async def test_a_database_that_is_down_keeps_the_rooms_pending_and_alive(
    node: Node, redis_prefix: str
) -> None:
    room_id, _ = await finished_room(node)
    db = Database("postgresql://nobody@127.0.0.1:1/none", timeout=0.5, connect_timeout=1)
    await db.open()
    try:
        keys = node.store.keys(room_id)
        await node.store.redis.expire(keys.room, 10)  # about to expire
        archiver = archiver_for(node, db)
        assert await archiver.run_once() == 0
        assert archiver.last_error
        assert await node.pending.count() == 1
        assert await node.store.redis.ttl(keys.room) > RETENTION // 2  # kept alive
    finally:
        await db.close()


@BOTH_BACKENDS
async def test_the_sweep_finds_what_the_pending_set_missed(node: Node, database: Database) -> None:
    # a finished room whose process died between its commit and its mark
    lost, _ = await finished_room(node)
    await node.pending.done(lost)
    # a started game whose room is about to expire unfinished, and one that is not
    expiring, player = await started_room(node)
    await node.store.redis.pexpire(node.store.keys(expiring).room, 5_000)
    alive, _ = await started_room(node)
    archiver = archiver_for(node, database)
    assert await archiver.sweep() == 2
    assert await archiver.run_once() == 2
    archive = Archive(database)
    finished = await archive.game(lost)
    abandoned = await archive.game(expiring)
    assert finished is not None
    assert finished["outcome"] == "finished"
    assert abandoned is not None
    assert abandoned["outcome"] == "abandoned"
    assert abandoned["server_seed"] is None  # never revealed for a game that did not end
    assert [p["player"] for p in abandoned["players"]] == [player]
    assert await archive.game(alive) is None
    assert await archiver.sweep() == 0  # what is archived is not marked again


async def started_room(node: Node) -> tuple[str, str]:
    """A one-seat room whose game started (one turn played)."""
    service = node.service
    room_id, _ = await service.create_room(
        options=game.RuleOptions(first_player=game.FirstPlayer.SEAT_ORDER), seats=1
    )
    player = str((await node.seats.join(room_id, "Ann", None)).result.player)

    def start(cached: Cached) -> Change:
        return Change(*service.apply(room_id, cached.record, [game.Start(player)]))

    await service.transact(room_id, start)
    return room_id, player


async def _wait_until(check: Callable[[], Any], within: float = 30.0) -> None:
    """Poll ``check`` (a coroutine function) until it is true, bounded."""
    deadline = time.monotonic() + within
    while not await check():
        assert time.monotonic() < deadline, "condition not reached in time"
        await asyncio.sleep(0.02)


async def test_a_database_killed_mid_write_loses_and_doubles_nothing(node: Node) -> None:
    rooms = [await finished_room(node) for _ in range(4)]
    with EmbeddedPostgres() as pg:
        db = Database(pg.url, timeout=1.0, connect_timeout=2, statement_timeout_ms=120_000)
        await db.open()
        try:
            await db.ensure_schema()
            archiver = archiver_for(node, db)
            # Hold the log table: the archiver's first transaction stops in its middle (game
            # and seats written, the log waiting for the lock) until the database dies.
            blocker = await psycopg.AsyncConnection.connect(pg.url)
            await blocker.execute("LOCK TABLE game_logs IN ACCESS EXCLUSIVE MODE")
            writing = asyncio.create_task(archiver.run_once())

            async def waiting_on_the_lock() -> bool:
                async with await psycopg.AsyncConnection.connect(pg.url) as probe:
                    cur = await probe.execute(
                        "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                        " AND query LIKE 'INSERT INTO game_logs%%'"
                    )
                    row = await cur.fetchone()
                    return bool(row and row[0] >= 1)

            await _wait_until(waiting_on_the_lock)
            await asyncio.to_thread(pg.kill)
            assert await writing == 0
            assert archiver.last_error
            await blocker.close()
            assert await node.pending.count() == 4  # nothing was confirmed

            await asyncio.to_thread(pg.restart)
            passes = 0
            while await node.pending.count():
                node.clock.now += 10_000  # past every retry and lease
                await archiver.run_once()
                passes += 1
                assert passes < 200, archiver.last_error
            async with db.connection() as conn:
                cur = await conn.execute(
                    "SELECT g.room_id, g.event_count, jsonb_array_length(l.events),"
                    " (SELECT count(*) FROM game_players p WHERE p.game_id = g.id)"
                    " FROM games g JOIN game_logs l ON l.game_id = g.id ORDER BY g.room_id"
                )
                rows = await cur.fetchall()
            expected = []
            for room_id, _ in sorted(rooms):
                log = await node.store.read_events(room_id, 0)
                expected.append((room_id, len(log), len(log), 1))
            assert rows == expected
        finally:
            await db.close()


async def test_two_archivers_at_once_write_each_game_once(node: Node, database_url: str) -> None:
    rooms = {room_id for room_id, _ in [await finished_room(node) for _ in range(6)]}
    first, second = Database(database_url), Database(database_url)
    await first.open()
    await second.open()
    try:
        a, b = archiver_for(node, first), archiver_for(node, second)
        done = await asyncio.gather(a.run_once(), b.run_once())
        while await node.pending.count():  # a room the other one had claimed: after its lease
            node.clock.now += 10_000
            done += await asyncio.gather(a.run_once(), b.run_once())
        assert sum(done) == len(rooms)
        async with first.connection() as conn:
            cur = await conn.execute("SELECT room_id FROM games")
            assert {row[0] for row in await cur.fetchall()} == rooms  # type: ignore[index]
    finally:
        await first.close()
        await second.close()


async def test_a_game_every_person_left_is_archived_as_abandoned(
    node: Node, database: Database
) -> None:
    service = node.service
    room_id, _ = await service.create_room(
        options=game.RuleOptions(first_player=game.FirstPlayer.SEAT_ORDER),
        seats=2,
        computers=[("easy", None)],
    )
    player = str((await node.seats.join(room_id, "Ann", None)).result.player)

    def start(cached: Cached) -> Change:
        return Change(*service.apply(room_id, cached.record, [game.Start(player)]))

    def leave(cached: Cached) -> Change:
        return Change(*service.apply(room_id, cached.record, [game.Leave(player)]))

    await service.transact(room_id, start)
    left = await service.transact(room_id, leave)  # the computer leaves too: the game ends
    assert left.record is not None
    assert left.record.game.phase == game.Phase.FINISHED
    assert await archiver_for(node, database).run_once() == 1
    body = await Archive(database).game(room_id)
    assert body is not None
    assert body["outcome"] == "abandoned"
    assert all(p["forfeited"] for p in body["players"])
    assert body["events"][-1]["type"] == "game_over"


async def test_an_archived_tournament_entry_keeps_its_seed_and_its_room_until_the_close(
    node: Node, database: Database
) -> None:
    closes_ms = node.clock() + 3 * RETENTION * 1000  # the tournament ends long after the game
    room_id, _ = await finished_room(node, tournament=("tCup", "ab" * 32, closes_ms))
    archiver = archiver_for(node, database)
    assert await archiver.run_once() == 1
    body = await Archive(database).game(game_id(room_id))
    assert body is not None
    assert body["server_seed"] is None  # the tournament reveals it at its end, not the game
    assert body["events"][-1]["server_seed"] is None
    # the room outlives the grace and the retention: until the end, then the retention
    keys = node.store.keys(room_id)
    for key in (keys.room, keys.log, keys.seats):
        assert await node.store.redis.ttl(key) > 3 * RETENTION
