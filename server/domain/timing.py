"""The server's clock: wall-clock milliseconds, the time of deadlines, leases and
``server_time_ms`` (pure layers take ``now`` as an argument instead)."""

from __future__ import annotations

import time

__all__ = ["now_ms"]


def now_ms() -> int:
    """Milliseconds since the Unix epoch."""
    return int(time.time() * 1000)
