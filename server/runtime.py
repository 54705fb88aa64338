"""What one server process holds while it runs: settings, Redis, the service and its upkeep,
the feed, metrics, and the open connections. Built by the app's lifespan, passed to handlers and
background loops; there are no module-level globals."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Protocol

from protocol.transport import CloseCode
from server.connection import TokenBucket
from server.embedded_redis import EmbeddedRedis
from server.feed import Feed
from server.metrics import Metrics
from server.seats import Seats
from server.service import GameService
from server.settings import Settings
from server.store import RedisStore
from server.upkeep import Upkeep

__all__ = ["Connected", "Runtime", "server_version"]


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
    feed: Feed
    metrics: Metrics
    embedded: EmbeddedRedis | None = None
    #: the archive and identities (server.archive.wiring.Players) when a database is set up
    players: Any = None
    version: str = field(default_factory=server_version)
    draining: bool = False
    connections: dict[str, Connected] = field(default_factory=dict)
    per_address: dict[str, int] = field(default_factory=dict)
    room_quotas: OrderedDict[str, TokenBucket] = field(default_factory=OrderedDict)
    #: the public lobby as last read (ms, index writes, rooms), see ``handlers.public_rooms``
    lobby_cache: tuple[int, int, list[Any]] | None = None

    def admit(self, address: str) -> bool:
        """Count one more long-lived connection (a WebSocket or a lobby stream) of ``address``;
        False (and nothing counted) when the address holds its maximum already."""
        held = self.per_address.get(address, 0)
        if held >= self.settings.max_connections_per_address:
            return False
        self.per_address[address] = held + 1
        return True

    def release(self, address: str) -> None:
        """The end of a connection that :meth:`admit` counted."""
        left = self.per_address.pop(address, 1) - 1
        if left > 0:
            self.per_address[address] = left

    def room_quota(self, address: str) -> TokenBucket:
        """The room-creation bucket of one client address (the 10,000 most recent kept)."""
        bucket = self.room_quotas.get(address)
        if bucket is None:
            rate = self.settings.rooms_per_minute_per_address / 60
            bucket = self.room_quotas[address] = TokenBucket(rate, 60)
            if len(self.room_quotas) > 10_000:
                self.room_quotas.popitem(last=False)
        self.room_quotas.move_to_end(address)
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
