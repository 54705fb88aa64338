"""The feed delivers every event exactly once, in order, from the log, on wake-ups."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
import redis.asyncio as aioredis

from server.feed import Feed
from server.store import Committed, RoomStore


async def _append(store: RoomStore, room: str, version: int, n: int) -> int:
    out = await store.commit(room, version, {}, [{"n": i} for i in range(n)], ttl_seconds=60)
    assert isinstance(out, Committed)
    return out.version


class Collector:
    """A sink that records seqs and lets a test wait for a count (no sleeps)."""

    def __init__(self) -> None:
        self.seqs: list[int] = []
        self._changed = asyncio.Event()

    def __call__(self, seq: int, event: dict[str, Any]) -> None:
        self.seqs.append(seq)
        self._changed.set()

    async def wait_for(self, n: int) -> list[int]:
        async with asyncio.timeout(10):
            while len(self.seqs) < n:
                self._changed.clear()
                await self._changed.wait()
        return self.seqs


async def test_backlog_then_live_in_order(
    redis_client: aioredis.Redis, redis_prefix: str, redis_url: str
) -> None:
    store = RoomStore(redis_client, redis_prefix)
    # a second client so that pub/sub and commands use separate connections
    other = aioredis.Redis.from_url(redis_url)
    feed = Feed(RoomStore(other, redis_prefix), sweep_seconds=60)
    await feed.start()
    try:
        version = await _append(store, "f1", 0, 3)
        got_a, got_b = Collector(), Collector()
        sub_a = await feed.subscribe("f1", 0, got_a)
        sub_b = await feed.subscribe("f1", 2, got_b)
        assert got_a.seqs == [1, 2, 3]
        assert got_b.seqs == [3]
        for _ in range(5):  # live, woken only by pub/sub
            version = await _append(store, "f1", version, 2)
        assert await got_a.wait_for(13) == list(range(1, 14))
        assert await got_b.wait_for(11) == list(range(3, 14))
        sub_a.close()
        sub_b.close()
        assert feed.subscriber_count() == 0
    finally:
        await feed.stop()
        await other.aclose()


async def test_lost_wakeup_is_recovered_by_sweep(
    redis_client: aioredis.Redis, redis_prefix: str, redis_url: str
) -> None:
    store = RoomStore(redis_client, redis_prefix)
    other = aioredis.Redis.from_url(redis_url)
    # a prefix whose wake pattern never matches: pub/sub is "lost", only the sweep reads the log
    blind = RoomStore(other, redis_prefix)
    blind.wake_pattern = f"{redis_prefix}nothing:*"
    feed = Feed(blind, sweep_seconds=0.1)
    await feed.start()
    try:
        got = Collector()
        sub = await feed.subscribe("f2", 0, got)
        await _append(store, "f2", 0, 4)
        assert await got.wait_for(4) == [1, 2, 3, 4]
        sub.close()
    finally:
        await feed.stop()
        await other.aclose()


async def test_failed_subscribe_leaves_nothing_behind(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = RoomStore(redis_client, redis_prefix)
    feed = Feed(store, sweep_seconds=60)

    async def broken(*args: object, **kwargs: object) -> list[tuple[int, dict[str, Any]]]:
        raise aioredis.ConnectionError("down")

    store.read_events = broken  # type: ignore[method-assign]
    with pytest.raises(aioredis.ConnectionError):
        await feed.subscribe("f3", 0, Collector())
    assert feed.subscriber_count() == 0
    assert feed._rooms == {}  # the room's reader task was cancelled with it
