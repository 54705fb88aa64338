"""The archiver: drains the finished rooms of Redis into PostgreSQL, off every command's path.

Each process runs :meth:`Archiver.run` beside its other background loops. A pass claims the
due rooms of :class:`~server.storage.pending.PendingArchive` (one archiver per room at a time),
reads each room (record, event log, seat fields) from Redis, writes it with
:meth:`Archive.write` (one transaction, exactly once), and only then removes it from the
pending set; from then on the room stays in Redis only ``archived_grace_seconds`` more.
While the database is
down a pass writes nothing, keeps the pending rooms' keys alive and tries again at the next
pass: nothing is lost, and play never waits for the database.

A rarer :meth:`Archiver.sweep` (every ``sweep_seconds``) scans the rooms in Redis for what the
pending set missed: a finished room whose process died between its commit and its mark, and
a started game about to expire unfinished (everyone gone for a day): archived as
``abandoned``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass

import redis.exceptions

import protocol.messages as pm
from protocol.codec import decode_server
from protocol.errors import ErrorCode
from protocol.transport import Encoding
from server import game
from server.boundary import views
from server.domain import record_format, room
from server.domain.events import occurred
from server.domain.rating import Skill
from server.domain.timing import now_ms
from server.service.outcomes import Cached, Change
from server.service.rooms import GameService, ServiceError
from server.solver import Table
from server.storage.archive import Archive
from server.storage.archived_game import ArchivedGame, archived_game, to_utc
from server.storage.leaderboards import Leaderboards
from server.storage.pending import PendingArchive
from server.storage.postgres import DATABASE_ERRORS
from server.storage.redis_store import RedisStore
from server.strategy import computers

__all__ = ["Analyse", "Announce", "Archiver", "Review", "ratings_teller"]

log = logging.getLogger("yahtzee.archive")


@dataclass(frozen=True, slots=True)
class Review:
    """What the solver's analysis of a finished game gives the archive, by player id: the
    share of optimal decisions, and the skill and luck (README "Ratings")."""

    accuracy: Mapping[str, float]
    skills: Mapping[str, Skill]


Analyse = Callable[[room.RoomRecord, list[bytes]], Awaitable[Review | None]]
"""The review of a finished game, or None when the strategy table of its rules is not
loaded."""

Announce = Callable[[str, room.RatingsAnnounced], Awaitable[None]]
"""Tells a room the ratings its game moved (a ``ratings`` event in its log), once."""


def review_game(table: Table, record: room.RoomRecord, log_entries: list[bytes]) -> Review:
    """Each player's share of optimal decisions, and skill and luck: ``V0`` the table's
    expectation of a new card, the loss the sum of the decisions' expected losses, the final
    score the card's grand total (README "Ratings"). CPU-bound: run it in a thread."""
    decoded = [decode_server(data, Encoding.MSGPACK) for data in log_entries]
    events = views.engine_events(e for e in decoded if isinstance(e, pm.Event))
    analysis = computers.analyse(table, events)
    finals = {p.player_id: p.card.totals().grand for p in record.game.players}
    accuracy: dict[str, float] = {}
    skills: dict[str, Skill] = {}
    for player in analysis.players:
        decisions = list(player.decisions)
        if decisions:
            good = sum(1 for d in decisions if d.loss <= 1e-9)
            accuracy[player.player] = good / len(decisions)
        if player.player in finals:
            skills[player.player] = Skill(
                len(decisions), player.total_loss, table.expected, finals[player.player]
            )
    return Review(accuracy, skills)


def ratings_teller(service: GameService) -> Announce:
    """An :data:`Announce` that commits the event to the room (nothing when the room told it
    before, or is gone: the ratings stay on the players' profiles)."""

    async def tell(room_id: str, event: room.RatingsAnnounced) -> None:
        def step(cached: Cached) -> Change | None:
            record = cached.record
            if record.ratings_told:
                return None
            record = record.replace(ratings_told=True)
            return Change(record, occurred([event], record.game))

        try:
            await service.transact(room_id, step)
        except ServiceError as exc:
            if exc.code != ErrorCode.ROOM_NOT_FOUND:
                raise

    return tell


class Archiver:
    """Moves finished games from Redis to the archive (see the module docstring)."""

    def __init__(
        self,
        store: RedisStore,
        archive: Archive,
        pending: PendingArchive,
        *,
        retention_seconds: int,
        grace_seconds: int = 300,
        lease_ms: int = 10_000,
        retry_ms: int = 1_000,
        sweep_seconds: float = 300.0,
        clock: Callable[[], int] = now_ms,
        analyse: Analyse | None = None,
        leaderboards: Leaderboards | None = None,
        announce: Announce | None = None,
    ) -> None:
        self.store = store
        self.archive = archive
        self.pending = pending
        self.retention_ms = retention_seconds * 1000
        self.grace_ms = grace_seconds * 1000
        self.lease_ms = lease_ms
        self.retry_ms = retry_ms
        self.sweep_seconds = sweep_seconds
        #: an unfinished game whose room expires within this is archived as abandoned
        self.abandon_ms = int(sweep_seconds * 3000)
        self._last_sweep = time.monotonic()
        self.clock = clock
        self.analyse = analyse
        self.leaderboards = leaderboards
        self.announce = announce
        self.archived = 0
        self.failures = 0
        #: rooms due at the start of the last pass
        self.due = 0
        self.last_error: str | None = None
        #: set after every pass (tests and /readyz wait on it, never on time)
        self.passes = 0
        self._pass_done = asyncio.Event()

    async def run_once(self) -> int:
        """One pass; how many games it archived. Database errors are kept in ``last_error``
        (the rooms stay pending); Redis errors propagate to the loop."""
        now = self.clock()
        due = await self.pending.due(now)
        self.due = len(due)
        written = 0
        try:
            await self.archive.db.ensure_schema()
            for room_id in due:
                finished_ms = await self.pending.claim(room_id, self.clock(), self.lease_ms)
                if finished_ms is None:
                    continue
                try:
                    written += await self._archive_room(room_id, finished_ms)
                except DATABASE_ERRORS:
                    raise
                except Exception:  # this room only: it is tried again after its lease
                    log.exception("archive: room %s could not be archived", room_id)
            self.last_error = None
        except DATABASE_ERRORS as exc:
            self.failures += 1
            self.last_error = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            log.warning("archive: database unavailable, %d room(s) wait: %s", len(due), exc)
            retry = self.clock() + self.retry_ms
            for room_id in due:  # claimed or not: none may expire before it is archived
                await self.pending.keep_alive(room_id, self.retention_ms)
                await self.pending.retry_at(room_id, retry)
        finally:
            self.passes += 1
            self._pass_done.set()
            self._pass_done = asyncio.Event()
        return written

    async def _archive_room(self, room_id: str, finished_ms: int) -> bool:
        stored = await self.store.load(room_id)
        if stored is None:
            log.error("archive: room %s expired before it was archived", room_id)
            await self.pending.done(room_id)
            return False
        record = record_format.decode_record(stored.record)
        if record.game.phase != game.Phase.FINISHED and not await self._expiring(room_id, record):
            await self.pending.done(room_id)  # in play (or in the lobby): nothing to keep yet
            return False
        await self.pending.keep_alive(room_id, self.retention_ms)
        entries = await self.store.read_events(room_id, 0)
        events = [data for _, data in entries]
        fields = await self.store.seat_fields(room_id)
        review = await self.analyse(record, events) if self.analyse is not None else None
        item = archived_game(
            room_id,
            record,
            events,
            fields,
            finished_ms,
            review.accuracy if review else None,
            review.skills if review else None,
        )
        new = await self.archive.write(item)
        # after the commit, and again when a retry finds the game archived (both idempotent):
        # a crash between the commit and here loses neither the boards nor the announcement
        await self._publish(room_id, record, item)
        await self.pending.done(room_id)
        if record.game.phase == game.Phase.FINISHED:  # Redis keeps it only a grace longer
            await self.pending.expire_soon(room_id, self._grace_of(record))
        if new:
            self.archived += 1
            log.info("archive: game %s archived (%d events)", item.id, len(events))
        return new

    async def _publish(self, room_id: str, record: room.RoomRecord, item: ArchivedGame) -> None:
        """Put the game's values on the leaderboards and tell a rated room its ratings."""
        if item.outcome != "finished" or (self.leaderboards is None and self.announce is None):
            return
        ratings = self.archive.ratings
        if self.leaderboards is not None:
            boards = await ratings.game_board_rows(item.id)
            for board, rows in boards.items():
                await self.leaderboards.put(board, item.family, to_utc(item.finished_ms), rows)
        if self.announce is None or not item.rated or record.ratings_told:
            return
        lines = tuple(
            room.RatingLine(
                player=r.player_id,
                identity=r.identity_id,
                before=r.before,
                after=r.after,
                provisional=r.provisional,
                accuracy=r.accuracy,
                luck=r.luck,
                decision_rating=r.decision_rating,
            )
            for r in await ratings.game_ratings(item.id)
            if r.before is not None and r.after is not None
        )
        if lines:
            await self.announce(room_id, room.RatingsAnnounced(item.family, lines))

    def _grace_of(self, record: room.RoomRecord) -> int:
        """How long an archived room stays: a tournament entry until its tournament's end and
        the retention after it (the close reads it, verifiers read its log), else the grace."""
        closes = record.meta.closes_ms
        if closes is None:
            return self.grace_ms
        return max(self.grace_ms, closes - self.clock() + self.retention_ms)

    async def _expiring(self, room_id: str, record: room.RoomRecord) -> bool:
        """A started, unfinished game whose room expires soon (it is archived as abandoned)."""
        if record.game.phase in (game.Phase.LOBBY, game.Phase.FINISHED):
            return False
        left = int(await self.store.redis.pttl(self.store.keys(room_id).room))
        return 0 <= left < self.abandon_ms

    async def sweep(self) -> int:
        """Mark for the archive the finished rooms the pending set missed and the started
        games about to expire unfinished; how many it marked. (A scan of the room keys: rare.)"""
        prefix = f"{self.store.prefix}{{room:"
        found: list[str] = []
        async for key in self.store.redis.scan_iter(match=f"{prefix}*}}:room", count=1000):
            name = key.decode() if isinstance(key, bytes) else str(key)
            room_id = name[len(prefix) : -len("}:room")]
            raw = await self.store.redis.hget(key, "record")
            if raw is None:
                continue
            try:
                record = record_format.decode_record(raw)
            except ValueError:
                continue
            finished = record.game.phase == game.Phase.FINISHED
            if finished or await self._expiring(room_id, record):
                found.append(room_id)
        if not found:
            return 0
        archived = await self.archive.rooms_archived(found)
        marked = 0
        for room_id in found:
            if room_id not in archived:
                await self.pending.add(room_id, self.clock())
                marked += 1
        if marked:
            log.warning("archive: the sweep found %d room(s) to archive", marked)
        return marked

    async def wait_pass(self) -> None:
        """Until the next pass ends (tests synchronise on passes, not on time)."""
        await self._pass_done.wait()

    async def run(self, poll_seconds: float) -> None:
        """Pass after pass until cancelled; Redis errors are logged and retried."""
        while True:
            try:
                if time.monotonic() - self._last_sweep >= self.sweep_seconds:
                    self._last_sweep = time.monotonic()
                    await self.sweep()
                await self.run_once()
            except redis.exceptions.RedisError as exc:
                log.warning("archive: redis: %s", exc)
            except DATABASE_ERRORS as exc:
                log.warning("archive: database unavailable: %s", exc)
            except Exception:
                log.exception("archive pass failed")
            await asyncio.sleep(poll_seconds)
