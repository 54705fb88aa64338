"""The room feed: this process's fan-out of room events to its local subscribers.

One sharded pub/sub connection per process, subscribed (``SSUBSCRIBE``) only to the rooms that
have a subscriber here, so a process hears only the rooms it serves. A room's pub/sub message
carries the committed events themselves (:mod:`server.wire`): nothing is re-read or re-encoded
on the way to the sockets. Events this process commits are handed over directly
(:meth:`Feed.publish_local`), before the command's ack; their pub/sub echo is then a duplicate.

Pub/sub is at-most-once, so every room keeps the seq it delivered last: a duplicate is dropped,
an event after a gap waits while the gap is read from the room's log, and after the pub/sub
connection was re-established every local room is re-read from its last seq. Each subscriber
keeps its own cursor too: it first reads its backlog from the log while live events are
buffered for it, so a new subscriber never moves anyone else's position.

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
from redis.asyncio.client import PubSub

from server import wire
from server.store import RedisStore

__all__ = ["Feed", "Subscription", "raise_if_cancelling"]

log = logging.getLogger("yahtzee.feed")

Sink = Callable[[wire.EncodedEvent], None]
_READ_BATCH = 500
_SUBSCRIBE_TIMEOUT = 5.0


def raise_if_cancelling() -> None:
    """Re-raise a cancellation that a library turned into another exception (redis-py may
    turn the ``CancelledError`` thrown into a command into a connection error)."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


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
    subs: set[Subscription] = field(default_factory=set)
    last_seq: int | None = None  # None until the first subscriber read the log
    pending: dict[int, wire.EncodedEvent] = field(default_factory=dict)
    filling: asyncio.Task[None] | None = None
    subscribed: asyncio.Future[None] | None = None


class _PubSub(PubSub):
    """redis-py's PubSub, telling us when it reconnected (messages may have been lost).

    redis-py calls ``on_connect`` only when an existing connection connects again (the first
    connection comes connected from the pool), after it re-subscribed our channels."""

    def __init__(self, pool: Any, on_reconnect: Callable[[], None]) -> None:
        super().__init__(pool)
        self._on_reconnect = on_reconnect
        self.connected = asyncio.Event()  # set once the first subscription was sent

    async def on_connect(self, connection: Any) -> None:
        await super().on_connect(connection)
        self._on_reconnect()


class Feed:
    """Per-process fan-out of room events; see the module docstring."""

    def __init__(
        self,
        redis: aioredis.Redis,
        store: RedisStore,
        *,
        on_redis_error: Callable[[BaseException], None] | None = None,
        on_kick: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.on_kick = on_kick
        self.on_redis_error = on_redis_error
        self._redis = redis
        self._pubsub = _PubSub(redis.connection_pool, self._refill_all)
        self._rooms: dict[str, _Room] = {}
        # redis-py's PubSub is not safe for concurrent (un)subscribe calls: the first ones
        # would each open a connection of their own
        self._subscribing = asyncio.Lock()
        self._listener: asyncio.Task[None] | None = None
        #: A test hook: pub/sub messages for which it returns True are dropped, as if lost.
        self.lose: Callable[[str], bool] | None = None

    async def start(self) -> None:
        self._listener = asyncio.create_task(self._listen(), name="feed-listener")

    async def stop(self) -> None:
        tasks = [r.filling for r in self._rooms.values() if r.filling is not None]
        if self._listener is not None:
            tasks.append(self._listener)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        self._rooms.clear()
        with contextlib.suppress(Exception):
            await self._pubsub.aclose()  # type: ignore[no-untyped-call]
        with contextlib.suppress(Exception):
            await self._redis.aclose()

    def subscriber_count(self) -> int:
        return sum(len(r.subs) for r in self._rooms.values())

    def rooms(self) -> list[str]:
        """The rooms this process is subscribed to."""
        return list(self._rooms)

    # -- subscribing ----------------------------------------------------------------------------

    async def subscribe(self, room_id: str, after_seq: int, sink: Sink) -> Subscription:
        """Deliver every event with seq > ``after_seq`` to ``sink``: the backlog, then live."""
        room = self._rooms.get(room_id)
        if room is None:
            room = self._rooms[room_id] = _Room(room_id)
            room.subscribed = asyncio.get_running_loop().create_future()
            try:
                async with self._subscribing:
                    await self._pubsub.ssubscribe(self.store.channel(room_id))
            except BaseException as exc:
                # Redis is down: forget the room, so that a later subscriber subscribes again
                # instead of waiting for a confirmation that will never come.
                failed = aioredis.ConnectionError(f"cannot subscribe to room {room_id}: {exc}")
                if not room.subscribed.done():
                    room.subscribed.set_exception(failed)
                    room.subscribed.exception()  # retrieved here; waiters get it too
                if not room.subs and self._rooms.get(room_id) is room:
                    del self._rooms[room_id]
                raise
            self._pubsub.connected.set()
        sub = Subscription(room_id, after_seq, sink, self)
        room.subs.add(sub)
        try:
            assert room.subscribed is not None
            try:
                async with asyncio.timeout(_SUBSCRIBE_TIMEOUT):
                    await asyncio.shield(room.subscribed)
            except TimeoutError as exc:  # a typed, retryable failure, not an internal error
                raise aioredis.TimeoutError(f"room {room_id}: subscription not confirmed") from exc
            await self._catch_up(sub)
        except BaseException:
            sub.close()  # nobody else holds it to close it later
            raise
        if room.last_seq is None:
            room.last_seq = sub.cursor
            self._flush(room)
        return sub

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
        task = asyncio.get_running_loop().create_task(self._sunsubscribe(sub.room_id))
        task.add_done_callback(_ignore_result)

    async def _sunsubscribe(self, room_id: str) -> None:
        async with self._subscribing:
            if room_id not in self._rooms:  # nobody subscribed again meanwhile
                with contextlib.suppress(aioredis.RedisError, OSError):
                    await self._pubsub.sunsubscribe(self.store.channel(room_id))

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
        if room.pending and room.filling is None:  # a gap: read it from the log
            room.filling = asyncio.get_running_loop().create_task(self._fill(room))

    async def _fill(self, room: _Room, *, until_end: bool = False) -> None:
        """Read the log after the room's last seq, up to the first pending event (a gap) or,
        with ``until_end``, to its end; deliver it. Retried while Redis does not answer.
        While this runs, :meth:`_flush` starts no other reader for the room."""
        delay = 0.05
        try:
            while room.last_seq is not None and room.room_id in self._rooms:
                if room.pending:
                    want = min(room.pending) - room.last_seq - 1
                elif until_end:
                    want = _READ_BATCH
                else:
                    break
                try:
                    batch = await self.store.read_events(room.room_id, room.last_seq, want)
                except (aioredis.RedisError, OSError) as exc:
                    raise_if_cancelling()
                    self._redis_error(exc)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 2.0)
                    continue
                for seq, data in batch:
                    if seq > room.last_seq:
                        room.pending[seq] = wire.from_log(seq, data)
                self._flush(room)
                if not batch and room.pending:  # the gap is not in the log: the room expired
                    room.last_seq = min(room.pending) - 1
                    self._flush(room)
                elif len(batch) < want and not room.pending:
                    break
        finally:
            room.filling = None
        if room.pending and room.room_id in self._rooms:
            self._flush(room)

    def _refill_all(self) -> None:
        """After the pub/sub connection came back: read what every local room missed."""
        loop = asyncio.get_running_loop()
        for room in self._rooms.values():
            if room.filling is None and room.last_seq is not None:
                room.filling = loop.create_task(self._fill(room, until_end=True))

    # -- the listener ---------------------------------------------------------------------------

    async def _listen(self) -> None:
        delay = 0.1
        while True:
            raise_if_cancelling()
            await self._pubsub.connected.wait()
            try:
                msg = await self._pubsub.get_message(timeout=5.0)
                delay = 0.1
            except (aioredis.RedisError, OSError) as exc:
                raise_if_cancelling()
                self._redis_error(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
                continue
            if msg is not None:
                self._dispatch(msg)

    def _dispatch(self, msg: dict[str, Any]) -> None:
        kind = msg.get("type")
        if isinstance(kind, bytes):
            kind = kind.decode()
        channel = msg.get("channel")
        if isinstance(channel, bytes):
            channel = channel.decode()
        room = self._rooms.get(self._room_of(str(channel)))
        if kind == "ssubscribe":
            if room is not None and room.subscribed is not None and not room.subscribed.done():
                room.subscribed.set_result(None)
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
