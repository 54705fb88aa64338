"""A quick-play cancel that races the process's loop (server/service/quickplay.py): the loop
must not queue again a ticket the cancel just removed (found under CPU contention: the player
stayed "queued already" until the stray ticket expired)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from server.service.quickplay import QuickPlay
from server.service.rooms import GameService
from server.service.seats import Seats
from server.storage.quickplay import QueueEntry, QuickPlayQueue, queue_name


class PausedCancel(QuickPlayQueue):
    """A queue whose ``cancel`` stops after Redis removed the ticket, until released."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.removed = asyncio.Event()
        self.release = asyncio.Event()

    async def cancel(self, queue: str, ticket: str) -> bool:
        done = await super().cancel(queue, ticket)
        self.removed.set()
        await self.release.wait()
        return done


async def test_the_loop_does_not_queue_again_a_ticket_being_cancelled(
    redis_client: Any, redis_prefix: str
) -> None:
    queue = PausedCancel(redis_client, redis_prefix)
    quick = QuickPlay(queue, cast(GameService, None), cast(Seats, None))
    news: list[object] = []
    await quick.enqueue("c1", "ann", "Ann", seats=4, rules="yahtzee", computers=False,
                        notify=news.append)  # fmt: skip
    cancelling = asyncio.create_task(quick.cancel("c1"))
    await queue.removed.wait()
    await quick.tick()  # the loop polls the ticket meanwhile: gone, and no longer to be kept
    queue.release.set()
    await cancelling
    assert not quick.is_waiting("c1")
    again = QueueEntry(ticket="t2", identity="ann", name="Ann", rating=None,
                       enqueued_ms=quick.clock(), computers=True)  # fmt: skip
    position = await queue.enqueue(queue_name("yahtzee", 2), again, quick.clock())
    assert position == 1  # not "queued already": no stray ticket was left behind
    await quick.stop()
