"""How much a finished game costs: bytes of Redis while it waits for the archive (and for its
retention), and bytes of PostgreSQL once archived (games per GiB).

    python -m server.footprint [--games 200] [--players 2]

It plays ``--games`` games of ``--players`` people in-process with the service's fair dice (each
turn: a roll, a second roll keeping the most frequent face, a third, the best box; every
command with an idempotency key, as a WebSocket command has), on the embedded Redis and
PostgreSQL (or ``REDIS_URL`` / ``DATABASE_URL``), then archives them and measures.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import secrets
from typing import Any

import redis.asyncio as aioredis

from server import game
from server.ops.embedded_postgres import EmbeddedPostgres
from server.ops.embedded_redis import EmbeddedRedis
from server.service.archiver import Archiver
from server.service.outcomes import Cached, Change
from server.service.rooms import GameService
from server.service.seats import Seats
from server.settings import Settings
from server.storage.archive import Archive
from server.storage.pending import PendingArchive
from server.storage.postgres import Database
from server.storage.redis_store import RedisStore

__all__ = ["main"]


async def _play(service: GameService, seats: Seats, players: int) -> str:
    room_id, _ = await service.create_room(
        options=game.RuleOptions(first_player=game.FirstPlayer.SEAT_ORDER), seats=players
    )
    ids = []
    for n in range(players):
        joined = await seats.join(room_id, f"Player {n}", None, cache_key=secrets.token_hex(8))
        assert joined.result is not None
        ids.append(str(joined.result.player))

    def start(cached: Cached) -> Change:
        return Change(*service.apply(room_id, cached.record, [game.Start(ids[0])]))

    await service.transact(room_id, start, secrets.token_hex(8))

    def command(make: Any) -> Any:
        def step(cached: Cached) -> Change | None:
            state = cached.record.game
            player = game.current_player(state)
            if player is None:
                return None
            return Change(*service.apply(room_id, cached.record, [make(state, player)]))

        return step

    def roll(state: game.GameState, player: str) -> game.Command:
        if not state.dice:
            return game.Roll(player, ())
        face, _ = collections.Counter(state.dice).most_common(1)[0]
        keep = frozenset(i for i, d in enumerate(state.dice) if d == face)
        return game.Roll(player, (), keep if len(keep) < 5 else None)

    def score(state: game.GameState, player: str) -> game.Command:
        return game.Score(player, game.best_auto_score(state))

    while True:
        outcome = await service.view(room_id)
        state = outcome.record.game
        if state.phase == game.Phase.FINISHED:
            return room_id
        player = game.current_player(state)
        assert player is not None
        for _ in range(3):
            current = (await service.view(room_id)).record.game
            if len(set(current.dice)) == 1 and current.dice:
                break
            await service.transact(room_id, command(roll), secrets.token_hex(8))
        await service.transact(room_id, command(score), secrets.token_hex(8))


async def measure(redis_url: str, database_url: str, games: int, players: int) -> dict[str, Any]:
    prefix = f"fp{secrets.token_hex(3)}:"
    client = aioredis.Redis.from_url(redis_url)
    store = RedisStore(client, prefix)
    service = GameService(store, Settings(redis_url=redis_url, redis_prefix=prefix))
    pending = PendingArchive(store)
    service.endings.connect(pending.add)
    seats = Seats(service)
    rooms = [await _play(service, seats, players) for _ in range(games)]
    per_room = []
    per_kind: collections.Counter[str] = collections.Counter()
    events = 0
    for room_id in rooms:
        keys = store.keys(room_id)
        total = 0
        for key in (*keys.transition(), keys.spectators):
            used = int(await client.memory_usage(key) or 0)
            per_kind[key.rsplit(":", 1)[-1]] += used
            total += used
        per_room.append(total)
        events += len(await store.read_events(room_id, 0))
    db = Database(database_url)
    await db.open()
    try:
        await db.ensure_schema()
        archiver = Archiver(store, Archive(db), pending, retention_seconds=3600)
        while await pending.count():
            await archiver.run_once()
        async with db.connection() as conn:
            await conn.execute("VACUUM ANALYZE games, game_players, game_logs")
            cur = await conn.execute(
                "SELECT sum(pg_total_relation_size(c)) FROM unnest(ARRAY["
                "'games'::regclass, 'game_players'::regclass, 'game_logs'::regclass]) AS c"
            )
            row = await cur.fetchone()
            cur = await conn.execute("SELECT count(*) FROM games")
            archived = await cur.fetchone()
    finally:
        await db.close()
        keys_left = [k async for k in client.scan_iter(match=f"{prefix}*")]
        if keys_left:
            await client.delete(*keys_left)
        await client.aclose()
    assert row is not None
    assert archived is not None
    pg_bytes = int(row[0])  # type: ignore[index]
    per_game_pg = pg_bytes / int(archived[0])  # type: ignore[index]
    return {
        "games": games,
        "players": players,
        "events_per_game": events / games,
        "redis_bytes_per_finished_game": sum(per_room) / len(per_room),
        **{f"redis_bytes_{kind}": n / games for kind, n in per_kind.items()},
        "postgres_bytes_per_game": per_game_pg,
        "games_per_gib": int(2**30 / per_game_pg),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--players", type=int, default=2)
    args = parser.parse_args()
    redis_server = EmbeddedRedis() if not os.environ.get("REDIS_URL") else None
    pg_server = EmbeddedPostgres() if not os.environ.get("DATABASE_URL") else None
    try:
        redis_url = redis_server.start() if redis_server else os.environ["REDIS_URL"]
        database_url = pg_server.start() if pg_server else os.environ["DATABASE_URL"]
        result = asyncio.run(measure(redis_url, database_url, args.games, args.players))
    finally:
        if redis_server is not None:
            redis_server.stop()
        if pg_server is not None:
            pg_server.stop()
    for key, value in result.items():
        print(f"{key}: {round(value, 1) if isinstance(value, float) else value}")


if __name__ == "__main__":
    main()
