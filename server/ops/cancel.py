"""Cancellation that a library hid inside another exception, or lost."""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import Any

__all__ = ["RECANCEL_SECONDS", "cancel_and_wait", "raise_if_cancelling"]

RECANCEL_SECONDS = 0.1
"""How often :func:`cancel_and_wait` cancels again a task that outlived its cancellation."""


def raise_if_cancelling() -> None:
    """Re-raise a cancellation that a library turned into another exception (redis-py may
    turn the ``CancelledError`` thrown into a command into a connection error), so a loop that
    catches those errors does not swallow its own cancellation."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def cancel_and_wait(
    tasks: Collection[asyncio.Task[Any]], seconds: float
) -> set[asyncio.Task[Any]]:
    """Cancel ``tasks`` and wait up to ``seconds`` for them to end; the ones still
    running then are returned.

    A task that outlives its cancellation is cancelled again every :data:`RECANCEL_SECONDS`:
    a library can lose a cancellation (the timer loop did, inside a redis-py call, in about one
    shutdown in six of the in-process test servers), and a loop that survived shutdown went on
    calling Redis after the client was closed, opening connections nobody closed.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        left = deadline - loop.time()
        if left <= 0:
            break
        _, pending = await asyncio.wait(pending, timeout=min(RECANCEL_SECONDS, left))
    return pending
