"""The room feed: one pub/sub listener per process, fanning room events out to local subscribers.

Pub/sub only says "room R moved" (at-most-once, may be lost). The events themselves are always read
from the room's log by seq (``XRANGE`` from the last seq seen), so a lost wake-up delays nothing
for long (a periodic sweep and every reconnect of the listener re-read all local rooms) and loses
nothing. Each subscriber keeps its own cursor: an event at or below it is dropped (no duplicates),
an event beyond ``cursor + 1`` triggers a read of the gap first (no holes). Subscribers receive
events through a non-blocking ``sink``; a slow consumer's sink must never block (the session's
bounded queue closes the slow connection instead), so one client never stalls a room.

The same channel carries ``kick <connection id>`` when a seat was taken back by a new connection;
the listener hands it to ``on_kick`` (the process holding that connection closes it with 1000).
Being at-most-once too, it is backed by the lease renewal, which checks the seat's owner.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis

from server.store import RoomStore

__all__ = ["Feed", "Subscription", "raise_if_cancelling"]

log = logging.getLogger("yahtzee.feed")


def raise_if_cancelling() -> None:
    """Re-raise a cancellation that a library turned into another exception.

    redis-py may catch the ``CancelledError`` thrown into a command and raise a connection
    error instead; a loop that catches those errors must not swallow the cancellation.
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


Event = dict[str, Any]
Sink = Callable[[int, Event], None]
_READ_BATCH = 500


@dataclass(eq=False)
class Subscription:
    room_id: str
    cursor: int
    sink: Sink
    feed: Feed
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    closed: bool = False

    async def offer(self, seq: int, event: Event) -> None:
        """Deliver ``event`` (and any gap before it) exactly once, in seq order."""
        if self.closed or seq <= self.cursor:
            return
        async with self.lock:
            if self.closed or seq <= self.cursor:
                return
            if seq > self.cursor + 1:
                await self.catch_up(until=seq - 1)
            if not self.closed and seq == self.cursor + 1:
                self.cursor = seq
                self.sink(seq, event)

    async def catch_up(self, until: int | None = None) -> None:
        """Read the log after ``cursor`` (up to ``until``) and deliver it. Caller holds the lock."""
        while not self.closed:
            batch = await self.feed.store.read_events(self.room_id, self.cursor, _READ_BATCH)
            for seq, event in batch:
                if until is not None and seq > until:
                    return
                if seq == self.cursor + 1:
                    self.cursor = seq
                    self.sink(seq, event)
            if len(batch) < _READ_BATCH:
                return

    def close(self) -> None:
        self.closed = True
        self.feed._unsubscribe(self)


@dataclass(eq=False)
class _Room:
    room_id: str
    subs: set[Subscription] = field(default_factory=set)
    last_seq: int = 0
    dirty: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


class Feed:
    """Per-process fan-out of room events; see the module docstring."""

    def __init__(
        self,
        store: RoomStore,
        *,
        sweep_seconds: float = 2.0,
        on_redis_error: Callable[[BaseException], None] | None = None,
        on_kick: Callable[[str], None] | None = None,
    ) -> None:
        self.store = store
        self.on_kick = on_kick
        self.sweep_seconds = sweep_seconds
        self.on_redis_error = on_redis_error
        self._rooms: dict[str, _Room] = {}
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._listen(), name="feed-listener"),
            asyncio.create_task(self._sweep(), name="feed-sweep"),
        ]

    async def stop(self) -> None:
        tasks = self._tasks + [r.task for r in self._rooms.values() if r.task is not None]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        self._tasks = []
        self._rooms.clear()

    # -- subscribing -------------------------------------------------------------------------

    async def subscribe(self, room_id: str, after_seq: int, sink: Sink) -> Subscription:
        """Deliver every event with seq > ``after_seq`` to ``sink``: the backlog, then live."""
        sub = Subscription(room_id, after_seq, sink, self)
        room = self._rooms.get(room_id)
        if room is None:
            room = self._rooms[room_id] = _Room(room_id, last_seq=after_seq)
            room.task = asyncio.create_task(self._room_reader(room), name=f"feed-{room_id}")
        async with sub.lock:
            room.subs.add(sub)  # live offers wait for the lock, then drop what we replayed
            try:
                await sub.catch_up()
            except BaseException:
                sub.close()  # nobody holds it to close it later (nor the room's reader task)
                raise
        room.last_seq = max(room.last_seq, sub.cursor)
        return sub

    def wake(self, room_id: str) -> None:
        """A local hint that ``room_id`` has new events (pub/sub brings the same news later)."""
        room = self._rooms.get(room_id)
        if room is not None:
            room.dirty.set()

    def subscriber_count(self) -> int:
        return sum(len(r.subs) for r in self._rooms.values())

    def _unsubscribe(self, sub: Subscription) -> None:
        room = self._rooms.get(sub.room_id)
        if room is None:
            return
        room.subs.discard(sub)
        if not room.subs:
            del self._rooms[sub.room_id]
            if room.task is not None:
                room.task.cancel()

    # -- reading -----------------------------------------------------------------------------

    async def _room_reader(self, room: _Room) -> None:
        while True:
            raise_if_cancelling()
            await room.dirty.wait()
            room.dirty.clear()
            try:
                while True:
                    batch = await self.store.read_events(room.room_id, room.last_seq, _READ_BATCH)
                    for seq, event in batch:
                        room.last_seq = max(room.last_seq, seq)
                        for sub in list(room.subs):
                            await sub.offer(seq, event)
                    if len(batch) < _READ_BATCH:
                        break
            except (aioredis.RedisError, OSError) as exc:
                raise_if_cancelling()
                self._redis_error(exc)
                await asyncio.sleep(0.5)
                room.dirty.set()

    async def _listen(self) -> None:
        delay = 0.1
        while True:
            pubsub = self.store.redis.pubsub()
            try:
                await pubsub.psubscribe(self.store.wake_pattern)
                delay = 0.1
                self._wake_all()  # anything published while we were not listening
                while True:
                    raise_if_cancelling()
                    msg = await pubsub.get_message(ignore_subscribe_messages=True, timeout=5.0)
                    if msg is None or msg.get("type") != "pmessage":
                        continue
                    channel = msg["channel"]
                    if isinstance(channel, bytes):
                        channel = channel.decode()
                    data = msg.get("data")
                    if isinstance(data, bytes) and data.startswith(b"kick "):
                        if self.on_kick is not None:
                            self.on_kick(data[5:].decode())
                        continue
                    self.wake(self.store.room_of_channel(channel))
            except (aioredis.RedisError, OSError) as exc:
                raise_if_cancelling()
                self._redis_error(exc)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 5.0)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self.sweep_seconds)
            self._wake_all()

    def _wake_all(self) -> None:
        for room in self._rooms.values():
            room.dirty.set()

    def _redis_error(self, exc: BaseException) -> None:
        log.warning("redis error in feed: %s", exc)
        if self.on_redis_error is not None:
            self.on_redis_error(exc)
