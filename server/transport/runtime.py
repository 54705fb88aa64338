"""What one server process holds while it runs: settings, Redis, the service and its upkeep,
the feed, metrics, and the open connections. Built by the app's lifespan, passed to handlers and
background loops; there are no module-level globals."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import resource
from dataclasses import dataclass, field
from typing import Any, Protocol

from protocol.transport import CloseCode
from server.fanout.feed import Feed
from server.ops.embedded_redis import EmbeddedRedis
from server.ops.metrics import Metrics
from server.ops.retry import LRU
from server.service.correspondence import Correspondence
from server.service.facade import Rooms
from server.service.quickplay import QuickPlay
from server.service.rooms import GameService
from server.service.seats import Seats
from server.service.upkeep import Upkeep
from server.service.webhooks import WebhookSender
from server.settings import Settings
from server.storage.redis_store import RedisStore
from server.transport.connection import TokenBucket

__all__ = [
    "FD_RESERVE",
    "SERVER_FULL",
    "TOO_MANY_FROM_ADDRESS",
    "Connected",
    "Runtime",
    "connection_cap",
    "server_version",
]


#: Why :meth:`Runtime.admit` refused a connection.
SERVER_FULL = "the server is full: try again later or another server"
TOO_MANY_FROM_ADDRESS = "too many connections from this address"
#: File descriptors kept for everything but long-lived connections: health checks and other
#: short HTTP requests, Redis (beyond its pool), log files, the strategy tables' files.
FD_RESERVE = 64


def connection_cap(settings: Settings) -> int:
    """The most long-lived connections a process may hold: ``YAHTZEE_MAX_CONNECTIONS``, but
    never so many that the process runs out of file descriptors. At the descriptor limit a
    process cannot accept even ``/healthz``, and an orchestrator cannot tell it from a dead one;
    below the cap it refuses new WebSockets with 503 and keeps answering health checks."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (OSError, ValueError):  # pragma: no cover - no such limit on this platform
        return settings.max_connections
    if soft == resource.RLIM_INFINITY:
        return settings.max_connections
    spare = soft - FD_RESERVE - settings.redis_max_connections
    return max(1, min(settings.max_connections, spare))


def server_version() -> str:
    try:
        return importlib.metadata.version("yahtzee-service")
    except importlib.metadata.PackageNotFoundError:
        return "0.1.0+source"


class Connected(Protocol):
    """An open connection, as the runtime sees it."""

    conn_id: str

    @property
    def role(self) -> str | None: ...
    @property
    def room(self) -> str | None: ...
    @property
    def player(self) -> str | None: ...
    def close(self, code: int) -> None: ...
    async def drain(self) -> None: ...


@dataclass(eq=False)
class Runtime:
    settings: Settings
    redis: Any
    redis_url: str
    store: RedisStore
    service: GameService
    seats: Seats
    upkeep: Upkeep
    #: the narrow face of service, seats and upkeep that the command handlers see
    rooms: Rooms
    feed: Feed
    metrics: Metrics
    #: the quick-play queues as this process serves them
    quickplay: QuickPlay
    embedded: EmbeddedRedis | None = None
    #: the archive and identities (server.players.Players) when a database is set up
    players: Any = None
    #: correspondence rooms' player index and reminders (server.service.correspondence)
    correspondence: Correspondence | None = None
    #: the reminder webhook's sender, when ``YAHTZEE_WEBHOOK_URL`` is set
    webhooks: WebhookSender | None = None
    version: str = field(default_factory=server_version)
    draining: bool = False
    connections: dict[str, Connected] = field(default_factory=dict)
    per_address: dict[str, int] = field(default_factory=dict)
    room_quotas: LRU[str, TokenBucket] = field(default_factory=lambda: LRU(10_000))
    #: the public lobby as last read (ms, index writes, rooms), see ``listing.public_rooms``
    lobby_cache: tuple[int, int, list[Any]] | None = None
    #: the lobby entries of the last read, decoded (raw entry -> summary and ghost_at, or None
    #: for a private room), see ``listing.public_rooms``
    lobby_entries: dict[bytes, Any] = field(default_factory=dict)
    #: long-lived connections this process holds (:meth:`admit`), and the most it may hold
    open_connections: int = 0
    connection_cap: int = field(init=False)

    def __post_init__(self) -> None:
        self.connection_cap = connection_cap(self.settings)

    def admit(self, address: str) -> str | None:
        """Count one more long-lived connection (a WebSocket or a lobby stream) of ``address``;
        None when admitted, else why not (nothing counted): the process holds
        :attr:`connection_cap` connections already (:data:`SERVER_FULL`), or the address its
        maximum (:data:`TOO_MANY_FROM_ADDRESS`)."""
        if self.open_connections >= self.connection_cap:
            self.metrics.refused.labels("server_full").inc()
            return SERVER_FULL
        held = self.per_address.get(address, 0)
        if held >= self.settings.max_connections_per_address:
            self.metrics.refused.labels("per_address").inc()
            return TOO_MANY_FROM_ADDRESS
        self.per_address[address] = held + 1
        self.open_connections += 1
        return None

    def release(self, address: str) -> None:
        """The end of a connection that :meth:`admit` counted."""
        left = self.per_address.pop(address, 1) - 1
        if left > 0:
            self.per_address[address] = left
        self.open_connections -= 1

    def room_quota(self, address: str) -> TokenBucket:
        """The room-creation bucket of one client address (the 10,000 most recent kept)."""
        bucket = self.room_quotas.touch(address)
        if bucket is None:
            rate = self.settings.rooms_per_minute_per_address / 60
            bucket = TokenBucket(rate, 60)
            self.room_quotas.put(address, bucket)
        return bucket

    @property
    def player_lease_ms(self) -> int:
        return max(1, int(self.settings.player_lease_seconds * 1000))

    @property
    def spectator_lease_ms(self) -> int:
        return self.player_lease_ms

    def kick_local(self, conn_id: str) -> None:
        """Close this process's connection ``conn_id`` (if any) with 1000: its seat was taken
        back by another connection."""
        connection = self.connections.get(conn_id)
        if connection is not None:
            connection.close(CloseCode.NORMAL)

    async def kick(self, room_id: str, conn_id: str) -> None:
        """Close connection ``conn_id`` wherever it is."""
        self.kick_local(conn_id)
        await self.store.publish_kick(room_id, conn_id)

    async def drain(self) -> None:
        """Stop reading commands, finish those in flight, close every socket with 1012."""
        self.draining = True
        connections = list(self.connections.values())
        if connections:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.settings.shutdown_grace_seconds):
                    await asyncio.gather(*(c.drain() for c in connections))
            for c in connections:
                c.close(CloseCode.SERVICE_RESTART)
