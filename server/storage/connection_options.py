"""Options every Redis client of the service is made with (the storage's clients and the feed's
pub/sub clients alike)."""

from __future__ import annotations

from typing import Any

from redis.maint_notifications import MaintNotificationsConfig

__all__ = ["CLIENT_OPTIONS"]

#: redis-py 8 speaks RESP3 and, by default, asks every new connection for maintenance
#: notifications (``CLIENT MAINT_NOTIFICATIONS``, a Redis Enterprise and Cloud feature: Valkey
#: and open-source Redis answer "unknown subcommand"). That is one more round trip in every
#: handshake for nothing, and in a chaos soak (Redis frozen and restarted) the reply of that
#: step came back where a later handshake expected its ``HELLO`` reply. Turned off.
CLIENT_OPTIONS: dict[str, Any] = {
    "maint_notifications_config": MaintNotificationsConfig(enabled=False),
}
