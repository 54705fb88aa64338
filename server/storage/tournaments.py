"""Tournaments and their entries in PostgreSQL (migration ``0003_tournaments.sql``).

A tournament's row holds its secret seed; nothing here decides who may see it (the service
serves it only after the end time). Entering is one transaction that locks the tournament's
row, so the entry limit and the attempts per identity hold under racing requests; the primary
key (tournament, identity, attempt) backs the latter. The daily tournament is keyed by its day
(``daily_of`` UNIQUE): two processes creating it at once make one row.

Nothing here is on a play command's path: entering and reading are HTTP requests.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import psycopg.errors
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from server.storage.postgres import Database

__all__ = [
    "EntryRefusedError",
    "EntryResult",
    "EntryRow",
    "TournamentRepository",
    "TournamentRow",
]


@dataclass(frozen=True, slots=True)
class TournamentRow:
    """One tournament as stored (``seed`` is secret until ``ends_at``)."""

    id: str
    name: str
    options: Mapping[str, Any]
    starts_at: dt.datetime
    ends_at: dt.datetime
    entry_limit: int | None
    public: bool
    invite_hash: str | None
    attempts: int
    rated: bool
    seed: str
    commitment: str
    created_by: str | None
    daily_of: dt.date | None
    #: seconds before anyone may watch an entry's events while open (None: after the end only)
    watch_delay_seconds: int | None = None
    closed_at: dt.datetime | None = None
    optimal_score: int | None = None
    entries: int = 0


@dataclass(frozen=True, slots=True)
class EntryRow:
    """One entry (the results are ``None`` until the close)."""

    tournament_id: str
    identity_id: str
    attempt: int
    room_id: str
    invite: str
    player_id: str
    name: str
    score: int | None = None
    finished: bool | None = None
    accuracy: float | None = None
    place: int | None = None


@dataclass(frozen=True, slots=True)
class EntryResult:
    """The results of one entry written at the close."""

    room_id: str
    score: int
    finished: bool
    accuracy: float | None
    place: int


class EntryRefusedError(Exception):
    """The entry was not recorded: ``reason`` is ``already_entered`` or ``tournament_full``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


_COLUMNS = (
    "id, name, options, starts_at, ends_at, entry_limit, public, invite_hash, attempts, rated,"
    " seed, commitment, created_by, daily_of, watch_delay_seconds, closed_at, optimal_score"
)
_WITH_COUNT = (
    f"SELECT {', '.join('t.' + c.strip() for c in _COLUMNS.split(','))},"
    " (SELECT count(*) FROM tournament_entries e WHERE e.tournament_id = t.id) AS entries"
    " FROM tournaments t"
)


def _tournament(row: Mapping[str, Any]) -> TournamentRow:
    return TournamentRow(**{k: row[k] for k in TournamentRow.__slots__ if k in row})


class TournamentRepository:
    """The tournaments' tables (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, t: TournamentRow) -> TournamentRow:
        """Store a new tournament; for a daily one whose day exists already, the existing one
        (``ON CONFLICT (daily_of) DO NOTHING``: one per day whoever creates it)."""
        async with self.db.connection() as conn:
            cur = await conn.execute(
                f"INSERT INTO tournaments ({_COLUMNS}) VALUES"
                " (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, NULL, NULL)"
                " ON CONFLICT (daily_of) DO NOTHING RETURNING id",
                (
                    t.id, t.name, Jsonb(dict(t.options)), t.starts_at, t.ends_at, t.entry_limit,
                    t.public, t.invite_hash, t.attempts, t.rated, t.seed, t.commitment,
                    t.created_by, t.daily_of, t.watch_delay_seconds,
                ),
            )  # fmt: skip
            made = await cur.fetchone()
        if made is None and t.daily_of is not None:
            existing = await self.daily(t.daily_of)
            assert existing is not None
            return existing
        return t

    async def get(self, tournament_id: str) -> TournamentRow | None:
        async with self.db.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(f"{_WITH_COUNT} WHERE t.id = %s", (tournament_id,))
            row = await cur.fetchone()
        return None if row is None else _tournament(row)

    async def daily(self, day: dt.date) -> TournamentRow | None:
        async with self.db.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(f"{_WITH_COUNT} WHERE t.daily_of = %s", (day,))
            row = await cur.fetchone()
        return None if row is None else _tournament(row)

    async def listing(self, since: dt.datetime, limit: int) -> list[TournamentRow]:
        """Tournaments that end at or after ``since``, soonest end first."""
        async with self.db.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(
                f"{_WITH_COUNT} WHERE t.ends_at >= %s ORDER BY t.ends_at, t.id LIMIT %s",
                (since, limit),
            )
            rows = await cur.fetchall()
        return [_tournament(r) for r in rows]

    async def due_for_close(self, now: dt.datetime, limit: int = 20) -> list[TournamentRow]:
        """Tournaments past their end whose results are not archived yet."""
        async with self.db.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(
                f"{_WITH_COUNT} WHERE t.closed_at IS NULL AND t.ends_at <= %s"
                " ORDER BY t.ends_at LIMIT %s",
                (now, limit),
            )
            rows = await cur.fetchall()
        return [_tournament(r) for r in rows]

    async def attempts_of(self, tournament_id: str, identity_id: str) -> int:
        async with self.db.connection() as conn:
            cur = await conn.execute(
                "SELECT count(*) FROM tournament_entries WHERE tournament_id = %s"
                " AND identity_id = %s",
                (tournament_id, identity_id),
            )
            row = await cur.fetchone()
        return int(row[0]) if row else 0  # type: ignore[index]

    async def add_entry(self, t: TournamentRow, entry: EntryRow) -> EntryRow:
        """Record an entry in one transaction under the tournament's row lock: refused with
        :class:`EntryRefusedError` once the identity used its attempts or the limit is met."""
        try:
            async with self.db.connection() as conn, conn.transaction():
                await conn.execute("SELECT 1 FROM tournaments WHERE id = %s FOR UPDATE", (t.id,))
                cur = await conn.execute(
                    "SELECT count(*), count(*) FILTER (WHERE identity_id = %s)"
                    " FROM tournament_entries WHERE tournament_id = %s",
                    (entry.identity_id, t.id),
                )
                row = await cur.fetchone()
                total, mine = (int(row[0]), int(row[1])) if row else (0, 0)  # type: ignore[index]
                if mine >= t.attempts:
                    raise EntryRefusedError("already_entered")
                if t.entry_limit is not None and total >= t.entry_limit:
                    raise EntryRefusedError("tournament_full")
                await conn.execute(
                    "INSERT INTO tournament_entries (tournament_id, identity_id, attempt, room_id,"
                    " invite, player_id, name) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    (
                        t.id, entry.identity_id, mine + 1, entry.room_id, entry.invite,
                        entry.player_id, entry.name,
                    ),
                )  # fmt: skip
        except psycopg.errors.UniqueViolation:
            raise EntryRefusedError("already_entered") from None
        return EntryRow(
            t.id, entry.identity_id, mine + 1, entry.room_id, entry.invite, entry.player_id,
            entry.name,
        )  # fmt: skip

    async def is_entry(self, tournament_id: str, room_id: str) -> bool:
        """Whether ``room_id`` is the room of an entry of the tournament."""
        async with self.db.connection() as conn:
            cur = await conn.execute(
                "SELECT 1 FROM tournament_entries WHERE tournament_id = %s AND room_id = %s",
                (tournament_id, room_id),
            )
            return await cur.fetchone() is not None

    async def entries(self, tournament_id: str) -> list[EntryRow]:
        async with self.db.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(
                "SELECT tournament_id, identity_id, attempt, room_id, invite, player_id, name,"
                " score, finished, accuracy, place FROM tournament_entries"
                " WHERE tournament_id = %s ORDER BY place NULLS LAST, entered_at",
                (tournament_id,),
            )
            rows = await cur.fetchall()
        return [EntryRow(**r) for r in rows]

    async def close(
        self, tournament_id: str, optimal_score: int | None, results: Sequence[EntryResult]
    ) -> bool:
        """Write the results and mark the tournament closed, once (False: closed already)."""
        async with self.db.connection() as conn, conn.transaction():
            cur = await conn.execute(
                "UPDATE tournaments SET closed_at = now(), optimal_score = %s"
                " WHERE id = %s AND closed_at IS NULL RETURNING id",
                (optimal_score, tournament_id),
            )
            if await cur.fetchone() is None:
                return False
            for r in results:
                await conn.execute(
                    "UPDATE tournament_entries SET score = %s, finished = %s, accuracy = %s,"
                    " place = %s WHERE tournament_id = %s AND room_id = %s",
                    (r.score, r.finished, r.accuracy, r.place, tournament_id, r.room_id),
                )
        return True
