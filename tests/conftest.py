"""Shared fixtures: a real Redis-compatible server for the whole session.

``redis_server_url`` is ``REDIS_URL`` when that is set, otherwise the URL of a private embedded
server (``server.ops.embedded_redis``) started once per session and stopped at the end.

Isolation between tests is by key prefix, not by database: every test gets its own
``redis_prefix`` (``t<random>:``), which the server honours through the ``REDIS_PREFIX`` setting
for all its keys and pub/sub channels. This works with server subprocesses sharing the URL, with
Redis Cluster (one database only) and with a shared external ``REDIS_URL`` (nothing else is
flushed); the test's keys are deleted when it ends.

Tests that must also hold on Redis Cluster take the ``redis_backend`` parameter (see
``procs.BOTH_BACKENDS``): with ``"cluster"``, ``redis_url`` is a node of a private embedded
cluster (``server.ops.embedded_cluster``: 3 masters with one replica each), started once per
session when first needed, and server processes get ``REDIS_CLUSTER=1``.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from procs import async_client

from server.ops.embedded_cluster import EmbeddedCluster
from server.ops.embedded_redis import EmbeddedRedis, EmbeddedRedisError, find_server_binary
from server.solver import SolverRules, Table, table_for


def pytest_report_header() -> str:
    """Say which Redis-compatible server the tests use (CI runs without one on PATH)."""
    if os.environ.get("REDIS_URL"):
        return "redis: REDIS_URL (an external server)"
    try:
        return f"redis: embedded, {find_server_binary()}"
    except EmbeddedRedisError as error:
        return f"redis: none found: {error}"


@pytest.fixture(scope="session")
def redis_server_url() -> Iterator[str]:
    """URL of a real Redis-compatible server shared by the session."""
    url = os.environ.get("REDIS_URL")
    if url:
        yield url
        return
    with EmbeddedRedis() as server:
        yield server.url


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[EmbeddedCluster]:
    """A private 3-master Redis Cluster (one replica each), shared by the session."""
    with EmbeddedCluster() as cluster:
        yield cluster


@pytest.fixture
def redis_backend(request: pytest.FixtureRequest) -> str:
    """``"single"`` (default) or ``"cluster"`` when a test is parametrized indirectly."""
    backend: str = getattr(request, "param", "single")
    return backend


@pytest.fixture
def redis_url(request: pytest.FixtureRequest, redis_backend: str) -> str:
    """The Redis URL for this test (use with ``redis_prefix`` for isolation)."""
    if redis_backend == "cluster":
        cluster: EmbeddedCluster = request.getfixturevalue("redis_cluster")
        return cluster.url
    url: str = request.getfixturevalue("redis_server_url")
    return url


def delete_prefixed(urls: list[str], prefix: str) -> None:
    """Delete the keys under ``prefix`` on every server in ``urls`` (one key per command, so
    it works on the masters of a cluster too)."""
    for url in urls:
        client = redis.Redis.from_url(url)
        try:
            pipe = client.pipeline(transaction=False)
            for key in client.scan_iter(match=f"{prefix}*", count=1000):
                pipe.delete(key)
            pipe.execute()
        except redis.ConnectionError:
            pass  # a node a test killed
        finally:
            client.close()


@pytest.fixture
def redis_prefix(request: pytest.FixtureRequest, redis_backend: str) -> Iterator[str]:
    """A key prefix private to this test; its keys are removed afterwards."""
    prefix = f"t{secrets.token_hex(6)}:"
    yield prefix
    if redis_backend == "cluster":
        cluster: EmbeddedCluster = request.getfixturevalue("redis_cluster")
        urls = [f"redis://{n.name}/0" for n in cluster.nodes if n.alive]
    else:
        urls = [request.getfixturevalue("redis_server_url")]
    delete_prefixed(urls, prefix)


@pytest.fixture
async def redis_client(redis_url: str, redis_backend: str) -> AsyncIterator[Any]:
    """An asyncio client to this test's server (bytes responses)."""
    client = async_client(redis_url, redis_backend)
    try:
        yield client
    finally:
        await client.aclose()


@pytest.fixture(scope="session", autouse=True)
def solver_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The strategy tables of this session: servers the tests start keep their tables here
    (never in the user's cache) and load none at startup unless a test asks for one."""
    path = tmp_path_factory.mktemp("solver-cache")
    patch = pytest.MonkeyPatch()
    patch.setenv("YAHTZEE_SOLVER_CACHE", str(path))
    patch.setenv("YAHTZEE_PRELOAD_TABLES", "none")
    yield path
    patch.undo()


@pytest.fixture(scope="session")
def official_table(solver_cache: Path) -> Table:
    """The full table of the official rules, built once per session into ``solver_cache``
    (servers started afterwards load it from there in milliseconds)."""
    return table_for(SolverRules(), solver_cache)


@pytest.fixture(scope="session", autouse=True)
def no_database_by_default() -> Iterator[None]:
    """Servers the tests start keep no archive unless a test gives them a DATABASE_URL (the
    tests of tests/players do, on their own PostgreSQL): no embedded PostgreSQL per server."""
    patch = pytest.MonkeyPatch()
    patch.setenv("YAHTZEE_DATABASE", "off")
    patch.delenv("DATABASE_URL", raising=False)
    yield
    patch.undo()
