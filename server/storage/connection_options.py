"""Options every Redis client of the service is made with (the storage's clients and the feed's
pub/sub clients alike)."""

from __future__ import annotations

from typing import Any

from redis.driver_info import DriverInfo
from redis.maint_notifications import MaintNotificationsConfig

__all__ = ["CLIENT_OPTIONS"]

#: redis-py 8 speaks RESP3 and, by default, asks every new connection for maintenance
#: notifications (``CLIENT MAINT_NOTIFICATIONS``, a Redis Enterprise and Cloud feature: Valkey
#: and open-source Redis answer "unknown subcommand"). That is one more round trip in every
#: handshake for nothing, and in a chaos soak (Redis frozen and restarted) the reply of that
#: step came back where a later handshake expected its ``HELLO`` reply. Turned off.
#:
#: Every new connection tells its library and version (``CLIENT SETINFO``). Left to itself,
#: redis-py reads and parses the installed package's metadata for it at each connection
#: (about a millisecond of the loop's time): a pool grows to its peak concurrency, and after a
#: Redis restart every connection is new at once. Read once, here.
CLIENT_OPTIONS: dict[str, Any] = {
    "maint_notifications_config": MaintNotificationsConfig(enabled=False),
    "driver_info": DriverInfo(),
}
