"""The transition script's pipelined connection (single Redis): order, errors, recovery."""

from __future__ import annotations

import asyncio
import enum

import pytest
import redis.asyncio as aioredis
import redis.exceptions as rex

from server.storage.pipe import ScriptPipe, pack
from server.storage.redis_store import Committed, RedisStore, Transition

ECHO = "return {KEYS[1], ARGV[1]}"


class Level(enum.IntEnum):
    ONE = 1


class Name(enum.StrEnum):
    ANN = "ann"


def test_pack_is_resp() -> None:
    assert pack(("EVALSHA", b"ab", 1, "k", -2)) == (
        b"*5\r\n$7\r\nEVALSHA\r\n$2\r\nab\r\n$1\r\n1\r\n$1\r\nk\r\n$2\r\n-2\r\n"
    )
    assert pack((1.5,)) == b"*1\r\n$3\r\n1.5\r\n"
    # subclasses are sent as their base type's value (hiredis itself takes exact types only)
    assert pack((Level.ONE, Name.ANN, True, bytearray(b"x"))) == (
        b"*4\r\n$1\r\n1\r\n$3\r\nann\r\n$1\r\n1\r\n$1\r\nx\r\n"
    )
    for value in (None, [1], {"a": 1}):
        with pytest.raises(rex.DataError, match=type(value).__name__):
            pack(("SET", value))


async def test_concurrent_calls_get_their_own_replies_in_order(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    pipe = ScriptPipe(redis_client, redis_client.register_script(ECHO))
    keys = [f"{redis_prefix}{i}" for i in range(200)]
    replies = await asyncio.gather(*(pipe([k], [i]) for i, k in enumerate(keys)))
    assert replies == [[k.encode(), str(i).encode()] for i, k in enumerate(keys)]


async def test_a_script_error_fails_only_its_call(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    pipe = ScriptPipe(redis_client, redis_client.register_script("return redis.call(ARGV[1])"))
    ok = pipe([redis_prefix], ["PING"])
    bad = pipe([redis_prefix], ["NOSUCHCOMMAND"])
    results = await asyncio.gather(ok, bad, return_exceptions=True)
    assert results[0] == b"PONG"
    assert isinstance(results[1], rex.ResponseError)
    assert await pipe([redis_prefix], ["PING"]) == b"PONG"


async def test_a_flushed_script_is_loaded_again(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    pipe = ScriptPipe(redis_client, redis_client.register_script(ECHO))
    await redis_client.script_flush()
    assert await pipe([redis_prefix], [1]) == [redis_prefix.encode(), b"1"]


async def test_a_killed_connection_is_replaced_and_the_call_retried(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    pipe = ScriptPipe(redis_client, redis_client.register_script(ECHO))
    assert await pipe([redis_prefix], [1]) == [redis_prefix.encode(), b"1"]
    killed = await redis_client.client_kill_filter(_type="normal", skipme=True)
    assert killed >= 1
    assert await pipe([redis_prefix], [2]) == [redis_prefix.encode(), b"2"]


async def test_a_reply_that_does_not_come_times_out(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    pipe = ScriptPipe(redis_client, redis_client.register_script(ECHO))
    pipe.timeout = 0.2
    await pipe([redis_prefix], [1])
    pipe._conn._writer.write(b"*3\r\n$5\r\nBLPOP\r\n$1\r\n" + b"x\r\n$1\r\n1\r\n")  # blocks 1 s
    pipe._waiting.append((asyncio.get_running_loop().create_future(), 0.0))
    with pytest.raises(rex.TimeoutError):
        await pipe._call(b"*1\r\n$4\r\nPING\r\n")
    assert await pipe([redis_prefix], [3]) == [redis_prefix.encode(), b"3"]


async def test_the_store_commits_through_the_pipe(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = RedisStore(redis_client, redis_prefix, buckets=4)
    assert store._pipe is not None
    creates = [Transition(0, b"r", 60, events=[b"e"]) for _ in range(50)]
    results = await asyncio.gather(*(store.commit(f"p{i}", t) for i, t in enumerate(creates)))
    assert results == [Committed(t.new_version, 1, 1) for t in creates]


async def test_calls_of_one_turn_of_the_loop_go_out_in_one_write(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    pipe = ScriptPipe(redis_client, redis_client.register_script(ECHO))
    await pipe([redis_prefix], [0])  # connected
    writer = pipe._conn._writer
    writes: list[bytes] = []
    real_write = writer.write
    writer.write = lambda data: (writes.append(data), real_write(data))[1]
    replies = await asyncio.gather(*(pipe([redis_prefix], [i]) for i in range(50)))
    assert replies == [[redis_prefix.encode(), str(i).encode()] for i in range(50)]
    assert len(writes) == 1
    assert writes[0].count(b"EVALSHA") == 50


class _CountingLoads:
    """``redis_client`` as the pipe sees it, counting its ``SCRIPT LOAD`` calls."""

    def __init__(self, client: aioredis.Redis) -> None:
        self.client = client
        self.connection_pool = client.connection_pool
        self.loads = 0

    async def script_load(self, script: str) -> str:
        self.loads += 1
        result: str = await self.client.script_load(script)
        return result


async def test_a_herd_of_calls_without_the_script_loads_it_once(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    counting = _CountingLoads(redis_client)
    pipe = ScriptPipe(counting, redis_client.register_script(ECHO + " -- herd"))
    await redis_client.script_flush()
    replies = await asyncio.gather(*(pipe([redis_prefix], [i]) for i in range(200)))
    assert replies == [[redis_prefix.encode(), str(i).encode()] for i in range(200)]
    assert counting.loads == 1


async def test_replies_are_read_without_a_task_and_the_client_still_closes(
    redis_url: str, redis_prefix: str
) -> None:
    client = aioredis.from_url(redis_url)
    pipe = ScriptPipe(client, client.register_script(ECHO))
    before = asyncio.all_tasks()
    replies = await asyncio.gather(*(pipe([redis_prefix], [i]) for i in range(20)))
    assert replies == [[redis_prefix.encode(), str(i).encode()] for i in range(20)]
    assert asyncio.all_tasks() - before == set()  # no reader task: the transport hands them
    # the pipe's connection is closed with the client's, and the close is waited for
    await asyncio.wait_for(client.aclose(), timeout=10)
    assert not pipe._conn.is_connected


async def test_a_decoding_client_gets_decoded_replies_and_typed_errors(
    redis_url: str, redis_prefix: str
) -> None:
    client = aioredis.from_url(redis_url, decode_responses=True)
    try:
        pipe = ScriptPipe(client, client.register_script("return redis.call(ARGV[1], KEYS[1])"))
        assert await pipe([redis_prefix], ["EXISTS"]) == 0
        assert await pipe([redis_prefix], ["TYPE"]) == "none"  # a status reply, decoded
        with pytest.raises(rex.ResponseError, match=r"(?i)unknown"):
            await pipe([redis_prefix], ["NOSUCHCOMMAND"])
        await client.script_flush()
        assert await pipe([redis_prefix], ["EXISTS"]) == 0  # NOSCRIPT is known as such
    finally:
        await client.aclose()


async def test_bytes_that_are_not_resp_fail_the_waiting_calls_and_the_pipe_recovers(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    pipe = ScriptPipe(redis_client, redis_client.register_script(ECHO))
    await pipe([redis_prefix], [1])
    replies = pipe._replies
    assert replies is not None
    waiting = asyncio.get_running_loop().create_future()
    pipe._waiting.append((waiting, 0.0))
    replies.data_received(b"?not resp\r\n")
    with pytest.raises(rex.ConnectionError, match="invalid reply"):
        await waiting
    assert await pipe([redis_prefix], [2]) == [redis_prefix.encode(), b"2"]


async def test_the_end_of_a_replaced_connection_told_late_fails_nothing(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    pipe = ScriptPipe(redis_client, redis_client.register_script(ECHO))
    await pipe([redis_prefix], [1])
    conn = pipe._conn
    old_writer = conn._writer
    # redis-py forgets the connection before its transport has said it ended
    conn._reader = conn._writer = None
    assert await pipe([redis_prefix], [2]) == [redis_prefix.encode(), b"2"]  # connects anew
    current = pipe._replies
    old_writer.close()  # the old connection's end comes now, while the next call waits
    assert await pipe([redis_prefix], [3]) == [redis_prefix.encode(), b"3"]
    assert pipe._replies is current  # its calls were not failed (and retried on a new one)
