"""Stopping tasks at shutdown: a task that outlives its cancellation is cancelled again."""

from __future__ import annotations

import asyncio

from server.ops.cancel import cancel_and_wait


async def _losing(to_lose: list[int], started: asyncio.Event) -> None:
    """Waits for ever, losing cancellations (as a library can) while ``to_lose[0]`` > 0."""
    started.set()
    while True:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            if to_lose[0] == 0:
                raise
            to_lose[0] -= 1
            task = asyncio.current_task()
            assert task is not None
            task.uncancel()


async def _started(to_lose: list[int]) -> asyncio.Task[None]:
    started = asyncio.Event()
    task = asyncio.create_task(_losing(to_lose, started))
    await started.wait()
    return task


async def test_a_task_that_lost_its_cancellation_is_cancelled_again() -> None:
    to_lose = [2]
    task = await _started(to_lose)
    assert await cancel_and_wait([task], 30) == set()
    assert task.cancelled()
    assert to_lose == [0]  # it lost two, and the third ended it


async def test_a_task_that_never_ends_is_returned_once_the_time_is_up() -> None:
    to_lose = [10**9]
    task = await _started(to_lose)
    assert await cancel_and_wait([task], 0.3) == {task}
    assert not task.done()
    to_lose[0] = 0  # now it takes the next one
    task.cancel()
    await asyncio.wait([task])
    assert task.cancelled()


async def test_tasks_already_done_are_not_waited_for() -> None:
    done = asyncio.create_task(asyncio.sleep(0))
    await done
    assert await cancel_and_wait([done], 30) == set()
    assert not done.cancelled()
