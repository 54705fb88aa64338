"""Ratings in PostgreSQL: result ratings, decision ratings and each game's skill and luck.

:meth:`RatingsStore.record_game` runs INSIDE the archive's transaction of a new game
(:meth:`server.storage.archive.Archive.write`): the game's ratings move exactly when its archive
row is written, so exactly once, and a write cut short leaves neither. The arithmetic is
:mod:`server.domain.rating`'s.

Other parts read a player's rating with :meth:`RatingsStore.rating_of` (quick play matches on
it): the result rating of one rule family, the starting rating for a player never rated.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.rows import dict_row

from server.domain.rating import (
    DECISION_PROVISIONAL_GAMES,
    PROVISIONAL_SIGMA,
    DecisionRating,
    ResultRating,
    display,
    rate_results,
)
from server.storage.archived_game import ArchivedGame, ArchivedSeat, to_utc
from server.storage.postgres import Database
from server.storage.ratings_queries import (
    BOARD_QUERIES,
    BOARDS,
    GAME_BOARD_QUERY,
    INSERT_SKILL,
    Board,
)

__all__ = ["BOARDS", "FAMILIES", "Board", "BoardRow", "GameRating", "RatingsStore"]

FAMILIES = ("yahtzee", "yatzy")


@dataclass(frozen=True, slots=True)
class GameRating:
    """One seat's row of a game's ratings (what the ``ratings`` event tells)."""

    seat: int
    player_id: str
    identity_id: str
    name: str
    before: int | None
    after: int | None
    provisional: bool
    accuracy: float | None
    luck: float | None
    decision_rating: int | None
    decision_provisional: bool
    final: int


@dataclass(frozen=True, slots=True)
class BoardRow:
    """A player's value on a leaderboard."""

    identity_id: str
    name: str
    value: float
    provisional: bool


class RatingsStore:
    """Ratings on a :class:`Database` (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- reading one player ---------------------------------------------------------------------

    async def rating_of(self, identity_id: str, family: str) -> ResultRating:
        """``identity_id``'s result rating in ``family`` (``yahtzee`` or ``yatzy``): ``mu``,
        ``sigma`` and rated ``games``; a player never rated has the starting rating
        (``ResultRating()``: 1500 +- 500, provisional). Database faults raise
        ``DATABASE_ERRORS`` (callers answer ``unavailable``)."""
        async with self.db.connection() as conn:
            cur = await conn.execute(
                "SELECT mu, sigma, games FROM ratings WHERE identity_id = %s AND family = %s",
                (identity_id, family),
            )
            row = await cur.fetchone()
        if row is None:
            return ResultRating()
        return ResultRating(float(row[0]), float(row[1]), int(row[2]))  # type: ignore[index]

    async def decision_of(self, identity_id: str, family: str) -> DecisionRating:
        """``identity_id``'s decision rating in ``family`` (no games: ``value`` None)."""
        async with self.db.connection() as conn:
            cur = await conn.execute(
                "SELECT weighted_sum, weight, games FROM decision_ratings"
                " WHERE identity_id = %s AND family = %s",
                (identity_id, family),
            )
            row = await cur.fetchone()
        if row is None:
            return DecisionRating()
        return DecisionRating(float(row[0]), float(row[1]), int(row[2]))  # type: ignore[index]

    async def profile(self, identity_id: str) -> dict[str, Any]:
        """The ratings part of a player's profile: per family, the result rating, the decision
        rating and the means of accuracy and luck over the analysed games."""
        async with self.db.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(
                """
                SELECT f.family, r.mu, r.sigma, r.games AS rated_games,
                       d.weighted_sum, d.weight, d.games AS analysed_games,
                       s.accuracy, s.luck
                  FROM (VALUES ('yahtzee'), ('yatzy')) AS f (family)
                  LEFT JOIN ratings r ON r.family = f.family AND r.identity_id = %(id)s
                  LEFT JOIN decision_ratings d
                         ON d.family = f.family AND d.identity_id = %(id)s
                  LEFT JOIN LATERAL (
                        SELECT avg(accuracy) AS accuracy, avg(luck) AS luck FROM game_skill
                         WHERE identity_id = %(id)s AND family = f.family
                           AND accuracy IS NOT NULL) s ON true
                """,
                {"id": identity_id},
            )
            rows = await cur.fetchall()
        out: dict[str, Any] = {}
        for row in rows:
            if row["mu"] is None and row["weighted_sum"] is None:
                continue
            result = (
                ResultRating(row["mu"], row["sigma"], row["rated_games"])
                if row["mu"] is not None
                else None
            )
            decision = (
                DecisionRating(row["weighted_sum"], row["weight"], row["analysed_games"])
                if row["weighted_sum"] is not None
                else DecisionRating()
            )
            out[row["family"]] = {
                "rating": result.shown if result else None,
                "rating_provisional": result.provisional if result else True,
                "rated_games": result.games if result else 0,
                "decision_rating": decision.shown,
                "decision_provisional": decision.provisional,
                "analysed_games": decision.games,
                "accuracy": _round(row["accuracy"], 2),
                "luck": _round(row["luck"], 1),
            }
        return out

    # -- writing (inside the archive's transaction) ----------------------------------------------

    async def record_game(self, conn: psycopg.AsyncConnection[Any], item: ArchivedGame) -> None:
        """Store the skill of every analysed seat, move the decision ratings of its identities
        and, for a rated finished game, the result ratings of its persons. ``conn`` is in the
        archive's transaction of this (new) game."""
        family, finished = item.family, to_utc(item.finished_ms)
        rated = _rated_seats(item)
        ids = sorted(  # the identities whose decision rating this game moves
            {
                s.identity_id
                for s in item.players
                if s.identity_id is not None and s.skill is not None and s.skill.decisions
            }
        )
        results = await _lock_results(conn, family, [s.identity_id for s in rated], finished)
        decisions = await _lock_decisions(conn, family, ids, finished)
        moved: dict[int, tuple[ResultRating, ResultRating]] = {}
        if rated:
            before = [results[s.identity_id] for s in rated]  # type: ignore[index]
            after = rate_results(before, [s.place for s in rated])
            moved = {s.seat: (b, a) for s, b, a in zip(rated, before, after, strict=True)}
        rows = []
        moved_decisions: set[str] = set()
        for seat in item.players:
            change = moved.get(seat.seat)
            skill = seat.skill
            decision: DecisionRating | None = None
            if skill is not None and skill.decisions and seat.identity_id is not None:
                decision = decisions[seat.identity_id].after(skill.performance)
                decisions[seat.identity_id] = decision
                moved_decisions.add(seat.identity_id)
            if skill is None and change is None:
                continue
            rows.append(
                (
                    item.id,
                    seat.seat,
                    seat.identity_id,
                    seat.computer,
                    family,
                    skill.decisions if skill else None,
                    skill.total_loss if skill else None,
                    skill.expected_start if skill else None,
                    seat.total,
                    skill.luck if skill else None,
                    skill.accuracy if skill else None,
                    skill.performance if skill and skill.decisions else None,
                    decision.value if decision else None,
                    decision.games if decision else None,
                    change[0].mu if change else None,
                    change[1].mu if change else None,
                    change[1].sigma if change else None,
                    finished,
                )
            )
        async with conn.cursor() as cur:
            if rows:
                await cur.executemany(INSERT_SKILL, rows)
            if moved:
                await cur.executemany(
                    "UPDATE ratings SET mu = %s, sigma = %s, games = %s, updated_at = %s"
                    " WHERE identity_id = %s AND family = %s",
                    [
                        (a.mu, a.sigma, a.games, finished, s.identity_id, family)
                        for s in rated
                        for a in [moved[s.seat][1]]
                    ],
                )
            touched = [(i, d) for i, d in decisions.items() if i in moved_decisions]
            if touched:
                await cur.executemany(
                    "UPDATE decision_ratings SET weighted_sum = %s, weight = %s, games = %s,"
                    " updated_at = %s WHERE identity_id = %s AND family = %s",
                    [(d.weighted_sum, d.weight, d.games, finished, i, family) for i, d in touched],
                )

    # -- reading a game -------------------------------------------------------------------------

    async def game_ratings(self, game_id: str) -> list[GameRating]:
        """The rows of an archived game's identities (rated or analysed), in seat order."""
        async with self.db.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(
                """
                SELECT s.seat, gp.player_id, s.identity_id, i.display_name, s.rating_before,
                       s.rating_after, s.sigma_after, s.accuracy, s.luck, s.decision_after,
                       s.decision_games, s.final
                  FROM game_skill s
                  JOIN game_players gp ON gp.game_id = s.game_id AND gp.seat = s.seat
                  JOIN identities i ON i.id = s.identity_id
                 WHERE s.game_id = %s ORDER BY s.seat
                """,
                (game_id,),
            )
            rows = await cur.fetchall()
        return [
            GameRating(
                seat=r["seat"],
                player_id=r["player_id"],
                identity_id=r["identity_id"],
                name=r["display_name"],
                before=None if r["rating_before"] is None else display(r["rating_before"]),
                after=None if r["rating_after"] is None else display(r["rating_after"]),
                provisional=r["sigma_after"] is None or r["sigma_after"] > PROVISIONAL_SIGMA,
                accuracy=_round(r["accuracy"], 2),
                luck=_round(r["luck"], 1),
                decision_rating=None if r["decision_after"] is None else round(r["decision_after"]),
                decision_provisional=(r["decision_games"] or 0) < DECISION_PROVISIONAL_GAMES,
                final=r["final"],
            )
            for r in rows
        ]

    # -- leaderboards (their rebuild from the database) -----------------------------------------

    async def game_board_rows(self, game_id: str) -> dict[Board, list[BoardRow]]:
        """What one archived game puts on each leaderboard (the values after it)."""
        async with self.db.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(GAME_BOARD_QUERY, {"game": game_id})
            rows = await cur.fetchall()
        out: dict[Board, list[BoardRow]] = {board: [] for board in BOARDS}
        for r in rows:
            out[r["board"]].append(
                BoardRow(r["identity_id"], r["name"], float(r["value"]), bool(r["provisional"]))
            )
        return out

    async def board_rows(
        self, board: Board, family: str, since: dt.datetime | None
    ) -> list[BoardRow]:
        """Every player's value on ``board`` over the games finished at or after ``since``
        (None: all time): the rating after their latest game of the period, or their best
        score in a finished public game of the period."""
        since = since or to_utc(0)
        async with self.db.connection() as conn:
            cur = conn.cursor(row_factory=dict_row)
            await cur.execute(BOARD_QUERIES[board], {"family": family, "since": since})
            rows = await cur.fetchall()
        return [
            BoardRow(r["identity_id"], r["name"], float(r["value"]), bool(r["provisional"]))
            for r in rows
        ]


def _rated_seats(item: ArchivedGame) -> list[ArchivedSeat]:
    """The seats whose result ratings the game moves: every person of a rated, finished game
    with two or more persons, each with an identity (else nobody: a rated room seats only
    remembered persons, so a seat without one means the game is not rateable)."""
    if not item.rated or item.outcome != "finished":
        return []
    people = [s for s in item.players if s.computer is None]
    if len(people) < 2 or any(s.identity_id is None for s in people):
        return []
    return people


async def _lock_results(
    conn: psycopg.AsyncConnection[Any], family: str, ids: list[str | None], at: dt.datetime
) -> dict[str, ResultRating]:
    """The players' result ratings, their rows created when missing and locked until the
    transaction ends (in id order: two games of the same players cannot deadlock)."""
    wanted = sorted({i for i in ids if i is not None})
    if not wanted:
        return {}
    fresh = ResultRating()
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO ratings (identity_id, family, mu, sigma, games, updated_at)"
            " VALUES (%s, %s, %s, %s, 0, %s) ON CONFLICT DO NOTHING",
            [(i, family, fresh.mu, fresh.sigma, at) for i in wanted],
        )
    cur2 = await conn.execute(
        "SELECT identity_id, mu, sigma, games FROM ratings"
        " WHERE family = %s AND identity_id = ANY(%s) ORDER BY identity_id FOR UPDATE",
        (family, wanted),
    )
    return {
        str(r[0]): ResultRating(float(r[1]), float(r[2]), int(r[3])) for r in await cur2.fetchall()
    }


async def _lock_decisions(
    conn: psycopg.AsyncConnection[Any], family: str, ids: list[str], at: dt.datetime
) -> dict[str, DecisionRating]:
    """As :func:`_lock_results`, for the decision ratings."""
    if not ids:
        return {}
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO decision_ratings (identity_id, family, weighted_sum, weight, games,"
            " updated_at) VALUES (%s, %s, 0, 0, 0, %s) ON CONFLICT DO NOTHING",
            [(i, family, at) for i in ids],
        )
    cur2 = await conn.execute(
        "SELECT identity_id, weighted_sum, weight, games FROM decision_ratings"
        " WHERE family = %s AND identity_id = ANY(%s) ORDER BY identity_id FOR UPDATE",
        (family, ids),
    )
    return {
        str(r[0]): DecisionRating(float(r[1]), float(r[2]), int(r[3]))
        for r in await cur2.fetchall()
    }


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(float(value), digits)
