"""The room feed: this process's fan-out of room events to its local subscribers.

Sharded pub/sub, subscribed (``SSUBSCRIBE``) only to the rooms that have a subscriber here, so a
process hears only the rooms it serves. A room's channel lives in the room's hash slot; on a
single Redis (>= 7) there is one node, on a Redis Cluster each master serves its slots' channels.
The feed keeps one pub/sub connection (a *shard*, with its own listener task) per node it needs:
:class:`SingleNode` and :class:`ClusterNodes` only say which node owns a channel and give a
connection to it; everything else is one code path. A room's pub/sub message carries the
committed events themselves (:mod:`server.boundary.wire`): nothing is re-read or re-encoded on the
way to
the sockets. Events this process commits are handed over directly (:meth:`Feed.publish_local`),
before the command's ack; a commit publishes them only when another process listens to the room
(the room's listeners set, :meth:`~server.storage.redis_store.RedisStore.listen`, which a
process joins once subscribed and before it reads the log, and again after every
re-subscription), so with a single process nothing comes back. A commit whose reply was lost is
read from the log (:meth:`Feed.recheck`).

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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisClusterException

from server.boundary import wire
from server.fanout.pubsub import ClusterNodes, Nodes, Shard, ShardPubSub, SingleNode
from server.fanout.roomstream import READ_BATCH, RoomStream
from server.ops.cancel import raise_if_cancelling
from server.ops.retry import RetryPause
from server.storage.interface import TRANSIENT_ERRORS, StorageUnavailableError, is_storage_fault
from server.storage.redis_store import RedisStore

__all__ = ["ClusterNodes", "Feed", "Nodes", "SingleNode", "Subscription", "raise_if_cancelling"]

log = logging.getLogger("yahtzee.feed")

Sink = Callable[[wire.EncodedEvent], None]
_SUBSCRIBE_TIMEOUT = 5.0
_LEAVE_TIMEOUT = 2.0
# Seconds between attempts while a node does not answer: short, because the wait after the node
# is back is what its clients see (the issue promises recovery within 2 s; 4 attempts a second
# per process cost a down Redis nothing).

_ERRORS = (aioredis.RedisError, RedisClusterException, OSError)

LISTENER_TURN = 64
"""Pub/sub messages a listener handles before it lets the loop run other work."""


# -- where a channel lives -------------------------------------------------------------------------


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
        self._shards: dict[str, Shard] = {}
        # redis-py's PubSub is not safe for concurrent (un)subscribe calls: the first ones
        # would each open a connection of their own
        self._subscribing = asyncio.Lock()
        self._rooms: dict[str, RoomStream] = {}
        self._rehoming: asyncio.Task[None] | None = None
        self._orphans: set[str] = set()  # rooms whose node dropped their subscription
        self._leaving: set[asyncio.Task[None]] = set()  # rooms being unsubscribed
        self._stopped = False
        #: A test hook: pub/sub messages for which it returns True are dropped, as if lost.
        self.lose: Callable[[str], bool] | None = None

    async def start(self) -> None:
        self._stopped = False

    async def stop(self) -> None:
        self._stopped = True
        if self._leaving:  # a process that stops leaves the rooms' listeners (while Redis answers)
            await asyncio.wait(self._leaving, timeout=_LEAVE_TIMEOUT)
        tasks = [r.filling for r in self._rooms.values() if r.filling is not None]
        tasks += [r.joined for r in self._rooms.values() if r.joined is not None]
        tasks += self._leaving  # their Redis calls must not outlive the client
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

    def rooms(self) -> list[str]:
        """The rooms this process is subscribed to."""
        return list(self._rooms)

    # -- subscribing ----------------------------------------------------------------------------

    async def subscribe(self, room_id: str, after_seq: int, sink: Sink) -> Subscription:
        """Deliver every event with seq > ``after_seq`` to ``sink``: the backlog, then live."""
        room = self._rooms.get(room_id)
        if room is None:
            room = self._rooms[room_id] = RoomStream(room_id, self.store.channel(room_id), self)
            loop = asyncio.get_running_loop()
            room.subscribed = loop.create_future()
            room.joined = loop.create_task(self._join(room), name=f"feed-join-{room_id}")
            room.joined.add_done_callback(_ignore_result)
        sub = Subscription(room_id, after_seq, sink, self)
        room.subs.add(sub)
        try:
            assert room.joined is not None
            await asyncio.shield(room.joined)
            await self._catch_up(sub)
        except Exception as exc:
            sub.close()  # nobody else holds it to close it later
            if is_storage_fault(exc) and not isinstance(exc, TRANSIENT_ERRORS):
                raise StorageUnavailableError(f"{type(exc).__name__}: {exc}") from exc
            raise
        except BaseException:
            sub.close()
            raise
        if room.last_seq is None:
            room.last_seq = sub.cursor
            room.flush()
        return sub

    async def _join(self, room: RoomStream) -> None:
        """Subscribe to the room's channel, wait for the confirmation, then join the room's
        listeners (commits publish only to rooms another process listens to): every
        subscriber of the room waits for this before it reads the log."""
        await self._ssubscribe(room)
        assert room.subscribed is not None
        try:
            async with asyncio.timeout(_SUBSCRIBE_TIMEOUT):
                await asyncio.shield(room.subscribed)
        except TimeoutError as exc:  # a typed, retryable failure, not an internal error
            raise aioredis.TimeoutError(f"room {room.room_id}: subscription not confirmed") from exc
        await self.store.listen(room.room_id)

    async def _ssubscribe(self, room: RoomStream) -> None:
        """Subscribe to the room's channel on the node that serves it now."""
        async with self._subscribing:
            shard = self._shard(await self.nodes.node_of(room.channel))
            room.shard = shard
            shard.rooms.add(room.room_id)
            await shard.pubsub.ssubscribe(room.channel)
        shard.pubsub.connected.set()

    def _shard(self, node: str) -> Shard:
        shard = self._shards.get(node)
        if shard is None:
            client = self.nodes.client(node)
            shard = Shard(node, client, ShardPubSub(client.connection_pool))
            shard.listener = asyncio.get_running_loop().create_task(
                self._listen(shard), name=f"feed-listener-{node}"
            )
            self._shards[node] = shard
        return shard

    async def _catch_up(self, sub: Subscription) -> None:
        """Read ``sub``'s backlog from the log, then hand it what was buffered meanwhile."""
        while True:
            batch = await self.store.read_events(sub.room_id, sub.cursor, READ_BATCH)
            for seq, data in batch:
                if seq == sub.cursor + 1 and not sub.closed:
                    sub.cursor = seq
                    sub.sink(wire.from_log(seq, data))
            if len(batch) < READ_BATCH:
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
        if room.joined is not None and not room.joined.done():
            room.joined.cancel()
        if room.shard is not None:
            room.shard.rooms.discard(room.room_id)
            task = asyncio.get_running_loop().create_task(self._sunsubscribe(room))
            self._leaving.add(task)
            task.add_done_callback(self._left)

    def _left(self, task: asyncio.Task[None]) -> None:
        self._leaving.discard(task)
        _ignore_result(task)

    async def _sunsubscribe(self, room: RoomStream) -> None:
        async with self._subscribing:
            if room.room_id not in self._rooms and room.shard is not None:  # nobody came back
                with contextlib.suppress(*_ERRORS):  # a left-over id costs a publication
                    await self.store.unlisten(room.room_id)
                with contextlib.suppress(*_ERRORS):
                    await room.shard.pubsub.sunsubscribe(room.channel)

    # -- delivering -----------------------------------------------------------------------------

    def publish_local(self, room_id: str, events: list[wire.EncodedEvent]) -> None:
        """Events this process just committed (delivered before the command's ack)."""
        room = self._rooms.get(room_id)
        if room is not None:
            room.receive(events)

    def recheck(self, room_id: str) -> None:
        """A commit of this process in the room may have run without its reply arriving: its
        events were not published to this process (it delivers its own), so the room's log is
        read to its end (once Redis answers). Not when commits wait for replicas: the store
        publishes those to every process once confirmed, and the log may hold a write no
        replica confirmed (a failover could lose it: no client may see it)."""
        room = self._rooms.get(room_id)
        if room is not None and not self.store.awaits_replicas(room_id):
            room.refill_soon()

    # -- the listeners --------------------------------------------------------------------------

    async def _listen(self, shard: Shard) -> None:
        pause = RetryPause()
        handled = 0
        while True:
            raise_if_cancelling()
            await shard.pubsub.connected.wait()
            try:
                msg = await shard.pubsub.get_message(timeout=5.0)
                pause.reset()
            except Exception as exc:  # the listener must outlive anything a connection does
                raise_if_cancelling()
                if _is_redis_failure(exc):
                    self.redis_error(exc)
                else:
                    log.exception("feed listener on %s", shard.node)
                # the node may be gone for good (a failover): find where its rooms live now
                self._rehome_soon()
                await pause.wait()
                continue
            if msg is not None:
                self._dispatch(shard, msg)
                handled += 1
                if handled % LISTENER_TURN == 0:
                    # redis-py hands out every message it has buffered without yielding to the
                    # loop: after a busy moment hundreds wait, and the commands that arrived
                    # meanwhile would wait for all of them
                    await asyncio.sleep(0)

    def _rehome_soon(self) -> None:
        if self._rehoming is None and not self._stopped:
            self._rehoming = asyncio.get_running_loop().create_task(self._rehome())

    async def _rehome(self) -> None:
        """Re-read the topology and move every room whose channel another node serves now to
        that node (its confirmation then refills the room); drop shards left without rooms.
        Tried again, with a growing pause, until every room is subscribed somewhere."""
        pause = RetryPause()
        try:
            while not self._stopped:
                try:
                    await self.nodes.refresh()
                    await self._move_rooms()
                except Exception as exc:
                    raise_if_cancelling()
                    if not _is_redis_failure(exc):
                        raise
                    self.redis_error(exc)
                    self._orphans.update(self._rooms)  # not sure of anything: check them all
                if not self._orphans & set(self._rooms):
                    break
                await pause.wait()
        finally:
            self._rehoming = None

    async def _move_rooms(self) -> None:
        for room in list(self._rooms.values()):
            if room.shard is None or not self.alive(room):
                continue  # not subscribed yet: its subscriber handles it
            try:
                node = await self.nodes.node_of(room.channel)
            except Exception as exc:
                if not _is_redis_failure(exc):
                    raise
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
            except Exception as exc:
                raise_if_cancelling()
                if not _is_redis_failure(exc):
                    raise
                self.redis_error(exc)
                self._orphans.add(room.room_id)
                continue
            self._orphans.discard(room.room_id)
        self._orphans &= set(self._rooms)
        for name, shard in list(self._shards.items()):
            if not shard.rooms and not shard.pubsub.shard_channels:
                del self._shards[name]
                task = asyncio.get_running_loop().create_task(shard.close())
                task.add_done_callback(_ignore_result)

    def _dispatch(self, shard: Shard, msg: dict[str, Any]) -> None:
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
                room.refill_soon()
            return
        if kind == "sunsubscribe":
            if room is not None:  # not asked for: the slot moved to another node
                self._orphans.add(room.room_id)
                self._rehome_soon()
            return
        data = msg.get("data")
        if kind != "smessage" or not isinstance(data, bytes):
            return
        delivered = room.last_seq if room is not None else None
        try:
            message = wire.decode_channel(data, delivered)
        except Exception:  # a message we cannot read is a lost message: the log has it
            log.exception("unreadable pub/sub message on %s", channel)
            return
        if isinstance(message, wire.Kick):
            if self.on_kick is not None:
                self.on_kick(message.conn)
            return
        if room is None or not message or (self.lose is not None and self.lose(room.room_id)):
            return
        room.receive(message)

    def _room_of(self, channel: str) -> str:
        # <prefix>{room:<id>}:events
        start = channel.find("{room:") + len("{room:")
        return channel[start : channel.rfind("}")]

    errors: tuple[type[BaseException], ...] = _ERRORS

    def alive(self, room: RoomStream) -> bool:
        """Whether ``room`` is still this feed's stream of its room."""
        return self._rooms.get(room.room_id) is room

    def redis_error(self, exc: BaseException) -> None:
        log.warning("redis error in feed: %s", exc)
        if self.on_redis_error is not None:
            self.on_redis_error(exc)


def _is_redis_failure(exc: BaseException) -> bool:
    """A failure of Redis or of the connection to it (retried), not a bug of the feed."""
    return isinstance(exc, _ERRORS) or is_storage_fault(exc)


def _ignore_result(task: asyncio.Task[None]) -> None:
    if not task.cancelled():
        task.exception()
