"""Cancellation that a library hid inside another exception."""

from __future__ import annotations

import asyncio

__all__ = ["raise_if_cancelling"]


def raise_if_cancelling() -> None:
    """Re-raise a cancellation that a library turned into another exception (redis-py may
    turn the ``CancelledError`` thrown into a command into a connection error), so a loop that
    catches those errors does not swallow its own cancellation."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
