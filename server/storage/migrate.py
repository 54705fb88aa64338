"""Schema migrations: plain, numbered SQL files applied in order by this small runner.

``migrations/NNNN_name.sql`` files are applied once each, in number order, every file in its
own transaction (PostgreSQL's DDL is transactional: a failing file leaves nothing behind), and
recorded in ``schema_migrations``. A transaction-scoped advisory lock serialises servers that
start at once, so exactly one applies a file and the others see it applied. Nothing else:
no down-migrations (a fix is the next file), no ORM.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import psycopg

__all__ = ["MIGRATIONS", "Migration", "applied", "available", "migrate"]

MIGRATIONS = Path(__file__).parent / "migrations"
_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
# pg_advisory_xact_lock key: "yahtzee-migrate" folded into a bigint
_LOCK_KEY = 0x79616874_7A6D6967


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def available(folder: Path = MIGRATIONS) -> list[Migration]:
    """The migration files of ``folder``, in version order (a duplicate number is an error)."""
    found: dict[int, Migration] = {}
    for path in sorted(folder.glob("*.sql")):
        match = _NAME.match(path.name)
        if match is None:
            raise ValueError(f"migration file {path.name!r} is not named NNNN_name.sql")
        version = int(match.group(1))
        if version in found:
            raise ValueError(f"two migrations numbered {version}")
        found[version] = Migration(version, match.group(2), path.read_text(encoding="utf-8"))
    return [found[v] for v in sorted(found)]


_CREATE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    integer PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)
"""


async def applied(conn: psycopg.AsyncConnection[object]) -> list[int]:
    """The versions already applied (the table is created when missing)."""
    async with conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
        await conn.execute(_CREATE)
        cur = await conn.execute("SELECT version FROM schema_migrations ORDER BY version")
        return [int(row[0]) for row in await cur.fetchall()]  # type: ignore[index]


async def migrate(conn: psycopg.AsyncConnection[object], folder: Path = MIGRATIONS) -> list[int]:
    """Apply the missing migrations of ``folder``; the versions this call applied."""
    done: list[int] = []
    for migration in available(folder):
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
            await conn.execute(_CREATE)
            cur = await conn.execute(
                "SELECT 1 FROM schema_migrations WHERE version = %s", (migration.version,)
            )
            if await cur.fetchone() is not None:
                continue
            await conn.execute(migration.sql.encode())
            await conn.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                (migration.version, migration.name),
            )
            done.append(migration.version)
    return done
