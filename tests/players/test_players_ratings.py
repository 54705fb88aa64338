"""Ratings on the real Redis and a real PostgreSQL, without sockets: a rated game moves the
result ratings once, in the archive's transaction, even when the archiver retries; the room is
told once (`ratings`); casual games move only the decision ratings; rated rooms refuse
computers and people without an identity; the leaderboards follow, and their rebuild from
PostgreSQL equals what the archiver put."""

from __future__ import annotations

import asyncio
import datetime as dt
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass

import msgspec
import pytest
from procs import async_client

from server import game
from server.domain.rating import INITIAL_MU, INITIAL_SIGMA
from server.ops.database_settings import ArchiveSettings
from server.service.archiver import Archiver, ratings_teller, review_game
from server.service.identities import Identities
from server.service.outcomes import Cached, Change, ServiceError
from server.service.quickplay import ArchiveRatings
from server.service.rooms import GameService
from server.service.seats import Seats
from server.settings import Settings
from server.solver import Table
from server.storage.archive import Archive
from server.storage.archived_game import game_id, to_utc
from server.storage.leaderboards import PERIODS, Leaderboards
from server.storage.pending import PendingArchive
from server.storage.postgres import Database
from server.storage.ratings import BOARDS, RatingsStore
from server.storage.redis_store import RedisStore

RETENTION = 600


class Clock:
    def __init__(self) -> None:
        self.now = int(dt.datetime.now(dt.UTC).timestamp() * 1000)

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
async def node(redis_url: str, redis_prefix: str) -> AsyncIterator[Node]:
    client = async_client(redis_url, "redis")
    settings = Settings(redis_url=redis_url, redis_prefix=redis_prefix, retention_seconds=RETENTION)
    store = RedisStore(client, redis_prefix)
    clock = Clock()
    rng = random.Random(7)
    service = GameService(
        store, settings, clock=clock, dice=lambda n: tuple(rng.randint(1, 6) for _ in range(n))
    )
    pending = PendingArchive(store)
    service.endings.connect(pending.add)
    try:
        yield Node(store, service, Seats(service), pending, clock)
    finally:
        await client.aclose()


async def finished_room(node: Node, identities: list[str | None], *, rated: bool) -> str:
    """A room of one seat per identity played to its end (each turn: one roll, best box)."""
    service = node.service
    room_id, _ = await service.create_room(
        options=game.RuleOptions(first_player=game.FirstPlayer.SEAT_ORDER),
        seats=len(identities),
        rated=rated,
    )
    players = []
    for n, identity in enumerate(identities):
        joined = await node.seats.join(room_id, f"P{n}", None, identity=identity)
        players.append(str(joined.result.player))  # type: ignore[union-attr]

    def start(cached: Cached) -> Change:
        return Change(*service.apply(room_id, cached.record, [game.Start(players[0])]))

    await service.transact(room_id, start)

    def turn(cached: Cached) -> Change | None:
        state = cached.record.game
        if state.phase == game.Phase.FINISHED:
            return None
        player = game.current_player(state)
        assert player is not None
        record, events = service.apply(room_id, cached.record, [game.Roll(player, ())])
        best = game.best_auto_score(record.game)
        record, more = service.apply(room_id, record, [game.Score(player, best)])
        return Change(record, events + more)

    while True:
        outcome = await service.transact(room_id, turn)
        assert outcome.record is not None
        if outcome.record.game.phase == game.Phase.FINISHED:
            return room_id


def archiver_for(node: Node, db: Database, table: Table) -> Archiver:
    async def analyse(record: object, log: list[bytes]) -> object:
        return await asyncio.to_thread(review_game, table, record, log)  # type: ignore[arg-type]

    return Archiver(
        node.store,
        Archive(db),
        node.pending,
        retention_seconds=RETENTION,
        lease_ms=10_000,
        clock=node.clock,
        analyse=analyse,  # type: ignore[arg-type]
        leaderboards=Leaderboards(node.store),
        announce=ratings_teller(node.service),
    )


async def ratings_events(node: Node, room_id: str) -> list[dict[str, object]]:
    entries = await node.store.read_events(room_id, 0)
    decoded = [msgspec.msgpack.decode(data) for _, data in entries]
    return [e for e in decoded if e.get("type") == "ratings"]


async def guests(db: Database, *names: str) -> list[str]:
    identities = Identities(db, ArchiveSettings())
    return [(await identities.create_guest(name))[0].id for name in names]


async def rating_rows(db: Database) -> dict[str, tuple[float, float, int]]:
    async with db.connection() as conn:
        cur = await conn.execute("SELECT identity_id, mu, sigma, games FROM ratings")
        return {str(r[0]): (r[1], r[2], r[3]) for r in await cur.fetchall()}  # type: ignore[index]


async def test_a_rated_game_moves_ratings_once_and_tells_the_room_once(
    node: Node, database: Database, official_table: Table
) -> None:
    ann, bob = await guests(database, "Ann", "Bob")
    room_id = await finished_room(node, [ann, bob], rated=True)
    archiver = archiver_for(node, database, official_table)
    told = archiver.announce
    assert told is not None
    crashes = 0

    async def crash_once(room: str, event: object) -> None:
        """The process dies after the archive commit, before the room is told."""
        nonlocal crashes
        if crashes == 0:
            crashes += 1
            raise RuntimeError("killed between the commit and the announcement")
        await told(room, event)  # type: ignore[arg-type]

    archiver.announce = crash_once
    await archiver.run_once()  # the room's pass fails after the commit: the room stays due
    assert await Archive(database).count() == 1
    assert await ratings_events(node, room_id) == []  # cut before the announcement
    after_first = await rating_rows(database)

    node.clock.now += 20_000  # the claim's lease ran out: the next pass tries the room again
    assert await archiver.run_once() == 0  # archived before: nothing written twice
    assert await rating_rows(database) == after_first
    [event] = await ratings_events(node, room_id)

    node.clock.now += 20_000
    await node.pending.add(room_id, node.clock())  # yet another retry (a sweep, a restart)
    assert await archiver.run_once() == 0
    assert await rating_rows(database) == after_first
    assert len(await ratings_events(node, room_id)) == 1

    assert {i: g for i, (_, _, g) in after_first.items()} == {ann: 1, bob: 1}
    lines = {line["identity"]: line for line in event["players"]}  # type: ignore[attr-defined]
    assert event["family"] == "yahtzee"
    assert {line["before"] for line in lines.values()} == {round(INITIAL_MU)}
    assert all(line["provisional"] for line in lines.values())
    game_body = await Archive(database).game(game_id(room_id))
    assert game_body is not None
    totals = {p["identity"]: p["total"] for p in game_body["players"]}
    winner, loser = sorted((ann, bob), key=lambda i: -totals[i])
    if totals[winner] > totals[loser]:
        assert lines[winner]["after"] > round(INITIAL_MU) > lines[loser]["after"]
    for identity, (mu, sigma, _) in after_first.items():
        assert round(mu) == lines[identity]["after"]
        assert sigma < INITIAL_SIGMA
    # quick play matches by this rating (None: a player never rated, a wider window)
    quick = ArchiveRatings()
    assert await quick.rating_of(ann, "yahtzee") is None  # unrated until the archive connects
    quick.connect(RatingsStore(database))
    assert await quick.rating_of(ann, "yahtzee") == pytest.approx(after_first[ann][0])
    assert await quick.rating_of(ann, "yatzy") is None
    for seat in game_body["players"]:  # luck = final - V0 + loss, exactly
        skill = seat["skill"]
        assert skill["expected_start"] == round(official_table.expected, 4)
        assert skill["luck"] == pytest.approx(
            seat["total"] - official_table.expected + skill["total_loss"], abs=1e-3
        )
        assert skill["accuracy"] == pytest.approx(
            max(0.0, 100 * (1 - skill["total_loss"] / official_table.expected)), abs=1e-3
        )
        assert lines[seat["identity"]]["luck"] == pytest.approx(skill["luck"], abs=0.06)
        assert (skill["rating_before"], skill["rating_after"]) == (
            lines[seat["identity"]]["before"],
            lines[seat["identity"]]["after"],
        )


async def test_a_casual_game_moves_no_result_rating(
    node: Node, database: Database, official_table: Table
) -> None:
    ann, bob = await guests(database, "Ann", "Bob")
    room_id = await finished_room(node, [ann, bob], rated=False)
    archiver = archiver_for(node, database, official_table)
    assert await archiver.run_once() == 1
    assert await rating_rows(database) == {}
    assert await ratings_events(node, room_id) == []
    store = RatingsStore(database)
    assert (await store.rating_of(ann, "yahtzee")).games == 0
    decision = await store.decision_of(ann, "yahtzee")
    assert decision.games == 1  # every analysed game counts for the decision rating
    assert decision.value is not None
    assert decision.provisional


async def test_rated_rooms_refuse_computers_and_people_without_identity(
    node: Node, database: Database
) -> None:
    with pytest.raises(ServiceError) as refused:
        await node.service.create_room(
            options=game.RuleOptions(), seats=2, rated=True, computers=[("easy", None)]
        )
    assert refused.value.code == "rated_no_computers"
    room_id, _ = await node.service.create_room(options=game.RuleOptions(), seats=2, rated=True)
    with pytest.raises(ServiceError) as anonymous:
        await node.seats.join(room_id, "Cy", None, identity=None)
    assert anonymous.value.code == "identity_required"
    cached = await node.service.view(room_id)
    with pytest.raises(ServiceError) as computer:
        node.service.seat_computer(room_id, cached.record, "easy", None)
    assert computer.value.code == "rated_no_computers"


async def test_leaderboards_top_around_and_rebuild(
    node: Node, database: Database, official_table: Table
) -> None:
    players = await guests(database, "Ann", "Bob", "Cy", "Dee")
    archiver = archiver_for(node, database, official_table)
    for pair in ((0, 1), (2, 3), (0, 2), (1, 3)):
        await finished_room(node, [players[pair[0]], players[pair[1]]], rated=True)
        assert await archiver.run_once() == 1
        node.clock.now += 1000  # games end one after the other (the boards keep the latest)
    boards = Leaderboards(node.store)
    now = to_utc(node.clock())
    top, size = await boards.read("result", "yahtzee", "all", now, limit=2)
    assert size == 4
    assert [r.rank for r in top] == [1, 2]
    assert top[0].value >= top[1].value
    everyone, _ = await boards.read("result", "yahtzee", "all", now, limit=10)
    last = everyone[-1]
    around, _ = await boards.read("result", "yahtzee", "all", now, limit=2, around=last.identity_id)
    assert [r.identity_id for r in around] == [r.identity_id for r in everyone[2:4]]
    assert around[-1].rank == 4
    assert {r.name for r in everyone} == {"Ann", "Bob", "Cy", "Dee"}
    assert all(r.provisional for r in everyone)  # two games each: still provisional

    live = {(b, p): await boards.dump(b, "yahtzee", p, now) for b in BOARDS for p in PERIODS}
    assert all(live[(b, "all")] for b in BOARDS)
    await node.store.redis.delete(*[k async for k in node.store.redis.scan_iter(f"{boards.base}*")])
    assert await boards.dump("result", "yahtzee", "all", now) == {}
    await boards.rebuild(RatingsStore(database), now)
    rebuilt = {(b, p): await boards.dump(b, "yahtzee", p, now) for b in BOARDS for p in PERIODS}
    assert rebuilt == live
