"""The room store against the real Redis fixture."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from server.store import Committed, Conflict, RoomStore, now_ms


async def test_create_then_cas(redis_client: aioredis.Redis, redis_prefix: str) -> None:
    store = RoomStore(redis_client, redis_prefix)
    assert await store.load("r1") is None
    first = await store.commit("r1", 0, {"n": 1}, [{"t": "a"}, {"t": "b"}], ttl_seconds=60)
    assert first == Committed(version=1, first_seq=1, last_seq=2)
    loaded = await store.load("r1")
    assert loaded is not None
    assert (loaded.version, loaded.seq, loaded.record) == (1, 2, {"n": 1})

    stale = await store.commit("r1", 0, {"n": 9}, [{"t": "x"}], ttl_seconds=60)
    assert stale == Conflict(version=1, seq=2)
    second = await store.commit("r1", 1, {"n": 2}, [{"t": "c"}], ttl_seconds=60)
    assert second == Committed(version=2, first_seq=3, last_seq=3)
    assert await store.read_events("r1") == [(1, {"t": "a"}), (2, {"t": "b"}), (3, {"t": "c"})]
    assert await store.read_events("r1", after_seq=2) == [(3, {"t": "c"})]
    assert await store.first_seq("r1") == 1


async def test_all_keys_share_hash_tag_and_expire(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = RoomStore(redis_client, redis_prefix)
    await store.commit(
        "r2",
        0,
        {},
        [{"t": "a"}],
        ttl_seconds=100,
        seats={"p:1": "x"},
        cache_field="c1",
        cache_value=b"{}",
    )
    keys = store.keys("r2").all()
    assert all("{room:r2}" in k for k in keys)
    for key in keys:
        ttl = await redis_client.ttl(key)
        assert 0 < ttl <= 100, key


async def test_racing_writers_exactly_one_wins(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = RoomStore(redis_client, redis_prefix)
    await store.commit("r3", 0, {}, [], ttl_seconds=60)
    results = await asyncio.gather(
        *(store.commit("r3", 1, {"w": i}, [{"w": i}], ttl_seconds=60) for i in range(20))
    )
    assert sum(isinstance(r, Committed) for r in results) == 1
    assert len(await store.read_events("r3")) == 1


async def test_result_cache_is_capped_and_first_write_wins(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = RoomStore(redis_client, redis_prefix)
    version = 0
    for i in range(10):
        out = await store.commit(
            "r4",
            version,
            {},
            [{"i": i}],
            ttl_seconds=60,
            cache_field=f"c{i}",
            cache_value=f"v{i}",
            cache_size=3,
        )
        assert isinstance(out, Committed)
        version = out.version
    assert await store.cached_result("r4", "c0") is None
    assert await store.cached_result("r4", "c9") == (10, b"v9")
    assert await redis_client.hlen(store.keys("r4").results) == 3  # type: ignore[misc]


async def test_publishes_wakeup(redis_client: aioredis.Redis, redis_prefix: str) -> None:
    store = RoomStore(redis_client, redis_prefix)
    pubsub = redis_client.pubsub()
    await pubsub.psubscribe(store.wake_pattern)
    try:
        await store.commit("r5", 0, {}, [{"a": 1}], ttl_seconds=60)
        async with asyncio.timeout(5):
            while True:
                msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1)
                if msg is not None:
                    break
        assert store.room_of_channel(msg["channel"].decode()) == "r5"
        assert msg["data"] == b"1"
    finally:
        await pubsub.aclose()


async def test_deadline_claimed_once(redis_client: aioredis.Redis, redis_prefix: str) -> None:
    store = RoomStore(redis_client, redis_prefix)
    now = now_ms()
    await store.set_deadline("r6", now - 10)
    await store.set_deadline("r7", now + 60_000)
    assert await store.due_deadlines(now) == ["r6"]
    claims = await asyncio.gather(*(store.claim_deadline("r6", now) for _ in range(10)))
    assert claims.count(True) == 1
    assert await store.due_deadlines(now) == []
    await store.set_deadline("r6", None)
    assert await redis_client.zscore(store.deadlines_key, "r6") is None


async def test_index_prunes_expired(redis_client: aioredis.Redis, redis_prefix: str) -> None:
    store = RoomStore(redis_client, redis_prefix)
    await store.index_put("old", {"status": "lobby"}, now_ms() - 1)
    await store.index_put("new", {"status": "playing"}, now_ms() + 60_000)
    assert await store.index_list() == [("new", {"status": "playing"})]
    assert await redis_client.hkeys(store.summary_key) == [b"new"]  # type: ignore[misc]
