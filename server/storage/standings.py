"""A tournament's live leaderboard in Redis::

    <prefix>{t:<id>}:standings   zset   entry room id -> the entry's current total
    <prefix>{t:<id>}:names       hash   entry room id -> the entrant's display name
    <prefix>{t:<id>}:commits:<room>  zset   last seq of a commit -> when it was committed (ms)

Every commit of an entry updates its total and records when its events were committed (one
transaction, no database); readers page through the sorted set, best first. The totals are a
cache of the entries' rooms: the tournament's close recomputes them from the rooms and archives
them in PostgreSQL. The commit times say which of an entry's events are old enough to watch
(SPEC.md 13.23); a commit whose time was not recorded hides its events until a later recorded
commit covers them, so a lost write shows less, never more.
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

    def _commits(self, tournament_id: str, room_id: str) -> str:
        return f"{self.prefix}{{t:{tournament_id}}}:commits:{room_id}"

    async def committed(
        self, tournament_id: str, room_id: str, total: int, last_seq: int, at_ms: int
    ) -> None:
        """The entry committed events up to ``last_seq`` at ``at_ms``; its total is ``total``."""
        board, _ = self._keys(tournament_id)
        commits = self._commits(tournament_id, room_id)
        pipe = self.redis.pipeline(transaction=True)
        pipe.zadd(board, {room_id: total}, xx=True)
        pipe.zadd(commits, {str(last_seq): at_ms})
        pipe.expire(commits, KEEP_SECONDS)
        await pipe.execute()

    async def committed_by(self, tournament_id: str, room_id: str, at_ms: int) -> int:
        """The last seq of the entry's latest commit recorded at or before ``at_ms`` (0: none):
        every event up to it was committed by then."""
        commits = self._commits(tournament_id, room_id)
        found = await self.redis.zrevrangebyscore(commits, at_ms, "-inf", start=0, num=1)
        return int(found[0]) if found else 0

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
