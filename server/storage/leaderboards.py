"""Leaderboards in Redis sorted sets, kept in step with PostgreSQL by the archiver::

    <prefix>{lb}:<board>:<family>:<period>        zset   identity id -> value
    <prefix>{lb}:<board>:<family>:<period>:prov   set    identities whose value is provisional
    <prefix>{lb}:names                            hash   identity id -> display name

``board`` is ``result`` (result rating), ``decision`` (decision rating) or ``best_score``;
``family`` ``yahtzee`` or ``yatzy``; ``period`` ``all``, ``d<YYYY-MM-DD>`` (a UTC day) or
``w<YYYY>-<WW>`` (an ISO week). A rating board holds each player's rating after their latest
game of the period; the score board their best score in a finished public game of the period.

The archiver puts a game's values after its archive transaction commits (:meth:`put`: the same
values again are harmless, so a retried archive may put them twice). What the archiver missed
(a process that died between the commit and the put, a Redis that lost its data) comes back
with :meth:`rebuild`, which recomputes every current board from PostgreSQL
(:meth:`server.storage.ratings.RatingsStore.board_rows`); every server rebuilds them at
start (``server.players.Players.rebuild_leaderboards``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from server.storage.ratings import BOARDS, FAMILIES, Board, BoardRow, RatingsStore
from server.storage.redis_store import RedisStore

__all__ = ["PERIODS", "Leaderboards", "Period", "Placed", "period_key", "period_start"]

Period = Literal["today", "week", "all"]
PERIODS: tuple[Period, ...] = ("today", "week", "all")

_TTLS: dict[Period, int] = {"today": 3 * 86_400, "week": 15 * 86_400}
"""How long a day's and a week's boards stay in Redis (a while after their period ends)."""


@dataclass(frozen=True, slots=True)
class Placed:
    """A leaderboard row: rank (1 = top), player, value."""

    rank: int
    identity_id: str
    name: str
    value: float
    provisional: bool


def period_start(period: Period, now: dt.datetime) -> dt.datetime | None:
    """When ``period`` began at ``now`` (UTC midnight, Monday's midnight; None: all time)."""
    midnight = now.astimezone(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "today":
        return midnight
    if period == "week":
        return midnight - dt.timedelta(days=midnight.weekday())
    return None


def period_key(period: Period, at: dt.datetime) -> str:
    """The key part of ``period`` containing ``at``."""
    at = at.astimezone(dt.UTC)
    if period == "today":
        return "d" + at.strftime("%Y-%m-%d")
    if period == "week":
        year, week, _ = at.isocalendar()
        return f"w{year}-{week:02d}"
    return "all"


class Leaderboards:
    """The sorted sets of every board (see the module docstring)."""

    def __init__(self, store: RedisStore) -> None:
        self.redis = store.redis
        self.base = f"{store.prefix}{{lb}}"

    def key(self, board: Board, family: str, part: str) -> str:
        return f"{self.base}:{board}:{family}:{part}"

    async def put(
        self, board: Board, family: str, finished: dt.datetime, rows: Sequence[BoardRow]
    ) -> None:
        """Put one game's values (of ``rows``) on every period board containing ``finished``:
        a rating replaces the player's value; a score replaces it only when higher."""
        if not rows:
            return
        pipe = self.redis.pipeline(transaction=True)
        pipe.hset(f"{self.base}:names", mapping={r.identity_id: r.name for r in rows})
        for period in PERIODS:
            key = self.key(board, family, period_key(period, finished))
            scores = {r.identity_id: r.value for r in rows}
            if board == "best_score":
                pipe.zadd(key, scores, gt=True)
            else:
                pipe.zadd(key, scores)
            for r in rows:
                if r.provisional:
                    pipe.sadd(key + ":prov", r.identity_id)
                else:
                    pipe.srem(key + ":prov", r.identity_id)
            ttl = _TTLS.get(period)
            if ttl is not None:
                pipe.expire(key, ttl)
                pipe.expire(key + ":prov", ttl)
        await pipe.execute()

    async def read(
        self,
        board: Board,
        family: str,
        period: Period,
        now: dt.datetime,
        *,
        limit: int,
        around: str | None = None,
    ) -> tuple[list[Placed], int]:
        """The top ``limit`` rows (``around``: the ``limit`` rows centred on that player, or
        the top when they are not on the board), and how many players the board has."""
        key = self.key(board, family, period_key(period, now))
        start = 0
        if around is not None:
            rank = await self.redis.zrevrank(key, around)
            if rank is not None:
                start = max(0, int(rank) - limit // 2)
        pipe = self.redis.pipeline(transaction=False)
        pipe.zrevrange(key, start, start + limit - 1, withscores=True)
        pipe.zcard(key)
        pipe.smembers(key + ":prov")
        found, size, provisional = await pipe.execute()
        ids = [_text(member) for member, _ in found]
        names = await self.redis.hmget(f"{self.base}:names", ids) if ids else []
        marked = {_text(m) for m in provisional}
        rows = [
            Placed(start + i + 1, ident, _text(name) if name else ident, float(score),
                   ident in marked)
            for i, ((_, score), ident, name) in enumerate(zip(found, ids, names, strict=True))
        ]  # fmt: skip
        return rows, int(size)

    async def rebuild(self, ratings: RatingsStore, now: dt.datetime) -> int:
        """Recompute the current boards (every board, family and period containing ``now``)
        from PostgreSQL; how many rows were written."""
        written = 0
        for board in BOARDS:
            for family in FAMILIES:
                for period in PERIODS:
                    rows = await ratings.board_rows(board, family, period_start(period, now))
                    key = self.key(board, family, period_key(period, now))
                    pipe = self.redis.pipeline(transaction=True)
                    pipe.delete(key, key + ":prov")
                    if rows:
                        pipe.hset(
                            f"{self.base}:names", mapping={r.identity_id: r.name for r in rows}
                        )
                        pipe.zadd(key, {r.identity_id: r.value for r in rows})
                        marked = [r.identity_id for r in rows if r.provisional]
                        if marked:
                            pipe.sadd(key + ":prov", *marked)
                        ttl = _TTLS.get(period)
                        if ttl is not None:  # a day's or a week's board goes after its period
                            pipe.expire(key, ttl)
                            pipe.expire(key + ":prov", ttl)
                    await pipe.execute()
                    written += len(rows)
        return written

    async def dump(
        self, board: Board, family: str, period: Period, now: dt.datetime
    ) -> dict[str, tuple[float, bool]]:
        """A whole board as ``{identity: (value, provisional)}`` (tests compare the live and
        the rebuilt boards with it)."""
        rows, _ = await self.read(board, family, period, now, limit=10**6)
        return {r.identity_id: (r.value, r.provisional) for r in rows}


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value
