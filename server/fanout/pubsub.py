"""The feed's connections to Redis pub/sub: which node serves a channel (one node on a single
Redis, the slot's master on a Cluster) and one sharded pub/sub connection per node."""

from __future__ import annotations

import asyncio
import contextlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.crc import key_slot

from server.storage.connection_options import CLIENT_OPTIONS

__all__ = ["ClusterNodes", "Nodes", "Shard", "ShardPubSub", "SingleNode"]


class Nodes(Protocol):
    """Which node serves a sharded channel, and pub/sub connections to the nodes."""

    async def node_of(self, channel: str) -> str:
        """The name of the node serving ``channel`` (raises a Redis error if unknown now)."""
        ...

    def client(self, node: str) -> aioredis.Redis:
        """A new client for pub/sub on ``node`` (the feed closes it)."""
        ...

    async def refresh(self) -> None:
        """Re-read the topology (after a node stopped answering)."""
        ...


class SingleNode:
    """One Redis server: it serves every channel."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def node_of(self, channel: str) -> str:
        return "redis"

    def client(self, node: str) -> aioredis.Redis:
        return aioredis.Redis.from_url(self.url, decode_responses=False, **CLIENT_OPTIONS)

    async def refresh(self) -> None:
        return None


class ClusterNodes:
    """A Redis Cluster, as redis-py's ``RedisCluster`` (the service's client) sees it: a
    channel is served by the master of its slot."""

    def __init__(self, cluster: Any, url: str) -> None:
        self.cluster = cluster  # redis.asyncio.cluster.RedisCluster
        self.url = url

    async def node_of(self, channel: str) -> str:
        await self.cluster.initialize()  # a no-op unless the slot map is unknown or stale
        node = self.cluster.get_node_from_key(channel)  # SlotNotCoveredError if none
        return str(node.name)

    def client(self, node: str) -> aioredis.Redis:
        host, _, port = node.rpartition(":")
        return aioredis.Redis.from_url(_with_address(self.url, host, int(port)), **CLIENT_OPTIONS)

    async def refresh(self) -> None:
        await self.cluster.nodes_manager.initialize()


def _with_address(url: str, host: str, port: int) -> str:
    """``url`` (credentials, options) pointed at another node."""
    parts = urlsplit(url)
    userinfo, at, _ = parts.netloc.rpartition("@")
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return urlunsplit(parts._replace(netloc=f"{userinfo}{at}{address}", path="/0"))


# -- subscribers and rooms -------------------------------------------------------------------------


class ShardPubSub(PubSub):
    """redis-py's PubSub, re-subscribing one hash slot per ``SSUBSCRIBE`` after a reconnect
    (a Cluster refuses one command over channels of several slots)."""

    def __init__(self, pool: Any) -> None:
        super().__init__(pool)
        self.connected = asyncio.Event()  # set once the first subscription was sent

    async def _resubscribe_shard_channels(self) -> None:
        by_slot: defaultdict[int, list[Any]] = defaultdict(list)
        for channel in self.shard_channels:
            raw = channel if isinstance(channel, bytes) else str(channel).encode()
            by_slot[key_slot(raw)].append(channel)
        for channels in by_slot.values():
            await self.ssubscribe(*channels)


@dataclass(eq=False)
class Shard:
    """The feed's pub/sub connection to one node, and the rooms subscribed there."""

    node: str
    client: aioredis.Redis
    pubsub: ShardPubSub
    rooms: set[str] = field(default_factory=set)
    listener: asyncio.Task[None] | None = None

    async def close(self) -> None:
        if self.listener is not None:
            self.listener.cancel()
            await asyncio.wait([self.listener], timeout=5)
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()  # type: ignore[no-untyped-call]
        with contextlib.suppress(Exception):
            await self.client.aclose()
