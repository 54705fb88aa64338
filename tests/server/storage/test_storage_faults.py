"""The storage boundary: every fault of the storage or the network becomes the one retryable
``StorageUnavailableError``; a bug of our own stays what it is (then ``internal_error``)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import redis.asyncio as aioredis
import redis.exceptions as rex
from redis.asyncio.connection import Connection

from server.storage.connection_options import CLIENT_OPTIONS
from server.storage.interface import (
    TRANSIENT_ERRORS,
    StorageUnavailableError,
    classify_fault,
    fault_boundary,
    is_storage_fault,
)
from server.storage.redis_store import RedisStore


@fault_boundary
class _FaultyStore:
    """Each method fails the way a call of the real store can."""

    async def load(self, room_id: str) -> None:
        # redis-py's own write on a connection another task disconnected under the command
        # (its writer is None): the AttributeError seen in a failover under load
        await Connection()._send_packed_command([b"*1\r\n$4\r\nPING\r\n"])

    async def index_list(self, now: int, limit: int) -> None:
        raise rex.ResponseError("LOADING Redis is loading the dataset in memory")

    async def seat_fields(self, room_id: str) -> None:
        raise rex.ClusterError("TTL exhausted.")

    async def set_deadline(self, room_id: str, at_ms: int | None) -> None:
        raise OSError(104, "Connection reset by peer")

    async def cached_result(self, room_id: str, key: str) -> None:
        raise rex.ResponseError("ERR wrong number of arguments")  # our command is wrong: a bug

    async def lease_drop(self, member: str, room_id: str) -> None:
        raise AttributeError("a bug of our own")

    async def spectator_drop(self, room_id: str, conn_id: str, now: int) -> None:
        raise rex.ConnectionError("Connection closed by server.")

    async def _private(self) -> None:
        raise OSError("not a store call: left alone")


@pytest.mark.parametrize(
    ("call", "cause"),
    [
        (lambda s: s.load("r"), AttributeError),
        (lambda s: s.index_list(0, 10), rex.ResponseError),
        (lambda s: s.seat_fields("r"), rex.ClusterError),
        (lambda s: s.set_deadline("r", None), OSError),
    ],
)
async def test_an_unclassified_fault_becomes_the_one_retryable_error(
    call: object, cause: type
) -> None:
    with pytest.raises(StorageUnavailableError) as raised:
        await call(_FaultyStore())  # type: ignore[operator]
    assert isinstance(raised.value.__cause__, cause)
    assert isinstance(raised.value, TRANSIENT_ERRORS)  # what the handlers answer `unavailable`


async def test_redis_py_s_own_retryable_errors_pass_unchanged() -> None:
    with pytest.raises(rex.ConnectionError) as raised:
        await _FaultyStore().spectator_drop("r", "c", 0)
    assert type(raised.value) is rex.ConnectionError


async def test_a_bug_is_not_called_a_fault() -> None:
    store = _FaultyStore()
    with pytest.raises(rex.ResponseError, match="wrong number"):
        await store.cached_result("r", "k")
    with pytest.raises(AttributeError, match="bug of our own"):
        await store.lease_drop("m", "r")
    with pytest.raises(OSError, match="left alone"):
        await store._private()


def test_classification_of_what_redis_py_raises() -> None:
    assert is_storage_fault(rex.MaxConnectionsError("Too many connections"))
    assert is_storage_fault(rex.BusyLoadingError("loading"))
    assert is_storage_fault(rex.ReadOnlyError("READONLY You can't write against a replica"))
    assert is_storage_fault(rex.TryAgainError("TRYAGAIN"))
    assert is_storage_fault(rex.MasterDownError("MASTERDOWN"))
    assert is_storage_fault(rex.SlotNotCoveredError("slot 7 not covered"))
    assert is_storage_fault(rex.RedisClusterException("cannot connect to the cluster"))
    assert is_storage_fault(TimeoutError())
    assert not is_storage_fault(rex.NoScriptError("NOSCRIPT"))  # the pipe handles it itself
    assert not is_storage_fault(rex.DataError("cannot send a float"))
    assert not is_storage_fault(RuntimeError("raised here, in the test: not the transport"))


# -- a server whose replies came out of step with the handshake ---------------------------------

_STALE = b"-ERR unknown subcommand 'MAINT_NOTIFICATIONS'. Try CLIENT HELP.\r\n"
_HELLO = b"%1\r\n+proto\r\n:3\r\n"
received: list[bytes] = []


async def _read_command(reader: asyncio.StreamReader) -> list[bytes]:
    count = int((await reader.readline())[1:])
    words = []
    for _ in range(count):
        size = int((await reader.readline())[1:])
        words.append((await reader.readexactly(size + 2))[:-2])
    return words


@pytest.fixture
async def fake_redis() -> AsyncIterator[Callable[[bytes], Awaitable[str]]]:
    """Start a RESP3 server on a free port that answers ``HELLO`` with the reply given,
    ``CLIENT`` with +OK and every other command with an error reply; its URL. The first two
    words of every command it received are in :data:`received`."""
    received.clear()
    servers: list[asyncio.Server] = []

    async def start(hello_reply: bytes) -> str:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while True:
                    words = await _read_command(reader)
                    received.append(b" ".join(words[:2]).upper())
                    name = words[0].upper()
                    reply = {b"HELLO": hello_reply, b"CLIENT": b"+OK\r\n"}.get(name)
                    writer.write(reply or b"-ERR Error running script: a bug\r\n")
                    await writer.drain()
            except (asyncio.IncompleteReadError, ConnectionError, ValueError):
                writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        servers.append(server)
        return f"redis://127.0.0.1:{server.sockets[0].getsockname()[1]}/0"

    yield start
    for server in servers:
        server.close()
        await server.wait_closed()


async def test_an_error_reply_in_the_connection_handshake_is_a_fault(
    fake_redis: Callable[[bytes], Awaitable[str]],
) -> None:
    # the soak's case: a handshake's HELLO read the reply of another step; the room's state was
    # not asked for yet, so the call is retryable, not a bug
    client = aioredis.Redis.from_url(await fake_redis(_STALE), **CLIENT_OPTIONS)
    try:
        with pytest.raises(StorageUnavailableError) as raised:
            await RedisStore(client, "t:").seat_fields("room")
        assert isinstance(raised.value.__cause__, rex.ResponseError)
    finally:
        await client.aclose()


async def test_an_error_reply_to_the_command_itself_is_still_a_bug(
    fake_redis: Callable[[bytes], Awaitable[str]],
) -> None:
    client = aioredis.Redis.from_url(await fake_redis(_HELLO), **CLIENT_OPTIONS)
    try:
        with pytest.raises(rex.ResponseError, match="a bug") as raised:
            await RedisStore(client, "t:").seat_fields("room")
        assert not isinstance(raised.value, StorageUnavailableError)
    finally:
        await client.aclose()


async def test_the_service_s_clients_never_ask_for_maintenance_notifications(
    fake_redis: Callable[[bytes], Awaitable[str]],
) -> None:
    from server.app import redis_client
    from server.fanout.pubsub import SingleNode
    from server.settings import Settings

    url = await fake_redis(_HELLO)
    for client in (redis_client(url, Settings()), SingleNode(url).client("redis")):
        try:
            with pytest.raises(rex.ResponseError):
                await client.get("x")
        finally:
            await client.aclose()
    assert received.count(b"HELLO 3") == 2  # both connected: RESP3, as before
    assert b"GET X" in received
    assert not [c for c in received if c.startswith(b"CLIENT MAINT")]


async def test_new_connections_tell_the_library_version_without_reading_package_metadata(
    redis_url: str, redis_backend: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pool's new connections (many at once after a Redis restart) set their library
    name and version from the one ``DriverInfo`` of ``CLIENT_OPTIONS``: redis-py would read
    the installed package's metadata again for each."""
    import redis
    import redis.utils

    from server.app import redis_client
    from server.settings import Settings

    read: list[str] = []

    def counted() -> str | None:
        read.append("metadata")
        return None

    monkeypatch.setattr(redis.utils, "get_lib_version", counted)
    client = redis_client(redis_url, Settings(redis_cluster=redis_backend == "cluster"))
    try:
        infos = await asyncio.gather(*(client.client_info() for _ in range(4)))
    finally:
        await client.aclose()
    assert read == []
    assert {(i["lib-name"], i["lib-ver"]) for i in infos} == {("redis-py", redis.__version__)}
    assert len({i["id"] for i in infos}) > 1  # several new connections, not one reused


def test_a_batch_s_errors_are_classified_one_by_one_as_a_store_call_raises_them() -> None:
    """A store method that returns its rooms' errors (a batch) classifies each as a store call
    would raise it: a fault as ``unavailable`` with the fault as its cause, a bug unchanged."""
    fault = OSError(104, "Connection reset by peer")
    classified = classify_fault(fault)
    assert isinstance(classified, StorageUnavailableError)
    assert classified.__cause__ is fault  # the log line names what failed
    bug = rex.ResponseError("WRONGTYPE the spectators key of a room holds a string")
    assert classify_fault(bug) is bug
    retryable = rex.ConnectionError("Connection closed by server.")
    assert classify_fault(retryable) is retryable  # retryable as it is
