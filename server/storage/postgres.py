"""The database connection: a small pool of psycopg 3 async connections, the schema's
migrations at start, and a health probe. Nothing here is on a play command's path.

The pool is opened without waiting (a database that is down at start does not stop the
service: play goes on, archiving waits); each connection is checked before it is handed out,
so connections a restarted database cut are replaced instead of failing a request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import psycopg
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from server.storage import migrate

__all__ = ["DATABASE_ERRORS", "Database", "DatabaseUnavailableError"]

log = logging.getLogger("yahtzee.database")


STATUS_WAIT_SECONDS = 0.5
"""How long ``/readyz`` waits for the database's ping (a probe must answer within a second)."""


class DatabaseUnavailableError(RuntimeError):
    """The database did not answer (down, restarting, or the schema is not there yet)."""


#: What a database that is down, restarting or too slow raises through this module.
DATABASE_ERRORS: tuple[type[BaseException], ...] = (
    psycopg.OperationalError,
    psycopg.InterfaceError,
    PoolTimeout,
    TimeoutError,
    DatabaseUnavailableError,
    OSError,
)


class Database:
    """A pool of connections to ``url`` (``postgresql://...``, psycopg's conninfo forms)."""

    def __init__(
        self,
        url: str,
        *,
        max_size: int = 8,
        timeout: float = 2.0,
        connect_timeout: int = 3,
        statement_timeout_ms: int = 10_000,
    ) -> None:
        self.url = url
        self.timeout = timeout
        self.statement_timeout_ms = statement_timeout_ms
        self.pool: AsyncConnectionPool[psycopg.AsyncConnection[object]] = AsyncConnectionPool(
            url,
            min_size=1,
            max_size=max_size,
            open=False,
            timeout=timeout,
            check=AsyncConnectionPool.check_connection,
            configure=self._configure,
            kwargs={"autocommit": True, "connect_timeout": connect_timeout},
            # a failed reconnection gives up after this; the next request tries again at once
            # (no backoff grown over a long outage)
            reconnect_timeout=10.0,
            name="yahtzee-db",
        )
        self.schema_ready = False
        self._schema_lock = asyncio.Lock()
        self._ping: asyncio.Task[str] | None = None

    async def _configure(self, conn: psycopg.AsyncConnection[object]) -> None:
        # A statement stuck on a lock or a dying server must not hold an archiver or a request.
        await conn.execute(f"SET statement_timeout = {int(self.statement_timeout_ms)}")

    async def open(self) -> None:
        """Open the pool without waiting for a connection (the database may be down)."""
        await self.pool.open(wait=False)

    async def close(self) -> None:
        if self._ping is not None:
            self._ping.cancel()
        await self.pool.close(timeout=2)

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[psycopg.AsyncConnection[object]]:
        """A pooled connection (autocommit: use ``conn.transaction()`` for a transaction).
        :class:`DatabaseUnavailableError` when none can be had in time."""
        try:
            async with self.pool.connection(timeout=self.timeout) as conn:
                yield conn
        except PoolTimeout as exc:
            raise DatabaseUnavailableError(f"no database connection: {exc}") from exc

    async def ensure_schema(self) -> list[int]:
        """Apply the missing migrations once per process; the versions applied now."""
        if self.schema_ready:
            return []
        async with self._schema_lock:
            if self.schema_ready:
                return []
            async with self.connection() as conn:
                done = await migrate.migrate(conn)
            self.schema_ready = True
            if done:
                log.info("database schema migrated to version %d", done[-1])
            return done

    async def ping(self) -> str:
        """``"ok"``, or why the database does not answer within a second (``/readyz``)."""
        try:
            async with asyncio.timeout(1.0), self.connection() as conn:
                await conn.execute("SELECT 1")
        except DATABASE_ERRORS as exc:
            return str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return "ok" if self.schema_ready else "schema not migrated yet"

    async def status(self, within: float = STATUS_WAIT_SECONDS) -> str:
        """What :meth:`ping` says, or that it has not answered ``within`` seconds.

        ``/readyz`` asks this. A probe that waited for the ping's whole second would time out
        (Kubernetes' default probe timeout is one second) and take a server out of service
        while play is fine. The ping goes on after ``within``: a caller meanwhile waits for
        that same ping, so a dead database sees at most one ping in flight, however often it
        is asked. A finished ping is never reused: every answer is at most a second old.
        """
        if self._ping is None or self._ping.done():
            self._ping = asyncio.create_task(self.ping(), name="database ping")
        done, _ = await asyncio.wait({self._ping}, timeout=within)
        if not done:
            return f"no answer within {within:g} s"
        return self._ping.result()
