"""A tournament's live leaderboard in Redis::

    <prefix>{t:<id>}:standings   zset   entry room id -> the entry's current total
    <prefix>{t:<id>}:names       hash   entry room id -> the entrant's display name

The commit that writes a score in an entry updates its total (one ``ZADD``, no database);
readers page through the sorted set, best first. It is a cache of the entries' rooms: the
tournament's close recomputes every total from the rooms and archives them in PostgreSQL.
"""

from __future__ import annotations

from typing import Any

from server.storage.redis_store import RedisStore

__all__ = ["Standings"]

KEEP_SECONDS = 14 * 86400
"""How long a leaderboard outlives its last update (the archive keeps the results)."""


class Standings:
    """The leaderboards of the tournaments (see the module docstring)."""

    def __init__(self, store: RedisStore) -> None:
        self.prefix = store.prefix
        self.redis: Any = store.redis

    def _keys(self, tournament_id: str) -> tuple[str, str]:
        base = f"{self.prefix}{{t:{tournament_id}}}"
        return f"{base}:standings", f"{base}:names"

    async def enter(self, tournament_id: str, room_id: str, name: str) -> None:
        """A new entry, at 0 points."""
        board, names = self._keys(tournament_id)
        pipe = self.redis.pipeline(transaction=True)
        pipe.zadd(board, {room_id: 0}, nx=True)
        pipe.hset(names, room_id, name)
        pipe.expire(board, KEEP_SECONDS)
        pipe.expire(names, KEEP_SECONDS)
        await pipe.execute()

    async def score(self, tournament_id: str, room_id: str, total: int) -> None:
        """The entry's total is now ``total``."""
        board, _ = self._keys(tournament_id)
        await self.redis.zadd(board, {room_id: total}, xx=True)

    async def top(self, tournament_id: str, limit: int) -> list[tuple[str, str, int]]:
        """The best ``limit`` entries: (room id, name, total), best first (ties: room id)."""
        board, names = self._keys(tournament_id)
        rows = await self.redis.zrevrange(board, 0, limit - 1, withscores=True)
        rooms = [r.decode() if isinstance(r, bytes) else str(r) for r, _ in rows]
        shown = await self.redis.hmget(names, rooms) if rooms else []
        return [
            (room, (n.decode() if isinstance(n, bytes) else str(n or "")), int(score))
            for room, n, (_, score) in zip(rooms, shown, rows, strict=True)
        ]

    async def count(self, tournament_id: str) -> int:
        board, _ = self._keys(tournament_id)
        return int(await self.redis.zcard(board))
