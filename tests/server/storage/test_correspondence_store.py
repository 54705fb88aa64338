"""The players' turn index and the webhook outbox (``CorrespondenceStore``) on the real Redis
fixture, single and Cluster: each call stays within one slot."""

from __future__ import annotations

from typing import Any

from procs import BOTH_BACKENDS

from server.storage.correspondence import CorrespondenceStore, IndexEntry, Pending

pytestmark = BOTH_BACKENDS


async def test_the_index_follows_the_turn_and_forgets_games_that_end(
    redis_client: Any, redis_prefix: str
) -> None:
    index = CorrespondenceStore(redis_client, redis_prefix)
    await index.index("r1", [IndexEntry("uAnn", True, 5_000), IndexEntry("uBob", True)], now=10)
    await index.index("r2", [IndexEntry("uAnn", True), IndexEntry("uCy", True, 9_000)], now=20)
    assert await index.games_of("uAnn") == [("r1", 5_000), ("r2", None)]
    assert await index.games_of("uBob") == [("r1", None)]
    # the turn passes to Bob: Ann waits, Bob's deadline is set
    await index.index("r1", [IndexEntry("uAnn", True), IndexEntry("uBob", True, 7_000)], now=30)
    assert await index.games_of("uAnn") == [("r1", None), ("r2", None)]
    assert await index.games_of("uBob") == [("r1", 7_000)]
    # the game ends: gone from both lists; a room that expired is forgotten on demand
    await index.index("r1", [IndexEntry("uAnn", False), IndexEntry("uBob", False)], now=40)
    assert await index.games_of("uBob") == []
    await index.forget("uAnn", "r2")
    assert await index.games_of("uAnn") == []


async def test_a_delivery_is_queued_once_claimed_by_one_sender_and_retried(
    redis_client: Any, redis_prefix: str
) -> None:
    outbox = CorrespondenceStore(redis_client, redis_prefix)
    assert await outbox.enqueue("your_turn:r1:p1:5000", b'{"a":1}', at_ms=100)
    assert not await outbox.enqueue("your_turn:r1:p1:5000", b'{"a":2}', at_ms=50)  # the same id
    assert await outbox.due(99) == []
    assert await outbox.due(100) == ["your_turn:r1:p1:5000"]
    claimed = await outbox.claim("your_turn:r1:p1:5000", now=100, lease_ms=1_000)
    assert claimed == Pending("your_turn:r1:p1:5000", b'{"a":1}', 0)
    assert await outbox.claim("your_turn:r1:p1:5000", now=150, lease_ms=1_000) is None
    assert await outbox.due(1_099) == []  # leased: no other sender sees it
    assert await outbox.due(1_100) == ["your_turn:r1:p1:5000"]  # a dead sender's lease ran out
    await outbox.retry("your_turn:r1:p1:5000", at_ms=2_000)
    again = await outbox.claim("your_turn:r1:p1:5000", now=2_000, lease_ms=1_000)
    assert again == Pending("your_turn:r1:p1:5000", b'{"a":1}', 1)  # same body, one failure
    await outbox.done("your_turn:r1:p1:5000")
    assert await outbox.due(10**12) == []
    assert await outbox.claim("your_turn:r1:p1:5000", now=10**12, lease_ms=1) is None


async def test_a_delivery_given_up_is_kept_as_a_dead_letter(
    redis_client: Any, redis_prefix: str
) -> None:
    outbox = CorrespondenceStore(redis_client, redis_prefix)
    await outbox.enqueue("clock_running_out:r1:p1:9", b'{"b":1}', at_ms=0)
    pending = await outbox.claim("clock_running_out:r1:p1:9", now=0, lease_ms=10)
    assert pending is not None
    await outbox.give_up(pending)
    assert await outbox.due(10**12) == []
    assert await redis_client.lrange(f"{redis_prefix}{{outbox}}:dead", 0, -1) == [b'{"b":1}']
