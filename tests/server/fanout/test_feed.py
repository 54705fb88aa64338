"""The per-process feed against the real Redis fixture: events from pub/sub, lost and
reordered messages, a dropped pub/sub connection, subscribers joining mid-stream."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import pytest
import redis
import redis.asyncio as aioredis
from procs import BOTH_BACKENDS, async_client, scaled

import protocol.messages as pm
from server.boundary import wire
from server.fanout import feed as feed_module
from server.fanout import pubsub as pubsub_module
from server.fanout.feed import ClusterNodes, Feed, SingleNode
from server.storage.redis_store import RedisStore, Transition


class Room:
    """Commits numbered events to one room, as another process would (a store of its own: its
    own listener id), or, with ``store``'s, as the feed's own process."""

    def __init__(self, store: RedisStore, room_id: str, *, own: bool = False) -> None:
        if not own:
            store = RedisStore(store.redis, store.prefix, store.buckets)
        self.store, self.room_id, self.seq, self.version = store, room_id, 0, 0

    async def commit(self, count: int = 1, *, publish: bool = True) -> list[wire.EncodedEvent]:
        events = [
            pm.Spectators(room=self.room_id, seq=self.seq + i + 1, count=self.seq + i + 1)
            for i in range(count)
        ]
        encoded = wire.encode_events(events)
        payload = wire.encode_batch(encoded) if publish else b""
        t = Transition(self.version, b"r", 60, events=[e.msgpack for e in encoded], publish=payload)
        await self.store.commit(self.room_id, t)
        self.seq += count
        self.version = t.new_version
        return encoded


class Sink:
    def __init__(self) -> None:
        self.seqs: list[int] = []
        self.changed = asyncio.Event()

    def __call__(self, event: wire.EncodedEvent) -> None:
        self.seqs.append(event.seq)
        self.changed.set()

    async def until(self, seq: int) -> None:
        async with asyncio.timeout(scaled(10)):
            while not self.seqs or self.seqs[-1] < seq:
                self.changed.clear()
                await self.changed.wait()


pytestmark = BOTH_BACKENDS


@pytest.fixture
async def setup(
    redis_url: str, redis_prefix: str, redis_backend: str
) -> AsyncIterator[tuple[Feed, RedisStore, aioredis.Redis]]:
    client = async_client(redis_url, redis_backend)
    store = RedisStore(client, redis_prefix)
    cluster = redis_backend == "cluster"
    feed = Feed(ClusterNodes(client, redis_url) if cluster else SingleNode(redis_url), store)
    await feed.start()
    yield feed, store, client
    await feed.stop()
    await client.aclose()


async def test_backlog_then_live_gap_free(setup: tuple[Feed, RedisStore, aioredis.Redis]) -> None:
    feed, store, _ = setup
    room = Room(store, "f1")
    await room.commit(3)
    sink = Sink()
    sub = await feed.subscribe("f1", 1, sink)
    await room.commit(2)
    await sink.until(5)
    assert sink.seqs == [2, 3, 4, 5]
    sub.close()
    assert feed.rooms() == []


async def test_a_lost_message_is_filled_from_the_log(
    setup: tuple[Feed, RedisStore, aioredis.Redis],
) -> None:
    feed, store, _ = setup
    room = Room(store, "f2")
    await room.commit(1)
    sink = Sink()
    await feed.subscribe("f2", 0, sink)
    lost = {"count": 0}

    def lose_one(room_id: str) -> bool:
        lost["count"] += 1
        return lost["count"] == 1

    feed.lose = lose_one
    await room.commit(1)  # this message is lost
    await room.commit(1)  # this one reveals the gap
    await sink.until(3)
    assert sink.seqs == [1, 2, 3]


async def test_local_events_out_of_order_and_their_echo_are_delivered_once_in_order(
    setup: tuple[Feed, RedisStore, aioredis.Redis],
) -> None:
    feed, store, _ = setup
    room = Room(store, "f3")
    sink = Sink()
    await feed.subscribe("f3", 0, sink)
    first = await room.commit(1, publish=False)
    second = await room.commit(1, publish=False)
    feed.publish_local("f3", second)  # arrives first: waits for seq 1
    feed.publish_local("f3", first)
    feed.publish_local("f3", first + second)  # the pub/sub echo: duplicates
    await sink.until(2)
    assert sink.seqs == [1, 2]


async def test_events_during_a_pubsub_outage_are_read_after_reconnecting(
    setup: tuple[Feed, RedisStore, aioredis.Redis],
) -> None:
    feed, store, client = setup
    room = Room(store, "f4")
    sink = Sink()
    await feed.subscribe("f4", 0, sink)
    await room.commit(1)
    await sink.until(1)
    await client.client_kill_filter(_type="pubsub")
    await room.commit(2)  # published while nobody listens (or lost with the connection)
    await sink.until(3)
    assert sink.seqs == [1, 2, 3]


async def test_a_new_subscriber_does_not_move_anyone_else(
    setup: tuple[Feed, RedisStore, aioredis.Redis],
) -> None:
    feed, store, _ = setup
    room = Room(store, "f5")
    early = Sink()
    await feed.subscribe("f5", 0, early)
    await room.commit(5)
    late = Sink()
    await asyncio.gather(feed.subscribe("f5", 2, late), room.commit(3))
    await room.commit(1)
    await early.until(9)
    await late.until(9)
    assert early.seqs == list(range(1, 10))
    assert late.seqs == list(range(3, 10))


async def test_many_rooms_subscribe_at_once(
    setup: tuple[Feed, RedisStore, aioredis.Redis],
) -> None:
    feed, store, _ = setup
    rooms = [Room(store, f"many{i}") for i in range(40)]
    sinks = [Sink() for _ in rooms]
    await asyncio.gather(
        *(feed.subscribe(r.room_id, 0, s) for r, s in zip(rooms, sinks, strict=True))
    )
    await asyncio.gather(*(r.commit(1) for r in rooms))
    for sink in sinks:
        await sink.until(1)
    assert all(s.seqs == [1] for s in sinks)


async def test_a_failed_subscription_is_forgotten_and_typed(
    setup: tuple[Feed, RedisStore, aioredis.Redis], monkeypatch: pytest.MonkeyPatch
) -> None:
    feed, store, _ = setup
    room = Room(store, "f6")

    async def refuse(*args: object) -> None:
        raise aioredis.ConnectionError("redis is down")

    with monkeypatch.context() as patch:
        patch.setattr(pubsub_module.ShardPubSub, "ssubscribe", refuse)
        with pytest.raises(aioredis.ConnectionError):
            await feed.subscribe("f6", 0, Sink())
    assert feed.rooms() == []
    sink = Sink()
    async with asyncio.timeout(scaled(4)):
        await feed.subscribe("f6", 0, sink)
    await room.commit(1)
    await sink.until(1)


async def test_an_unconfirmed_subscription_fails_as_a_redis_timeout(
    setup: tuple[Feed, RedisStore, aioredis.Redis], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A built-in TimeoutError became `internal_error`; a Redis timeout becomes `unavailable`.
    feed, _, _ = setup

    async def never_confirmed(*args: object) -> None:
        return None

    monkeypatch.setattr(feed_module, "_SUBSCRIBE_TIMEOUT", 0.2)
    monkeypatch.setattr(pubsub_module.ShardPubSub, "ssubscribe", never_confirmed)
    with pytest.raises(aioredis.TimeoutError):
        await feed.subscribe("f7", 0, Sink())
    assert feed.rooms() == []


async def test_a_backlog_of_messages_lets_the_loop_serve_others_between_turns(
    setup: tuple[Feed, RedisStore, aioredis.Redis], redis_url: str, redis_backend: str
) -> None:
    """Messages that piled up while the loop was busy are handled a turn of
    ``LISTENER_TURN`` at a time: the commands waiting meanwhile run between turns."""
    feed, store, _ = setup
    room = Room(store, "f9")
    sink = Sink()
    await feed.subscribe("f9", 0, sink)
    total = 4 * feed_module.LISTENER_TURN
    events = await room.commit(total, publish=False)  # in the log, not published yet
    sync = (
        redis.RedisCluster.from_url(redis_url)
        if redis_backend == "cluster"
        else redis.Redis.from_url(redis_url)
    )
    with sync:  # publishing blocks the loop: every message is waiting when it turns again
        for event in events:
            sync.spublish(store.channel("f9"), wire.encode_batch([event]))
    seen: list[int] = []

    async def watch() -> None:
        while len(sink.seqs) < total:
            seen.append(len(sink.seqs))
            await asyncio.sleep(0)  # one turn of the loop, not a wait for time
        seen.append(len(sink.seqs))

    async with asyncio.timeout(scaled(10)):
        await watch()
    assert sink.seqs == list(range(1, total + 1))
    assert max(b - a for a, b in itertools.pairwise(seen)) <= feed_module.LISTENER_TURN


class Heard:
    """Counts the messages the feed's listeners receive on each room's channel (echoes
    included: before the feed looks at them)."""

    def __init__(self, feed: Feed, monkeypatch: pytest.MonkeyPatch) -> None:
        self.channels: list[str] = []
        dispatch = feed._dispatch

        def counting(shard: pubsub_module.Shard, msg: dict[str, object]) -> None:
            if msg.get("type") in ("smessage", b"smessage"):
                channel = msg["channel"]
                self.channels.append(
                    channel.decode() if isinstance(channel, bytes) else str(channel)
                )
            dispatch(shard, msg)

        monkeypatch.setattr(feed, "_dispatch", counting)


async def test_a_commit_is_published_only_when_another_process_listens(
    setup: tuple[Feed, RedisStore, aioredis.Redis], monkeypatch: pytest.MonkeyPatch
) -> None:
    feed, store, client = setup
    listeners = store.keys("f10").listeners
    sink = Sink()
    sub = await feed.subscribe("f10", 0, sink)
    assert await client.smembers(listeners) == {store.listener_id.encode()}
    heard = Heard(feed, monkeypatch)
    own = Room(store, "f10", own=True)
    feed.publish_local("f10", await own.commit(1))  # this process's: delivered by itself
    other = Room(store, "f10")
    other.seq, other.version = own.seq, own.version
    await other.commit(1)  # another process's: published (after the first, were it published)
    await sink.until(2)
    assert sink.seqs == [1, 2]
    assert heard.channels == [store.channel("f10")]  # the other process's commit, no echo
    sub.close()
    await asyncio.gather(*feed._leaving)
    assert await client.smembers(listeners) == set()


async def test_a_subscriber_outside_the_listeners_still_hears_every_commit(
    setup: tuple[Feed, RedisStore, aioredis.Redis],
) -> None:
    """A process of an earlier version (during a rolling upgrade) subscribes without joining
    the listeners: the channel's subscriber count makes the commit publish all the same."""
    feed, store, _ = setup
    old = feed.nodes.client(await feed.nodes.node_of(store.channel("f11")))
    pubsub = old.pubsub()
    try:
        await pubsub.ssubscribe(store.channel("f11"))
        own = Room(store, "f11", own=True)
        await own.commit(1)  # nobody among the listeners
        await feed.subscribe("f11", own.seq, Sink())  # the committer listens too
        await own.commit(1)
        heard: list[int] = []
        async with asyncio.timeout(scaled(10)):
            while len(heard) < 2:
                msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if msg is not None:
                    heard += [e.seq for e in wire.decode_channel(msg["data"], None)]
        assert heard == [1, 2]
    finally:
        await pubsub.aclose()
        await old.aclose()


async def test_a_commit_whose_reply_was_lost_is_read_from_the_log(
    setup: tuple[Feed, RedisStore, aioredis.Redis],
) -> None:
    feed, store, _ = setup
    sink = Sink()
    await feed.subscribe("f12", 0, sink)
    await Room(store, "f12", own=True).commit(2)  # not published: this process listens alone
    feed.recheck("f12")
    await sink.until(2)
    assert sink.seqs == [1, 2]


async def test_a_reestablished_subscription_joins_the_listeners_again(
    setup: tuple[Feed, RedisStore, aioredis.Redis],
) -> None:
    """A failover may lose the write that made this process a listener: every re-read after a
    re-established subscription joins again before it reads the log."""
    feed, store, client = setup
    await feed.subscribe("f13", 0, Sink())
    listeners = store.keys("f13").listeners
    await client.delete(listeners)  # lost
    stream = feed._rooms["f13"]
    stream.refill_soon()  # what a second confirmation of the subscription does
    assert stream.filling is not None
    await stream.filling
    assert await client.smembers(listeners) == {store.listener_id.encode()}
