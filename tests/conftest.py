"""Shared fixtures: a real Redis-compatible server for the whole session.

``redis_server_url`` is ``REDIS_URL`` when that is set, otherwise the URL of a private embedded
server (``server.embedded_redis``) started once per session and stopped at the end.

Isolation between tests is by key prefix, not by database: every test gets its own
``redis_prefix`` (``t<random>:``), which the server honours through the ``REDIS_PREFIX`` setting
for all its keys and pub/sub channels. This works with server subprocesses sharing the URL, with
Redis Cluster (one database only) and with a shared external ``REDIS_URL`` (nothing else is
flushed); the test's keys are deleted when it ends.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator, Iterator

import pytest
import redis
import redis.asyncio as aioredis

from server.embedded_redis import EmbeddedRedis, EmbeddedRedisError, find_server_binary


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


@pytest.fixture
def redis_prefix(redis_server_url: str) -> Iterator[str]:
    """A key prefix private to this test; its keys are removed afterwards."""
    prefix = f"t{secrets.token_hex(6)}:"
    yield prefix
    client = redis.Redis.from_url(redis_server_url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
        for start in range(0, len(keys), 500):
            client.delete(*keys[start : start + 500])
    finally:
        client.close()


@pytest.fixture
def redis_url(redis_server_url: str) -> str:
    """The Redis URL for this test (use with ``redis_prefix`` for isolation)."""
    return redis_server_url


@pytest.fixture
async def redis_client(redis_server_url: str) -> AsyncIterator[aioredis.Redis]:
    """An asyncio client to the session server (bytes responses)."""
    client = aioredis.Redis.from_url(redis_server_url)
    try:
        yield client
    finally:
        await client.aclose()
