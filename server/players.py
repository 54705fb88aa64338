"""The archive and identities as one part of a server process: started by the application's
lifespan after its other loops, stopped before Redis closes.

With ``DATABASE_URL`` unset (and ``YAHTZEE_DATABASE`` not ``off``) a private embedded
PostgreSQL is started, as the embedded Valkey is for Redis. The database is opened without
waiting for it: a database that is down only delays the archive (and makes the player routes
answer 503); play never waits for it.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import logging
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import redis.exceptions
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from server.domain import room
from server.ops.cancel import cancel_and_wait
from server.ops.database_settings import ArchiveSettings
from server.ops.embedded_postgres import EmbeddedPostgres, EmbeddedPostgresError, start_embedded
from server.service.archiver import Archiver, Review, ratings_teller, review_game
from server.service.identities import Identities, Identity, IdentityError
from server.service.tournaments import Tournaments, reference_player
from server.storage.archive import Archive
from server.storage.archived_game import identity_field, to_utc
from server.storage.leaderboards import Leaderboards
from server.storage.pending import PendingArchive
from server.storage.postgres import DATABASE_ERRORS, Database
from server.storage.standings import Standings
from server.storage.tournaments import TournamentRepository

if TYPE_CHECKING:
    from server.transport.runtime import Runtime

__all__ = ["Players", "identity_seat_field"]

log = logging.getLogger("yahtzee.archive")

KNOWN_CREDENTIALS = 10_000
STARTUP_SECONDS = 3.0
"""How long start-up waits for the database to migrate it (then the archiver retries)."""


def identity_seat_field(player_id: str) -> str:
    return identity_field(player_id)


_REBUILD_ERRORS: tuple[type[BaseException], ...] = (
    *DATABASE_ERRORS,
    TimeoutError,
    redis.exceptions.RedisError,
)
"""What may stop the leaderboards' rebuild at start (the server starts all the same)."""


class _ArchiveMetrics(Collector):
    """The archiver's counts on the application's Prometheus registry."""

    def __init__(self, archiver: Archiver) -> None:
        self.archiver = archiver

    def collect(self) -> Iterator[Metric]:
        yield CounterMetricFamily(
            "yahtzee_archived_games", "Games this process archived.", self.archiver.archived
        )
        yield CounterMetricFamily(
            "yahtzee_archive_failures",
            "Archiver passes that met a database that did not answer.",
            self.archiver.failures,
        )
        yield GaugeMetricFamily(
            "yahtzee_archive_due_rooms",
            "Finished rooms due for the archive at the last pass (they wait in Redis).",
            self.archiver.due,
        )


class Players:
    """Database, archive, archiver loop and identities of one process."""

    def __init__(
        self,
        rt: Runtime,
        settings: ArchiveSettings,
        db: Database,
        embedded: EmbeddedPostgres | None = None,
    ) -> None:
        self.rt = rt
        self.settings = settings
        self.db = db
        self.embedded = embedded
        self.archive = Archive(db)
        self.ratings = self.archive.ratings
        self.leaderboards = Leaderboards(rt.store)
        self.pending = PendingArchive(rt.store)
        self.identities = Identities(db, settings)
        self.archiver = Archiver(
            rt.store,
            self.archive,
            self.pending,
            retention_seconds=rt.settings.retention_seconds,
            grace_seconds=rt.settings.archived_grace_seconds,
            lease_ms=settings.lease_ms,
            sweep_seconds=settings.sweep_seconds,
            clock=rt.service.clock,
            analyse=self._review,
            leaderboards=self.leaderboards,
            announce=ratings_teller(rt.service),
        )
        self.tournaments = Tournaments(
            TournamentRepository(db),
            Standings(rt.store),
            rt.service,
            rt.seats,
            rt.settings,
            analyse=self._accuracy,
            reference=reference_player(rt.upkeep.advisor),
        )
        self._task: asyncio.Task[None] | None = None
        self._tournaments_task: asyncio.Task[None] | None = None
        rt.metrics.registry.register(_ArchiveMetrics(self.archiver))
        #: credentials this process resolved lately (by hash), for a database outage only
        self._known: collections.OrderedDict[str, Identity] = collections.OrderedDict()

    @classmethod
    async def start(cls, rt: Runtime, settings: ArchiveSettings | None = None) -> Players | None:
        """Start the part (``None`` when the database is switched off)."""
        settings = settings or ArchiveSettings.from_env()
        if not settings.enabled:
            return None
        embedded = None
        url = settings.database_url
        if url is None:
            try:
                embedded = start_embedded(log)
            except EmbeddedPostgresError as exc:  # play needs no database: go on without one
                log.error("no archive and no remembered players: %s", exc)
                return None
            url = embedded.url
        db = Database(url)
        await db.open()
        try:  # migrated before the first request when the database answers; else later
            async with asyncio.timeout(STARTUP_SECONDS):
                await db.ensure_schema()
        except DATABASE_ERRORS as exc:
            log.warning("database not ready at start (archiving will wait for it): %s", exc)
        players = cls(rt, settings, db, embedded)
        try:  # what the archiver put while this process was down, or a Redis that lost it
            async with asyncio.timeout(STARTUP_SECONDS):
                await players.rebuild_leaderboards()
        except _REBUILD_ERRORS as exc:
            log.warning("leaderboards not rebuilt at start: %s", exc)
        rt.service.endings.connect(players.pending.add)
        rt.service.entries.connect(players.tournaments.on_commit)
        rt.players = players
        players._task = asyncio.create_task(
            players.archiver.run(settings.poll_seconds), name="archiver"
        )
        players._tournaments_task = asyncio.create_task(
            players.tournaments.run(), name="tournaments"
        )
        return players

    async def stop(self) -> None:
        self.rt.service.endings.disconnect()
        self.rt.service.entries.disconnect()
        self.rt.players = None
        tasks = [t for t in (self._task, self._tournaments_task) if t is not None]
        await cancel_and_wait(tasks, 5)
        await self.db.close()
        if self.embedded is not None:
            self.embedded.stop()

    async def readiness(self) -> dict[str, object]:
        """What ``/readyz`` adds: the database's state, apart from the play's readiness."""
        status = await self.db.status()
        body: dict[str, object] = {"database": status}
        if self.archiver.last_error:
            body["archive"] = self.archiver.last_error
        return body

    async def identity_of(self, credential: str) -> Identity:
        """The identity of a credential a connection presented; a database that does not
        answer is ``unavailable`` (retryable)."""
        key = hashlib.sha256(credential.encode()).hexdigest()
        try:
            identity: Identity = await self.identities.resolve(credential)
        except DATABASE_ERRORS as exc:
            # A player this process saw lately still plays as themself while the database is
            # down (a revocation takes effect once it is back).
            known = self._known.get(key)
            if known is not None:
                return known
            raise IdentityError("unavailable", f"player database unavailable: {exc}", 503) from exc
        self._known[key] = identity
        self._known.move_to_end(key)
        while len(self._known) > KNOWN_CREDENTIALS:
            self._known.popitem(last=False)
        return identity

    async def rebuild_leaderboards(self) -> int:
        """Recompute the leaderboards of Redis from PostgreSQL (at start, and on demand)."""
        now = to_utc(self.rt.service.clock())
        return await self.leaderboards.rebuild(self.ratings, now)

    async def _accuracy(
        self, record: room.RoomRecord, log_entries: list[bytes]
    ) -> Mapping[str, float] | None:
        """Each player's share of optimal decisions (a tournament entry's), when the rules'
        table is loaded."""
        review = await self._review(record, log_entries)
        return review.accuracy if review is not None else None

    async def _review(self, record: room.RoomRecord, log_entries: list[bytes]) -> Review | None:
        """The solver's review of a finished game, when the rules' table is loaded."""
        table = self.rt.upkeep.advisor.table(record.game.options)
        if table is None:
            return None
        return await asyncio.to_thread(review_game, table, record, log_entries)
