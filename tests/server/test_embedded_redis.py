"""The Redis fixture and ``server.embedded_redis`` give a real Redis-compatible server."""

from __future__ import annotations

import socket

import pytest
import redis
import redis.asyncio as aioredis

from server import embedded_redis
from server.embedded_redis import EmbeddedRedis, EmbeddedRedisError


async def test_fixture_server_runs_lua_and_streams(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    key = f"{redis_prefix}counter"
    script = "redis.call('SET', KEYS[1], ARGV[1]); return redis.call('INCRBY', KEYS[1], 41)"
    assert await redis_client.eval(script, 1, key, "1") == 42  # type: ignore[misc]

    stream = f"{redis_prefix}stream"
    for seq in (1, 2, 3):
        await redis_client.xadd(stream, {"n": str(seq)}, id=f"0-{seq}")
    entries = await redis_client.xrange(stream, min="0-2", max="+")
    assert [(eid, fields[b"n"]) for eid, fields in entries] == [(b"0-2", b"2"), (b"0-3", b"3")]


def test_prefix_is_private(redis_prefix: str, redis_server_url: str) -> None:
    client = redis.Redis.from_url(redis_server_url)
    try:
        assert list(client.scan_iter(match=f"{redis_prefix}*")) == []
    finally:
        client.close()


def test_embedded_server_starts_answers_and_stops() -> None:
    server = EmbeddedRedis()
    with server:
        assert server.port is not None
        port = server.port
        client = redis.Redis.from_url(server.url)
        try:
            assert client.ping()
            # no persistence configured
            assert client.config_get("save")["save"] == ""
            assert client.config_get("appendonly")["appendonly"] == "no"
        finally:
            client.close()
    with (
        pytest.raises(ConnectionRefusedError),
        socket.create_connection(("127.0.0.1", port), timeout=1),
    ):
        pass
    server.stop()  # idempotent


def test_missing_binary_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(embedded_redis.BINARY_ENV, raising=False)
    monkeypatch.setattr(embedded_redis, "_wheel_binary", lambda: None)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(EmbeddedRedisError, match="REDIS_URL"):
        embedded_redis.find_server_binary()


def test_explicit_binary_must_be_executable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embedded_redis.BINARY_ENV, "/nonexistent/valkey-server")
    with pytest.raises(EmbeddedRedisError, match="not an executable"):
        embedded_redis.find_server_binary()


def test_server_that_fails_to_start_reports_its_log(tmp_path: object) -> None:
    server = EmbeddedRedis(binary="/bin/false")
    with pytest.raises(EmbeddedRedisError, match="did not start"):
        server.start()
