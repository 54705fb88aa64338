"""The room feed: this process's fan-out of room events to its local subscribers.

Sharded pub/sub, subscribed (``SSUBSCRIBE``) only to the rooms that have a subscriber here, so a
process hears only the rooms it serves. A room's channel lives in the room's hash slot; on a
single Redis (>= 7) there is one node, on a Redis Cluster each master serves its slots' channels.
The feed keeps one pub/sub connection (a *shard*, with its own listener task) per node it needs:
:class:`SingleNode` and :class:`ClusterNodes` only say which node owns a channel and give a
connection to it; everything else is one code path. A room's pub/sub message carries the
committed events themselves (:mod:`server.wire`): nothing is re-read or re-encoded on the way to
the sockets. Events this process commits are handed over directly (:meth:`Feed.publish_local`),
before the command's ack; their pub/sub echo is then a duplicate.

Pub/sub is at-most-once, so every room keeps the seq it delivered last: a duplicate is dropped,
an event after a gap waits while the gap is read from the room's log. Every confirmation of a
room's subscription after its first one means the subscription was re-established (redis-py
re-subscribes after a reconnect; after a failover or a slot migration the feed re-subscribes on
the slot's new master), and messages may have been lost meanwhile: the room is re-read from its
last seq to the end of its log. Each subscriber keeps its own cursor too: it first reads its
backlog from the log while live events are buffered for it, so a new subscriber never moves
anyone else's position.

Sinks must not block: the session's bounded queue closes a slow connection instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.asyncio.client import PubSub
from redis.crc import key_slot
from redis.exceptions import RedisClusterException

from server import wire
from server.store import RedisStore

__all__ = ["ClusterNodes", "Feed", "Nodes", "SingleNode", "Subscription", "raise_if_cancelling"]

log = logging.getLogger("yahtzee.feed")

Sink = Callable[[wire.EncodedEvent], None]
_READ_BATCH = 500
_SUBSCRIBE_TIMEOUT = 5.0
_RETRY_CAP = 1.0  # seconds between attempts while a node does not answer
_ERRORS = (aioredis.RedisError, RedisClusterException, OSError)


def raise_if_cancelling() -> None:
    """Re-raise a cancellation that a library turned into another exception (redis-py may
    turn the ``CancelledError`` thrown into a command into a connection error)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


# -- where a channel lives -------------------------------------------------------------------------


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
        return aioredis.Redis.from_url(self.url, decode_responses=False)

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
        return aioredis.Redis.from_url(_with_address(self.url, host, int(port)))

    async def refresh(self) -> None:
        await self.cluster.nodes_manager.initialize()


def _with_address(url: str, host: str, port: int) -> str:
    """``url`` (credentials, options) pointed at another node."""
    parts = urlsplit(url)
    userinfo, at, _ = parts.netloc.rpartition("@")
    address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    return urlunsplit(parts._replace(netloc=f"{userinfo}{at}{address}", path="/0"))


# -- subscribers and rooms -------------------------------------------------------------------------


@dataclass(eq=False)
class Subscription:
    """One subscriber of one room: delivers each event after ``cursor`` once, in order."""

    room_id: str
    cursor: int
    sink: Sink
    feed: Feed
    catching_up: bool = True
    buffer: list[wire.EncodedEvent] = field(default_factory=list)
    closed: bool = False

    def offer(self, event: wire.EncodedEvent) -> None:
        if self.closed or event.seq <= self.cursor:
            return
        if self.catching_up:
            self.buffer.append(event)
        elif event.seq == self.cursor + 1:
            self.cursor = event.seq
            self.sink(event)

    def close(self) -> None:
        """Stop delivering; the feed unsubscribes from the room when nobody is left."""
        if not self.closed:
            self.closed = True
            self.feed._unsubscribe(self)


@dataclass(eq=False)
class _Room:
    room_id: str
    channel: str
    shard: _Shard | None = None
    subs: set[Subscription] = field(default_factory=set)
    last_seq: int | None = None  # None until the first subscriber read the log
    pending: dict[int, wire.EncodedEvent] = field(default_factory=dict)
    filling: asyncio.Task[None] | None = None
    refill: bool = False  # re-read the log to its end (the subscription was re-established)
    subscribed: asyncio.Future[None] | None = None


class _PubSub(PubSub):
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
class _Shard:
    """The feed's pub/sub connection to one node, and the rooms subscribed there."""

    node: str
    client: aioredis.Redis
    pubsub: _PubSub
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


class Feed:
    """Per-process fan-out of room events; see the module docstring."""

    def __init__(
        self,
        nodes: Nodes,
        store: RedisStore,
        *,
        on_redis_error: Callable[[BaseException], None] | None = None,
        on_kick: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.nodes = nodes
        self.on_kick = on_kick
        self.on_redis_error = on_redis_error
        self._shards: dict[str, _Shard] = {}
        # redis-py's PubSub is not safe for concurrent (un)subscribe calls: the first ones
        # would each open a connection of their own
        self._subscribing = asyncio.Lock()
        self._rooms: dict[str, _Room] = {}
        self._rehoming: asyncio.Task[None] | None = None
        self._orphans: set[str] = set()  # rooms whose node dropped their subscription
        self._stopped = False
        #: A test hook: pub/sub messages for which it returns True are dropped, as if lost.
        self.lose: Callable[[str], bool] | None = None

    async def start(self) -> None:
        self._stopped = False

    async def stop(self) -> None:
        self._stopped = True
        tasks = [r.filling for r in self._rooms.values() if r.filling is not None]
        if self._rehoming is not None:
            tasks.append(self._rehoming)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        self._rooms.clear()
        shards, self._shards = list(self._shards.values()), {}
        for shard in shards:
            await shard.close()

    def subscriber_count(self) -> int:
        return sum(len(r.subs) for r in self._rooms.values())

    def rooms(self) -> list[str]:
        """The rooms this process is subscribed to."""
        return list(self._rooms)

    def nodes_in_use(self) -> dict[str, list[str]]:
        """Node name -> the rooms this process listens to there."""
        return {name: sorted(shard.rooms) for name, shard in self._shards.items()}

    # -- subscribing ----------------------------------------------------------------------------

    async def subscribe(self, room_id: str, after_seq: int, sink: Sink) -> Subscription:
        """Deliver every event with seq > ``after_seq`` to ``sink``: the backlog, then live."""
        room = self._rooms.get(room_id)
        fresh = room is None
        if room is None:
            room = self._rooms[room_id] = _Room(room_id, self.store.channel(room_id))
            room.subscribed = asyncio.get_running_loop().create_future()
        sub = Subscription(room_id, after_seq, sink, self)
        room.subs.add(sub)
        try:
            if fresh:
                await self._ssubscribe(room)
            assert room.subscribed is not None
            async with asyncio.timeout(_SUBSCRIBE_TIMEOUT):
                await asyncio.shield(room.subscribed)
            await self._catch_up(sub)
        except BaseException:
            sub.close()  # nobody else holds it to close it later
            raise
        if room.last_seq is None:
            room.last_seq = sub.cursor
            self._flush(room)
        return sub

    async def _ssubscribe(self, room: _Room) -> None:
        """Subscribe to the room's channel on the node that serves it now."""
        async with self._subscribing:
            shard = self._shard(await self.nodes.node_of(room.channel))
            room.shard = shard
            shard.rooms.add(room.room_id)
            await shard.pubsub.ssubscribe(room.channel)
        shard.pubsub.connected.set()

    def _shard(self, node: str) -> _Shard:
        shard = self._shards.get(node)
        if shard is None:
            client = self.nodes.client(node)
            shard = _Shard(node, client, _PubSub(client.connection_pool))
            shard.listener = asyncio.get_running_loop().create_task(
                self._listen(shard), name=f"feed-listener-{node}"
            )
            self._shards[node] = shard
        return shard

    async def _catch_up(self, sub: Subscription) -> None:
        """Read ``sub``'s backlog from the log, then hand it what was buffered meanwhile."""
        while True:
            batch = await self.store.read_events(sub.room_id, sub.cursor, _READ_BATCH)
            for seq, data in batch:
                if seq == sub.cursor + 1 and not sub.closed:
                    sub.cursor = seq
                    sub.sink(wire.from_log(seq, data))
            if len(batch) < _READ_BATCH:
                break
        buffered, sub.buffer = sub.buffer, []
        sub.catching_up = False
        for event in buffered:
            sub.offer(event)

    def _unsubscribe(self, sub: Subscription) -> None:
        room = self._rooms.get(sub.room_id)
        if room is None or sub not in room.subs:
            return
        room.subs.discard(sub)
        if room.subs:
            return
        del self._rooms[sub.room_id]
        if room.filling is not None:
            room.filling.cancel()
        if room.subscribed is not None and not room.subscribed.done():
            room.subscribed.cancel()
        if room.shard is not None:
            room.shard.rooms.discard(room.room_id)
            task = asyncio.get_running_loop().create_task(self._sunsubscribe(room))
            task.add_done_callback(_ignore_result)

    async def _sunsubscribe(self, room: _Room) -> None:
        async with self._subscribing:
            if room.room_id not in self._rooms and room.shard is not None:  # nobody came back
                with contextlib.suppress(*_ERRORS):
                    await room.shard.pubsub.sunsubscribe(room.channel)

    # -- delivering -----------------------------------------------------------------------------

    def publish_local(self, room_id: str, events: list[wire.EncodedEvent]) -> None:
        """Events this process just committed (delivered before the command's ack)."""
        room = self._rooms.get(room_id)
        if room is not None:
            self._receive(room, events)

    def _receive(self, room: _Room, events: list[wire.EncodedEvent]) -> None:
        for event in events:
            if room.last_seq is None or event.seq > room.last_seq:
                room.pending[event.seq] = event
        self._flush(room)

    def _flush(self, room: _Room) -> None:
        if room.last_seq is None:
            return
        while room.last_seq + 1 in room.pending:
            event = room.pending.pop(room.last_seq + 1)
            room.last_seq = event.seq
            for sub in list(room.subs):
                sub.offer(event)
        for seq in [s for s in room.pending if s <= room.last_seq]:
            del room.pending[seq]
        if (room.pending or room.refill) and room.filling is None:  # a gap: read the log
            room.filling = asyncio.get_running_loop().create_task(self._fill(room))

    def _live(self, room: _Room) -> bool:
        return self._rooms.get(room.room_id) is room

    async def _fill(self, room: _Room) -> None:
        """Read the log after the room's last seq, up to the first pending event (a gap) or,
        when ``room.refill`` is set, to its end; deliver it. Retried while Redis does not
        answer. While this runs, :meth:`_flush` starts no other reader for the room."""
        delay = 0.05
        try:
            while room.last_seq is not None and self._live(room):
                to_end = False
                if room.pending:
                    want = min(room.pending) - room.last_seq - 1
                elif room.refill:
                    # cleared before the read: a re-subscription confirmed during the read
                    # sets it again, and the log is read once more
                    room.refill, to_end, want = False, True, _READ_BATCH
                else:
                    break
                try:
                    batch = await self.store.read_events(room.room_id, room.last_seq, want)
                except _ERRORS as exc:
                    raise_if_cancelling()
                    self._redis_error(exc)
                    room.refill |= to_end
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 2.0)
                    continue
                for seq, data in batch:
                    if seq > room.last_seq:
                        room.pending[seq] = wire.from_log(seq, data)
                self._flush(room)
                if not batch and room.pending and not to_end:
                    # the gap is not in the log: the room expired
                    room.last_seq = min(room.pending) - 1
                    self._flush(room)
                elif to_end and len(batch) == want:
                    room.refill = True  # more to read
        finally:
            room.filling = None
        if (room.pending or room.refill) and self._live(room):
            self._flush(room)

    def _refill(self, room: _Room) -> None:
        """The room's subscription was re-established: read what it may have missed."""
        room.refill = True
        if room.filling is None and room.last_seq is not None:
            room.filling = asyncio.get_running_loop().create_task(self._fill(room))

    # -- the listeners --------------------------------------------------------------------------

    async def _listen(self, shard: _Shard) -> None:
        delay = 0.05
        while True:
            raise_if_cancelling()
            await shard.pubsub.connected.wait()
            try:
                msg = await shard.pubsub.get_message(timeout=5.0)
                delay = 0.05
            except Exception as exc:  # the listener must outlive anything a connection does
                raise_if_cancelling()
                if isinstance(exc, _ERRORS):
                    self._redis_error(exc)
                else:
                    log.exception("feed listener on %s", shard.node)
                # the node may be gone for good (a failover): find where its rooms live now
                self._rehome_soon()
                await asyncio.sleep(delay)
                delay = min(delay * 2, _RETRY_CAP)
                continue
            if msg is not None:
                self._dispatch(shard, msg)

    def _rehome_soon(self) -> None:
        if self._rehoming is None and not self._stopped:
            self._rehoming = asyncio.get_running_loop().create_task(self._rehome())

    async def _rehome(self) -> None:
        """Re-read the topology and move every room whose channel another node serves now to
        that node (its confirmation then refills the room); drop shards left without rooms.
        Tried again, with a growing pause, until every room is subscribed somewhere."""
        delay = 0.05
        try:
            while not self._stopped:
                try:
                    await self.nodes.refresh()
                    await self._move_rooms()
                except _ERRORS as exc:
                    raise_if_cancelling()
                    self._redis_error(exc)
                    self._orphans.update(self._rooms)  # not sure of anything: check them all
                if not self._orphans & set(self._rooms):
                    break
                await asyncio.sleep(delay)
                delay = min(delay * 2, _RETRY_CAP)
        finally:
            self._rehoming = None

    async def _move_rooms(self) -> None:
        for room in list(self._rooms.values()):
            if room.shard is None or not self._live(room):
                continue  # not subscribed yet: its subscriber handles it
            try:
                node = await self.nodes.node_of(room.channel)
            except _ERRORS:
                self._orphans.add(room.room_id)  # not served right now
                continue
            if node == room.shard.node and room.room_id not in self._orphans:
                continue
            old = room.shard
            if node != old.node:
                old.rooms.discard(room.room_id)
                old.pubsub.shard_channels.pop(room.channel.encode(), None)
                log.info("room %s: channel moved from %s to %s", room.room_id, old.node, node)
            try:
                await self._ssubscribe(room)
            except _ERRORS as exc:
                raise_if_cancelling()
                self._redis_error(exc)
                self._orphans.add(room.room_id)
                continue
            self._orphans.discard(room.room_id)
        self._orphans &= set(self._rooms)
        for name, shard in list(self._shards.items()):
            if not shard.rooms and not shard.pubsub.shard_channels:
                del self._shards[name]
                task = asyncio.get_running_loop().create_task(shard.close())
                task.add_done_callback(_ignore_result)

    def _dispatch(self, shard: _Shard, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        if isinstance(kind, bytes):
            kind = kind.decode()
        channel = msg.get("channel")
        if isinstance(channel, bytes):
            channel = channel.decode()
        room = self._rooms.get(self._room_of(str(channel)))
        if room is not None and room.shard is not shard:
            room = None  # a late message from the node the room moved away from
        if kind == "ssubscribe":
            if room is None or room.subscribed is None:
                return
            if not room.subscribed.done():
                room.subscribed.set_result(None)
            else:  # subscribed again (a reconnect): messages may have been lost meanwhile
                self._refill(room)
            return
        if kind == "sunsubscribe":
            if room is not None:  # not asked for: the slot moved to another node
                self._orphans.add(room.room_id)
                self._rehome_soon()
            return
        data = msg.get("data")
        if kind != "smessage" or not isinstance(data, bytes):
            return
        if data.startswith(b"kick "):
            if self.on_kick is not None:
                self.on_kick(data[5:].decode())
            return
        if room is None or (self.lose is not None and self.lose(room.room_id)):
            return
        try:
            events = wire.decode_batch(data)
        except Exception:  # a message we cannot read is a lost message: the log has it
            log.exception("unreadable pub/sub message on %s", channel)
            return
        self._receive(room, events)

    def _room_of(self, channel: str) -> str:
        # <prefix>{room:<id>}:events
        start = channel.find("{room:") + len("{room:")
        return channel[start : channel.rfind("}")]

    def _redis_error(self, exc: BaseException) -> None:
        log.warning("redis error in feed: %s", exc)
        if self.on_redis_error is not None:
            self.on_redis_error(exc)


def _ignore_result(task: asyncio.Task[None]) -> None:
    if not task.cancelled():
        task.exception()
