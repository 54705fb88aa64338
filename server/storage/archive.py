"""The game archive in PostgreSQL: what a finished room becomes once it leaves Redis.

:func:`~server.storage.archived_game.archived_game` turns a finished room into an
``ArchivedGame``; :meth:`Archive.write` stores it in ONE transaction (the game, its
seats with their final cards and identities, the full event log), exactly once: the game's key
is (room id, game number) and a second write of the same game does nothing
(``ON CONFLICT DO NOTHING``). A write cut by a dying database leaves nothing (the transaction
is rolled back), so the archiver simply writes again.

The reading side (a game, a player's profile and games, the export) is here too.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import msgspec
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from server.storage.archived_game import (
    ArchivedGame,
    to_ms,
    to_utc,
)
from server.storage.postgres import Database
from server.storage.ratings import RatingsStore

__all__ = ["Archive"]


def _jsonable(value: Any) -> Any:
    """MessagePack-decoded values as JSON accepts them (bytes as hex)."""
    return json.loads(msgspec.json.encode(value, enc_hook=_enc_hook))


def _enc_hook(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).hex()
    raise NotImplementedError(type(value))


_INSERT_GAME = """
INSERT INTO games (id, room_id, game_no, outcome, public, room_name, options, seats,
                   turn_seconds, hints, created_at, finished_at, dice_commitment, server_seed,
                   player_seeds, final_state, event_count, rated)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
ON CONFLICT DO NOTHING
RETURNING id
"""

_INSERT_SEAT = """
INSERT INTO game_players (game_id, seat, player_id, name, computer, identity_id, place, total,
                          forfeited, scores, yahtzee_bonuses, upper_bonus, yahtzees, accuracy,
                          finished_at)
VALUES (%s, %s, %s, %s, %s,
        (SELECT id FROM identities WHERE id = %s), %s, %s, %s, %s, %s, %s, %s, %s, %s)
"""


class Archive:
    """Archived games on a :class:`Database`."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.ratings = RatingsStore(db)

    # -- writing ------------------------------------------------------------------------------

    async def write(self, item: ArchivedGame) -> bool:
        """Store the game, its seats and its log in one transaction; False when it was archived
        before (then nothing is written)."""
        finished = to_utc(item.finished_ms)
        async with self.db.connection() as conn, conn.transaction():
            cur = await conn.execute(
                _INSERT_GAME,
                (
                    item.id,
                    item.room_id,
                    item.game_no,
                    item.outcome,
                    item.public,
                    item.room_name,
                    Jsonb(item.options),
                    item.seats,
                    item.turn_seconds,
                    item.hints,
                    to_utc(item.created_ms),
                    finished,
                    item.dice_commitment,
                    item.server_seed,
                    Jsonb(item.player_seeds),
                    Jsonb(item.final_state),
                    len(item.events),
                    item.rated,
                ),
            )
            if await cur.fetchone() is None:
                return False
            async with conn.cursor() as seats:
                await seats.executemany(
                    _INSERT_SEAT,
                    [
                        (
                            item.id,
                            s.seat,
                            s.player_id,
                            s.name,
                            s.computer,
                            s.identity_id,
                            s.place,
                            s.total,
                            s.forfeited,
                            Jsonb(s.scores),
                            s.yahtzee_bonuses,
                            s.upper_bonus,
                            s.yahtzees,
                            s.accuracy,
                            finished,
                        )
                        for s in item.players
                    ],
                )
            await conn.execute(
                "INSERT INTO game_logs (game_id, events) VALUES (%s, %s)",
                (item.id, Jsonb(_jsonable(item.events))),
            )
            # the ratings move in this transaction: exactly once, with the archive row
            await self.ratings.record_game(conn, item)
        return True

    # -- reading ------------------------------------------------------------------------------

    async def game(self, gid: str, *, with_events: bool = True) -> dict[str, Any] | None:
        """One archived game as ``GET /games/{id}`` shows it (``None``: no such game). ``gid``
        is ``<room>.<n>`` or a room id (its latest game)."""
        async with self.db.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(
                "SELECT * FROM games WHERE id = %s OR room_id = %s ORDER BY game_no DESC LIMIT 1",
                (gid, gid),
            )
            row = await cur.fetchone()
            if row is None:
                return None
            await cur.execute(
                "SELECT gp.seat, player_id, name, gp.computer, gp.identity_id, place, total,"
                " forfeited, scores, yahtzee_bonuses, upper_bonus, yahtzees, gp.accuracy,"
                " s.decisions, s.total_loss, s.expected_start, s.luck,"
                " s.accuracy AS accuracy_percent, s.rating_before, s.rating_after"
                " FROM game_players gp LEFT JOIN game_skill s"
                " ON s.game_id = gp.game_id AND s.seat = gp.seat"
                " WHERE gp.game_id = %s ORDER BY gp.seat",
                (row["id"],),
            )
            players = await cur.fetchall()
            events: list[Any] | None = None
            if with_events:
                await cur.execute("SELECT events FROM game_logs WHERE game_id = %s", (row["id"],))
                log = await cur.fetchone()
                events = log["events"] if log else []
        return _game_body(row, players, events)

    async def players_of(self, gid: str) -> set[str]:
        """The identity ids that sat in a game (for private games' visibility)."""
        async with self.db.connection() as conn:
            cur = await conn.execute(
                "SELECT gp.identity_id FROM game_players gp JOIN games g ON g.id = gp.game_id"
                " WHERE (g.id = %s OR g.room_id = %s) AND gp.identity_id IS NOT NULL",
                (gid, gid),
            )
            return {str(r[0]) for r in await cur.fetchall()}  # type: ignore[index]

    async def is_public(self, gid: str) -> bool | None:
        async with self.db.connection() as conn:
            cur = await conn.execute(
                "SELECT public FROM games WHERE id = %s OR room_id = %s"
                " ORDER BY game_no DESC LIMIT 1",
                (gid, gid),
            )
            row = await cur.fetchone()
        return None if row is None else bool(row[0])  # type: ignore[index]

    async def rooms_archived(self, room_ids: list[str]) -> set[str]:
        """Which of these rooms have an archived game."""
        async with self.db.connection() as conn:
            cur = await conn.execute(
                "SELECT room_id FROM games WHERE room_id = ANY(%s)", (room_ids,)
            )
            return {str(r[0]) for r in await cur.fetchall()}  # type: ignore[index]

    async def count(self) -> int:
        async with self.db.connection() as conn:
            cur = await conn.execute("SELECT count(*) FROM games")
            row = await cur.fetchone()
        return int(row[0]) if row else 0  # type: ignore[index]

    async def profile(self, identity_id: str, viewer: str | None) -> dict[str, Any] | None:
        """A player's statistics over their archived games (``None``: no such player).
        Private games count only when ``viewer`` is that player."""
        async with self.db.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(
                "SELECT id, display_name, created_at, jwt_issuer IS NOT NULL AS linked"
                " FROM identities WHERE id = %s",
                (identity_id,),
            )
            who = await cur.fetchone()
            if who is None:
                return None
            await cur.execute(
                """
                SELECT count(*) AS games,
                       count(*) FILTER (WHERE gp.place = 1 AND NOT gp.forfeited
                                        AND g.outcome = 'finished') AS wins,
                       avg(gp.total)::float AS average_score,
                       max(gp.total) AS best_score,
                       coalesce(sum(gp.yahtzees), 0) AS yahtzees,
                       avg((gp.yahtzees > 0)::int)::float AS yahtzee_rate,
                       avg(gp.upper_bonus::int)::float AS upper_bonus_rate,
                       avg(gp.accuracy)::float AS accuracy
                  FROM game_players gp JOIN games g ON g.id = gp.game_id
                 WHERE gp.identity_id = %s AND (g.public OR %s)
                """,
                (identity_id, viewer == identity_id),
            )
            stats = await cur.fetchone()
        assert stats is not None
        return {
            "player": who["id"],
            "name": who["display_name"],
            "since_ms": to_ms(who["created_at"]),
            "linked": who["linked"],
            "games": stats["games"],
            "wins": stats["wins"],
            "average_score": _round(stats["average_score"]),
            "best_score": stats["best_score"],
            "yahtzees": stats["yahtzees"],
            "yahtzee_rate": _round(stats["yahtzee_rate"]),
            "upper_bonus_rate": _round(stats["upper_bonus_rate"]),
            "accuracy": _round(stats["accuracy"]),
            "ratings": await self.ratings.profile(identity_id),
        }

    async def games_of(
        self, identity_id: str, viewer: str | None, limit: int, before: str | None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """One page of a player's games, newest first; and the cursor of the next page."""
        after_clause, args = "", [identity_id, viewer == identity_id]
        if before:
            try:
                at_ms, _, last_id = before.partition("_")
                cursor_time = to_utc(int(at_ms))
            except ValueError:
                raise ValueError("before must be a cursor from next_before") from None
            after_clause = " AND (gp.finished_at, gp.game_id) < (%s, %s)"
            args += [cursor_time, last_id]
        async with self.db.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(
                "SELECT g.id, g.room_id, g.outcome, g.public, g.options, g.finished_at,"
                " gp.seat, gp.place, gp.total, gp.forfeited, gp.accuracy,"
                " (SELECT count(*) FROM game_players o WHERE o.game_id = g.id) AS players"
                " FROM game_players gp JOIN games g ON g.id = gp.game_id"
                " WHERE gp.identity_id = %s AND (g.public OR %s)"
                f"{after_clause}"
                " ORDER BY gp.finished_at DESC, gp.game_id DESC LIMIT %s",
                (*args, limit + 1),
            )
            rows = await cur.fetchall()
        more = len(rows) > limit
        rows = rows[:limit]
        page = [
            {
                "game": r["id"],
                "room": r["room_id"],
                "outcome": r["outcome"],
                "public": r["public"],
                "options": r["options"],
                "finished_ms": to_ms(r["finished_at"]),
                "players": r["players"],
                "seat": r["seat"],
                "place": r["place"],
                "total": r["total"],
                "forfeited": r["forfeited"],
                "accuracy": _round(r["accuracy"]),
            }
            for r in rows
        ]
        cursor = f"{page[-1]['finished_ms']}_{page[-1]['game']}" if more and page else None
        return page, cursor

    async def export(self, since_ms: int, batch: int = 200) -> AsyncIterator[dict[str, Any]]:
        """Every public game finished at or after ``since_ms``, oldest first, with its players
        and log (``GET /games/export``), read in batches."""
        last: tuple[dt.datetime, str] = (to_utc(since_ms), "")
        while True:
            async with self.db.connection() as conn:
                cur = await conn.execute(
                    "SELECT id FROM games WHERE public AND (finished_at, id) > (%s, %s)"
                    " AND finished_at >= %s ORDER BY finished_at, id LIMIT %s",
                    (last[0], last[1], to_utc(since_ms), batch),
                )
                ids = [str(r[0]) for r in await cur.fetchall()]  # type: ignore[index]
            if not ids:
                return
            for gid in ids:
                body = await self.game(gid)
                if body is not None:
                    yield body
                    last = (to_utc(body["finished_ms"]), gid)
            if len(ids) < batch:
                return


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def _game_body(
    row: Mapping[str, Any], players: Sequence[Mapping[str, Any]], events: list[Any] | None
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "game": row["id"],
        "room": row["room_id"],
        "game_no": row["game_no"],
        "outcome": row["outcome"],
        "public": row["public"],
        "name": row["room_name"],
        "options": row["options"],
        "seats": row["seats"],
        "turn_seconds": row["turn_seconds"],
        "hints": row["hints"],
        "rated": row["rated"],
        "created_ms": to_ms(row["created_at"]),
        "finished_ms": to_ms(row["finished_at"]),
        "dice_commitment": row["dice_commitment"],
        "server_seed": row["server_seed"],
        "player_seeds": row["player_seeds"],
        "players": [
            {
                "seat": p["seat"],
                "player": p["player_id"],
                "name": p["name"],
                "computer": p["computer"],
                "identity": p["identity_id"],
                "place": p["place"],
                "total": p["total"],
                "forfeited": p["forfeited"],
                "scores": p["scores"],
                "yahtzee_bonuses": p["yahtzee_bonuses"],
                "upper_bonus": p["upper_bonus"],
                "yahtzees": p["yahtzees"],
                "accuracy": _round(p["accuracy"]),
                "skill": _skill(p),
            }
            for p in players
        ],
        "event_count": row["event_count"],
    }
    if events is not None:
        body["events"] = events
    return body


def _skill(seat: Mapping[str, Any]) -> dict[str, Any] | None:
    """A seat's skill and luck (README "Ratings"), and its result rating before and after a
    rated game; None when the seat was not analysed."""
    if seat.get("total_loss") is None and seat.get("rating_after") is None:
        return None
    return {
        "decisions": seat["decisions"],
        "expected_start": _round(seat["expected_start"]),
        "total_loss": _round(seat["total_loss"]),
        "luck": _round(seat["luck"]),
        "accuracy": _round(seat["accuracy_percent"]),
        "rating_before": None if seat["rating_before"] is None else round(seat["rating_before"]),
        "rating_after": None if seat["rating_after"] is None else round(seat["rating_after"]),
    }
