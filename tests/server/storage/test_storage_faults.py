"""The storage boundary: every fault of the storage or the network becomes the one retryable
``StorageUnavailableError``; a bug of our own stays what it is (then ``internal_error``)."""

from __future__ import annotations

import pytest
import redis.exceptions as rex
from redis.asyncio.connection import Connection

from server.storage.interface import (
    TRANSIENT_ERRORS,
    StorageUnavailableError,
    fault_boundary,
    is_storage_fault,
)


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
