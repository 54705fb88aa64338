"""The quick-play queues on a real Redis and a real Redis Cluster: a player queues once, a
group is claimed whole or not at all, unrenewed tickets expire, matches reach their poll."""

from __future__ import annotations

import asyncio
from typing import Any

from procs import BOTH_BACKENDS

from server.storage.quickplay import QueueEntry, QuickPlayQueue, queue_name

pytestmark = BOTH_BACKENDS  # every script must stay within the one slot of {qp}

Q2 = queue_name("yahtzee", 2)
Q3 = queue_name("yahtzee", 3)


def entry(ticket: str, identity: str, at: int = 0, rating: float | None = None) -> QueueEntry:
    return QueueEntry(ticket=ticket, identity=identity, name=identity.title(), rating=rating,
                      enqueued_ms=at, computers=True)  # fmt: skip


async def test_a_player_queues_once_across_every_queue(
    redis_client: Any, redis_prefix: str
) -> None:
    queue = QuickPlayQueue(redis_client, redis_prefix)
    assert await queue.enqueue(Q2, entry("t1", "ann"), 0) == 1
    assert await queue.enqueue(Q2, entry("t2", "bob", at=5), 5) == 2
    assert await queue.enqueue(Q3, entry("t3", "ann"), 6) is None  # already queued
    assert await queue.cancel(Q2, "t1")
    assert not await queue.cancel(Q2, "t1")
    assert await queue.enqueue(Q3, entry("t3", "ann", at=7), 7) == 1  # free again


async def test_a_group_is_claimed_whole_or_not_at_all(redis_client: Any, redis_prefix: str) -> None:
    queue = QuickPlayQueue(redis_client, redis_prefix)
    for i, who in enumerate(["ann", "bob", "cid"]):
        await queue.enqueue(Q2, entry(f"t{i}", who, at=i), i)
    assert await queue.claim(Q2, ["t0", "t1"])
    assert not await queue.claim(Q2, ["t1", "t2"])  # t1 is taken: t2 stays queued
    assert [e.ticket for e in await queue.snapshot(Q2, 10, 60_000)] == ["t2"]
    _, news = await queue.poll(Q2, ["t0", "t2"], 10)
    assert news[0].pending
    assert news[1].position == 1


async def test_concurrent_claims_of_overlapping_groups_match_nobody_twice(
    redis_client: Any, redis_prefix: str
) -> None:
    queue = QuickPlayQueue(redis_client, redis_prefix)
    for i in range(12):
        await queue.enqueue(Q2, entry(f"t{i}", f"p{i}", at=i), i)
    groups = [[f"t{i}", f"t{(i + 1) % 12}"] for i in range(12)] * 3
    won = await asyncio.gather(*(queue.claim(Q2, g) for g in groups))
    claimed = [t for g, ok in zip(groups, won, strict=True) if ok for t in g]
    assert len(claimed) == len(set(claimed))
    left = [e.ticket for e in await queue.snapshot(Q2, 20, 60_000)]
    assert sorted(claimed + left) == sorted(f"t{i}" for i in range(12))  # none lost either


async def test_tickets_nobody_renews_expire(redis_client: Any, redis_prefix: str) -> None:
    queue = QuickPlayQueue(redis_client, redis_prefix)
    await queue.enqueue(Q2, entry("t1", "ann"), 0)
    await queue.enqueue(Q2, entry("t2", "bob"), 0)
    await queue.poll(Q2, ["t2"], 10_000)  # bob's process renews him
    assert [e.ticket for e in await queue.snapshot(Q2, 16_000, 15_000)] == ["t2"]
    _, news = await queue.poll(Q2, ["t1"], 16_000)
    assert news[0].gone
    assert await queue.enqueue(Q3, entry("t3", "ann"), 16_000) == 1  # ann may queue again


async def test_a_ticket_its_process_stopped_renewing_does_not_block_its_player(
    redis_client: Any, redis_prefix: str
) -> None:
    queue = QuickPlayQueue(redis_client, redis_prefix)
    await queue.enqueue(Q2, entry("t1", "ann"), 0, ttl_ms=15_000)
    assert await queue.enqueue(Q3, entry("t2", "ann"), 14_000, ttl_ms=15_000) is None
    assert await queue.enqueue(Q3, entry("t2", "ann"), 15_000, ttl_ms=15_000) == 1
    assert [e.ticket for e in await queue.snapshot(Q2, 15_000, 15_000)] == []  # dropped


async def test_a_delivered_match_is_read_once(redis_client: Any, redis_prefix: str) -> None:
    queue = QuickPlayQueue(redis_client, redis_prefix)
    await queue.enqueue(Q2, entry("t1", "ann"), 0)
    assert await queue.claim(Q2, ["t1"])
    await queue.deliver({"t1": b'{"room":"r-1"}'})
    size, news = await queue.poll(Q2, ["t1"], 1)
    assert size == 0
    assert news[0].match == b'{"room":"r-1"}'
    _, news = await queue.poll(Q2, ["t1"], 2)
    assert news[0].gone
