"""The Redis store and its transition script against the real Redis fixture."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions as rex
from procs import BOTH_BACKENDS
from redis.asyncio.cluster import RedisCluster

from server.storage.lobby_index import FULL_READ_MS
from server.storage.redis_store import Committed, Conflict, Duplicate, RedisStore, Transition

pytestmark = BOTH_BACKENDS  # every command must stay within one slot on a cluster


def store_for(client: aioredis.Redis, prefix: str) -> RedisStore:
    return RedisStore(client, prefix, buckets=4)


async def test_create_commit_and_conflict_returns_the_fresh_record(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    create = Transition(0, b"rec-0", 60)
    created = await store.commit("r1", create)
    assert created == Committed(create.new_version, 1, 0)
    move = Transition(create.new_version, b"rec-1", 60, events=[b"e1", b"e2"])
    moved = await store.commit("r1", move)
    assert moved == Committed(move.new_version, 1, 2)
    assert move.new_version != create.new_version  # random, not counted: see new_version
    stale = await store.commit("r1", Transition(create.new_version, b"never", 60, events=[b"x"]))
    assert isinstance(stale, Conflict)
    assert stale.current is not None
    current = (stale.current.version, stale.current.seq, stale.current.record)
    assert current == (move.new_version, 2, b"rec-1")
    assert await store.read_events("r1", 0) == [(1, b"e1"), (2, b"e2")]
    assert await store.read_events("r1", 1) == [(2, b"e2")]


async def test_a_second_create_of_one_id_conflicts(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    assert isinstance(await store.commit("r2", Transition(0, b"a", 60)), Committed)
    again = await store.commit("r2", Transition(0, b"b", 60))
    assert isinstance(again, Conflict)
    assert again.current is not None
    assert again.current.record == b"a"


async def test_racing_writers_exactly_one_wins(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    create = Transition(0, b"r", 60)
    await store.commit("r3", create)
    version = create.new_version
    results = await asyncio.gather(
        *(store.commit("r3", Transition(version, b"w", 60, events=[b"e"])) for _ in range(20))
    )
    assert sum(isinstance(r, Committed) for r in results) == 1
    assert len(await store.read_events("r3", 0)) == 1


async def test_a_cached_command_is_answered_from_the_cache_even_after_the_room_moved(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    create = Transition(0, b"r", 60)
    await store.commit("r4", create)
    first = Transition(
        create.new_version, b"r1", 60, events=[b"e"], cache_field="p:1", cache_value=b"{}"
    )
    assert isinstance(await store.commit("r4", first), Committed)
    second = Transition(first.new_version, b"r2", 60, events=[b"f"])
    await store.commit("r4", second)
    retry = Transition(second.new_version, b"r3", 60, events=[b"g"], cache_field="p:1")
    again = await store.commit("r4", retry)
    assert again == Duplicate(1, b"{}")
    assert await store.cached_result("r4", "p:1") == Duplicate(1, b"{}")
    assert [seq for seq, _ in await store.read_events("r4", 0)] == [1, 2]


async def test_the_results_cache_is_capped(redis_client: aioredis.Redis, redis_prefix: str) -> None:
    store = store_for(redis_client, redis_prefix)
    t = Transition(0, b"r", 60)
    await store.commit("r5", t)
    for i in range(5):
        t = Transition(t.new_version, b"r", 60, cache_field=f"c{i}", cache_value=b"v", cache_size=3)
        assert isinstance(await store.commit("r5", t), Committed)
    assert await store.cached_result("r5", "c0") is None
    assert await store.cached_result("r5", "c4") is not None


async def test_keys_share_one_hash_tag_and_expire(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    t = Transition(
        0, b"r", 77, events=[b"e"], seats={"t:x": "p"}, cache_field="c", cache_value=b"v"
    )
    await store.commit("r6", t)
    everywhere: dict[str, Any] = {}
    if isinstance(redis_client, RedisCluster):
        everywhere["target_nodes"] = RedisCluster.PRIMARIES
    raw = await redis_client.keys(f"{redis_prefix}*r6*", **everywhere)
    keys = [k.decode() for k in raw]
    assert len(keys) == 5
    assert all("{room:r6}" in k for k in keys)
    for key in keys:
        assert 0 < await redis_client.ttl(key) <= 77


async def test_the_events_are_published_on_the_room_s_sharded_channel(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    await redis_client.ping()  # a cluster client learns the slot map
    pubsub = redis_client.pubsub()
    # a cluster's pubsub reads sharded messages with its own method
    read: Any = getattr(pubsub, "get_sharded_message", pubsub.get_message)
    await pubsub.ssubscribe(store.channel("r7"))
    try:
        confirmed = await read(timeout=5)
        assert confirmed is not None
        assert confirmed["type"] == "ssubscribe"
        await store.commit("r7", Transition(0, b"r", 60, events=[b"e"], publish=b"BATCH"))
        message = await read(timeout=5)
        assert message is not None
        assert (message["type"], message["data"]) == ("smessage", b"BATCH")
    finally:
        await pubsub.aclose()


async def test_deadlines_are_claimed_once_across_buckets(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    rooms = [f"room{i}" for i in range(12)]
    assert len({store.bucket_of(r) for r in rooms}) > 1
    for r in rooms:
        await store.set_deadline(r, 100)
    assert sorted(await store.due_deadlines(100)) == sorted(rooms)
    claims = await asyncio.gather(*(store.claim_deadline(rooms[0], 100) for _ in range(5)))
    assert claims.count(True) == 1
    await store.set_deadline(rooms[1], None)
    assert rooms[1] not in await store.due_deadlines(100)


async def test_due_deadlines_are_read_in_one_poll_at_most_limit_a_bucket(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    rooms = [f"room{i}" for i in range(40)]
    for at, room_id in enumerate(rooms):
        await store.set_deadline(room_id, 100 + at)
    due = await store.due_deadlines(10_000, limit=2)
    buckets = {store.bucket_of(r) for r in rooms}
    assert len(buckets) > 1
    assert Counter(store.bucket_of(r) for r in due) == {
        k: min(2, sum(store.bucket_of(r) == k for r in rooms)) for k in buckets
    }
    for k in buckets:  # each bucket's earliest, in order of deadline
        earliest = [r for r in rooms if store.bucket_of(r) == k][:2]  # rooms: by deadline
        assert [r for r in due if store.bucket_of(r) == k] == earliest
    assert await store.due_deadlines(99) == []
    assert sorted(await store.due_deadlines(104)) == rooms[:5]


async def test_index_lists_live_rooms_newest_first_and_prunes(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    await store.index_put("old", b'"old"', 1_000)
    await store.index_put("a", b'"a"', 5_000)
    await store.index_put("b", b'"b"', 6_000)
    assert await store.index_list(now=2_000, limit=10) == [b'"b"', b'"a"']
    assert await store.index_list(now=2_000, limit=1) == [b'"b"']


async def test_leases_expire_and_are_claimed_once(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    assert await store.lease_put("r|p|c", "r", 500) is True
    assert await store.lease_put("r|p|c", "r", 500) is False  # renewed, not new
    assert await store.expired_leases(400) == []
    assert await store.expired_leases(600) == ["r|p|c"]
    claims = await asyncio.gather(*(store.claim_lease("r|p|c", "r", 600) for _ in range(4)))
    assert claims.count(True) == 1


async def test_many_leases_renew_in_one_call_and_name_those_that_were_swept(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    # more members than one script call takes, over every bucket
    leases = [(f"r{n}|p|c", f"r{n}") for n in range(1_200)]
    assert sorted(await store.leases_put(leases, 500)) == sorted(m for m, _ in leases)
    assert await store.leases_put(leases, 900) == []  # all renewed, none new
    assert await store.expired_leases(600) == []
    assert await store.claim_lease("r7|p|c", "r7", 1_000)  # swept by a process...
    assert await store.leases_put(leases, 2_000) == ["r7|p|c"]  # ...and named when renewed
    assert await store.leases_put([], 2_000) == []


async def test_spectators_of_many_rooms_renew_together_and_each_room_has_its_count_or_error(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    # more rooms than one script call takes, and one room without connections of this process
    rooms = [f"w{n}" for n in range(450)]
    renewals = [
        (room_id, [f"{room_id}-c{i}" for i in range(n % 4)]) for n, room_id in enumerate(rooms)
    ]
    expected = [n % 4 for n in range(450)]
    # one call first: a cluster client is set up by its first command (the server's is at
    # startup), and commands racing that set-up can fail
    assert await store.spectators_renew("w0", [], 1_000, 0) == 0
    assert await store.spectators_renew_rooms(renewals, 1_000, 0) == expected
    # another process's spectator of w1, whose lease runs out at 100 (kept long in real time)
    assert await store.spectators_renew("w1", ["gone"], 100_000, -99_900) == 2
    assert await store.spectators_renew_rooms(renewals[:3], 1_000, 50) == [0, 2, 2]  # not yet
    assert await store.spectators_renew_rooms(renewals[:3], 1_000, 500) == [0, 1, 2]
    assert await redis_client.zscore(store.keys("w1").spectators, "gone") is None  # pruned
    # a room whose key holds the wrong type has its error, whether it has connections or
    # not; the rooms around it, in its call and in the others, still renew, in order
    broken = (3, 4, 301)
    for n in broken:
        await redis_client.set(store.keys(f"w{n}").spectators, "not a zset")
    replies = await store.spectators_renew_rooms(renewals, 1_000, 600)
    assert [r for n, r in enumerate(replies) if n not in broken] == [
        e for n, e in enumerate(expected) if n not in broken
    ]
    assert all(isinstance(replies[n], rex.ResponseError) for n in broken)  # a bug, not a fault
    assert await store.spectators_renew_rooms([], 1_000, 600) == []


async def test_a_room_with_thousands_of_spectators_renews_beside_the_others(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    assert await store.spectators_renew("b0", [], 1_000, 0) == 0  # (the client's set-up)
    crowd = [f"c{i}" for i in range(4_500)]  # more than a script's unpack() takes at once
    renewals = [("b1", ["x"]), ("b2", crowd), ("b3", ["y", "z"])]
    assert await store.spectators_renew_rooms(renewals, 1_000, 0) == [1, 4_500, 2]
    assert await store.spectators_renew("b2", crowd, 1_000, 10) == 4_500


async def test_renewing_spectators_after_a_flush_loads_the_script_again(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    await store.spectators_renew_rooms([("x1", ["a"])], 1_000, 0)
    await redis_client.script_flush()  # as a restarted Redis would have (every master)
    renewals = [("x1", ["a", "b"]), ("x2", ["c"])]
    assert await store.spectators_renew_rooms(renewals, 1_000, 0) == [2, 1]


async def test_a_create_key_reserves_once(redis_client: aioredis.Redis, redis_prefix: str) -> None:
    store = store_for(redis_client, redis_prefix)
    assert await store.reserve_create_key("k", b"first") is None
    assert await store.reserve_create_key("k", b"second") == b"first"


async def test_a_commit_writes_its_changed_deadline_on_a_single_redis_only(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    cluster = isinstance(redis_client, RedisCluster)
    assert store.commits_deadlines is not cluster  # another slot than the room's on a Cluster
    create = Transition(0, b"r", 60, deadline_changed=True, deadline_ms=500)
    await store.commit("dl", create)
    expected = [] if cluster else ["dl"]
    assert await store.due_deadlines(500) == expected
    stale = Transition(0, b"x", 60, deadline_changed=True, deadline_ms=None)
    assert isinstance(await store.commit("dl", stale), Conflict)
    assert await store.due_deadlines(500) == expected  # a conflict writes nothing
    unchanged = Transition(create.new_version, b"r2", 60, deadline_ms=100)
    await store.commit("dl", unchanged)
    assert await store.due_deadlines(100) == []  # not changed: not written
    cleared = Transition(unchanged.new_version, b"r3", 60, deadline_changed=True)
    await store.commit("dl", cleared)
    assert await store.due_deadlines(10_000) == []


def reads_of(store: RedisStore) -> list[list[tuple[str, tuple[Any, ...]]]]:
    """Record every round trip of the store's lobby copy: (command, args) of each call."""
    trips: list[list[tuple[str, tuple[Any, ...]]]] = []
    batch = store._lobby._batch

    async def recording(calls: list[Any]) -> list[Any]:
        trips.append([(name, args) for name, args, _ in calls])
        return await batch(calls)

    store._lobby._batch = recording
    return trips


def rooms_read(trip: list[tuple[str, tuple[Any, ...]]]) -> set[bytes]:
    return {room for name, args in trip if name == "hmget" for room in args[1]}


async def test_a_process_reads_only_the_lobby_entries_changed_since_its_last_read(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    reader, writer = store_for(redis_client, redis_prefix), store_for(redis_client, redis_prefix)
    for n in range(20):
        await writer.index_put(f"r{n}", b'"%d"' % n, 10_000 + n)
    trips = reads_of(reader)
    assert len(await reader.index_list(now=1_000, limit=100)) == 20
    assert [name for name, _ in trips[-1]] == ["zrangebyscore", "hgetall"] * 4  # first: whole
    await writer.index_put("r3", b'"3 changed"', 20_000)
    await writer.index_put("new", b'"new"', 15_000)
    listed = await reader.index_list(now=2_000, limit=3)
    assert listed == [b'"3 changed"', b'"new"', b'"19"']
    assert rooms_read(trips[-1]) == {b"r3", b"new"}  # only what changed
    assert await reader.index_list(now=2_500, limit=3) == listed
    assert rooms_read(trips[-1]) == set()  # nothing changed: no summary read


async def test_expired_lobby_entries_leave_every_copy_and_redis(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    reader, other = store_for(redis_client, redis_prefix), store_for(redis_client, redis_prefix)
    await reader.index_put("short", b'"short"', 5_000)
    await reader.index_put("long", b'"long"', 9_000)
    assert await reader.index_list(now=1_000, limit=10) == [b'"long"', b'"short"']
    assert await other.index_list(now=6_000, limit=10) == [b'"long"']  # prunes "short"
    assert await reader.index_list(now=6_000, limit=10) == [b'"long"']  # its copy drops it too
    bucket = reader.bucket_of("short")
    for name in ("rooms", "rooms:changed"):
        assert await redis_client.zscore(reader._global(name, bucket), "short") is None
    assert await redis_client.hget(reader._global("rooms:info", bucket), "short") is None


async def test_an_entry_no_change_names_is_found_by_the_next_whole_read(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    """An entry written without a change number (a server of an earlier version) shows once
    the bucket is read whole again (FULL_READ_MS)."""
    store = store_for(redis_client, redis_prefix)
    await store.index_put("a", b'"a"', 500_000)
    assert await store.index_list(now=1_000, limit=10) == [b'"a"']
    bucket = store.bucket_of("b")
    await redis_client.zadd(store._global("rooms", bucket), {"b": 400_000})
    await redis_client.hset(store._global("rooms:info", bucket), "b", b'"b"')
    assert await store.index_list(now=2_000, limit=10) == [b'"a"']
    later = 1_000 + FULL_READ_MS
    assert await store.index_list(now=later, limit=10) == [b'"a"', b'"b"']


async def test_a_lobby_read_that_fails_halfway_reads_the_same_changes_again(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    store = store_for(redis_client, redis_prefix)
    await store.index_put("a", b'"a"', 500_000)
    assert await store.index_list(now=1_000, limit=10) == [b'"a"']
    await store.index_put("a", b'"a2"', 600_000)
    batch = store._lobby._batch
    trips = 0

    async def second_trip_fails(calls: list[Any]) -> list[Any]:
        nonlocal trips
        trips += 1
        replies = await batch(calls)
        if trips == 2:
            return [rex.ConnectionError("lost") for _ in replies]
        return replies

    store._lobby._batch = second_trip_fails
    assert await store.index_list(now=2_000, limit=10) == [b'"a"']  # the copy it had
    store._lobby._batch = batch
    assert await store.index_list(now=3_000, limit=10) == [b'"a2"']


async def test_a_write_during_a_whole_lobby_read_is_read_again_after_it(
    redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    """The change counter is read a round trip before the entries: a write in between is in
    the entries read, and, numbered after the counter read, is read again the next time."""
    reader, writer = store_for(redis_client, redis_prefix), store_for(redis_client, redis_prefix)
    await writer.index_put("a", b'"a"', 500_000)
    batch = reader._lobby._batch
    trips: list[list[str]] = []

    async def write_between_trips(calls: list[Any]) -> list[Any]:
        trips.append([name for name, _, _ in calls])
        if len(trips) == 2:
            await writer.index_put("a", b'"a2"', 600_000)
        return await batch(calls)

    reader._lobby._batch = write_between_trips
    assert await reader.index_list(now=1_000, limit=10) == [b'"a2"']
    assert await reader.index_list(now=2_000, limit=10) == [b'"a2"']
    assert "hmget" in trips[-1]  # "a" changed after the counter was read: read once more
    assert await reader.index_list(now=3_000, limit=10) == [b'"a2"']
    assert "hmget" not in trips[-1]
