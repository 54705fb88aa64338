"""The embedded PostgreSQL (server.ops.embedded_postgres) and the migrations runner."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from server.ops import embedded_postgres, postgres_install
from server.ops.embedded_postgres import EmbeddedPostgres, EmbeddedPostgresError
from server.storage import migrate
from server.storage.postgres import Database


def test_embedded_postgres_starts_answers_and_cleans_up() -> None:
    server = EmbeddedPostgres()
    url = server.start()
    folder = server.data_dir.parent
    try:
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT current_setting('server_version_num')::int").fetchone()
            assert row is not None
            assert row[0] >= 160000
        if os.geteuid() == 0:  # PostgreSQL refuses root: the server runs as another user
            owner = server.data_dir.stat().st_uid
            assert owner != 0
    finally:
        server.stop()
    assert not folder.exists()
    server.stop()  # idempotent


def test_embedded_postgres_survives_a_crash_and_restarts_on_the_same_port() -> None:
    with EmbeddedPostgres() as server:
        url = server.url
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE kept (n int)")
            conn.execute("INSERT INTO kept VALUES (7)")
        server.kill()
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(url, connect_timeout=2)
        assert server.restart() == url
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT n FROM kept").fetchall() == [(7,)]


def test_missing_binaries_say_what_to_do(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(postgres_install.BIN_ENV, str(tmp_path))
    with pytest.raises(EmbeddedPostgresError, match="holds no initdb"):
        postgres_install.find_install()
    message = postgres_install.missing_server_message("linux", "x86_64")
    assert "DATABASE_URL" in message
    assert "python3 .ci/dev.py setup" in message
    assert "brew" in postgres_install.missing_server_message("darwin", "arm64")
    assert "WSL" in embedded_postgres.missing_server_message("win32", "amd64")


def test_the_server_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    script = (
        "import os, sys\n"
        "from server.ops.embedded_postgres import EmbeddedPostgres\n"
        "pg = EmbeddedPostgres(); pg.start(); print(pg.pid, pg.data_dir.parent, flush=True)\n"
        "sys.stdin.read()\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[2],
    )
    with child:
        assert child.stdout is not None
        pid_text, folder = child.stdout.readline().decode().split()
        pid = int(pid_text)
        child.kill()
        child.wait()
    # SIGINT from the kernel (PR_SET_PDEATHSIG): a fast shutdown, awaited through /proc
    import psutil

    with contextlib.suppress(psutil.NoSuchProcess):  # gone already
        psutil.Process(pid).wait(timeout=30)
    shutil.rmtree(folder)  # what the killed process could not clean up


async def test_migrations_apply_once_in_order(database_url: str, tmp_path: Path) -> None:
    (tmp_path / "0001_one.sql").write_text("CREATE TABLE one (n int);")
    (tmp_path / "0002_two.sql").write_text("INSERT INTO one VALUES (2);")
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        assert await migrate.migrate(conn, tmp_path) == [1, 2]
        assert await migrate.migrate(conn, tmp_path) == []
        assert await migrate.applied(conn) == [1, 2]
        (tmp_path / "0003_bad.sql").write_text("INSERT INTO missing VALUES (1);")
        with pytest.raises(psycopg.errors.UndefinedTable):
            await migrate.migrate(conn, tmp_path)
        assert await migrate.applied(conn) == [1, 2]  # the failed file left nothing
        cur = await conn.execute("SELECT count(*) FROM one")
        assert await cur.fetchone() == (1,)


def test_migration_files_are_numbered(tmp_path: Path) -> None:
    assert migrate.available()[0].version == 1
    (tmp_path / "bad.sql").write_text("")
    with pytest.raises(ValueError, match="NNNN_name"):
        migrate.available(tmp_path)


async def test_database_migrates_the_real_schema_and_answers_ping(database: Database) -> None:
    assert await database.ping() == "ok"
    async with database.connection() as conn:
        cur = await conn.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = current_schema() ORDER BY table_name"
        )
        names = [row[0] for row in await cur.fetchall()]  # type: ignore[index]
    assert names == [
        "decision_ratings", "game_logs", "game_players", "game_skill", "games", "identities",
        "ratings", "schema_migrations", "tournament_entries", "tournaments",
    ]  # fmt: skip
    assert await database.ensure_schema() == []


async def test_database_status_waits_briefly_and_shares_one_ping(
    database: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``/readyz`` asks ``status``: a ping that has not answered within the bound is reported
    as such at once, and every caller meanwhile waits on that same ping (a dead database sees
    one ping in flight, not one per probe); a finished ping is not reused."""
    assert await database.status() == "ok"
    answer = asyncio.Event()
    pings = 0
    real_ping = database.ping

    async def held_ping() -> str:
        nonlocal pings
        pings += 1
        await answer.wait()
        return await real_ping()

    monkeypatch.setattr(database, "ping", held_ping)
    waiting = await asyncio.gather(*(database.status(within=0.05) for _ in range(3)))
    assert waiting == ["no answer within 0.05 s"] * 3
    assert await database.status(within=0.05) == "no answer within 0.05 s"
    assert pings == 1
    answer.set()
    assert await database.status(within=30) == "ok"
    assert pings == 1
    assert await database.status(within=30) == "ok"
    assert pings == 2
