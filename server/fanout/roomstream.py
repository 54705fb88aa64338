"""One room's events for this process: delivered once each, in seq order, without gaps.

Events come in from pub/sub and from this process's own commits, in any order and possibly
twice. A :class:`RoomStream` keeps the seq it delivered last: a duplicate is dropped, an event
after a gap waits while the gap is read from the room's log, and after its subscription was
re-established (messages may have been lost) the log is read again to its end.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from server.boundary import wire
from server.ops.cancel import raise_if_cancelling
from server.ops.retry import RetryPause

if TYPE_CHECKING:
    from server.fanout.pubsub import Shard

__all__ = ["READ_BATCH", "RoomStream", "Subscriber"]

READ_BATCH = 500


class Subscriber(Protocol):
    def offer(self, event: wire.EncodedEvent) -> None: ...


class Owner(Protocol):
    """What a room stream needs from its feed."""

    store: Any
    errors: tuple[type[BaseException], ...]

    def alive(self, room: RoomStream) -> bool: ...
    def redis_error(self, exc: BaseException) -> None: ...


@dataclass(eq=False)
class RoomStream:
    """The ordered delivery of one room's events to this process's subscribers."""

    room_id: str
    channel: str
    owner: Owner
    shard: Shard | None = None
    subs: set[Any] = field(default_factory=set)
    last_seq: int | None = None  # None until the first subscriber read the log
    pending: dict[int, wire.EncodedEvent] = field(default_factory=dict)
    filling: asyncio.Task[None] | None = None
    refill: bool = False  # re-read the log to its end (the subscription was re-established)
    subscribed: asyncio.Future[None] | None = None
    joined: asyncio.Task[None] | None = None  # subscribed, confirmed, among the listeners

    def receive(self, events: list[wire.EncodedEvent]) -> None:
        """Take events in (any order, duplicates too) and deliver what is in sequence."""
        for event in events:
            if self.last_seq is None or event.seq > self.last_seq:
                self.pending[event.seq] = event
        self.flush()

    def flush(self) -> None:
        """Deliver the pending events that follow ``last_seq``; read a gap from the log."""
        if self.last_seq is None:
            return
        while self.last_seq + 1 in self.pending:
            event = self.pending.pop(self.last_seq + 1)
            self.last_seq = event.seq
            for sub in list(self.subs):
                sub.offer(event)
        for seq in [s for s in self.pending if s <= self.last_seq]:
            del self.pending[seq]
        if (self.pending or self.refill) and self.filling is None:  # a gap: read the log
            self.filling = asyncio.get_running_loop().create_task(self.fill())

    async def fill(self) -> None:
        """Read the log after the room's last seq, up to the first pending event (a gap) or,
        when ``self.refill`` is set, to its end; deliver it. Retried while Redis does not
        answer. While this runs, :meth:`flush` starts no other reader for the self."""
        pause = RetryPause()
        try:
            while self.last_seq is not None and self.owner.alive(self):
                to_end = False
                if self.pending:
                    want = min(self.pending) - self.last_seq - 1
                elif self.refill:
                    # cleared before the read: a re-subscription confirmed during the read
                    # sets it again, and the log is read once more
                    self.refill, to_end, want = False, True, READ_BATCH
                else:
                    break
                try:
                    if to_end:  # the subscription was re-established: listen again first
                        await self.owner.store.listen(self.room_id)
                    batch = await self.owner.store.read_events(self.room_id, self.last_seq, want)
                except self.owner.errors as exc:
                    raise_if_cancelling()
                    self.owner.redis_error(exc)
                    self.refill |= to_end
                    await pause.wait()
                    continue
                for seq, data in batch:
                    if seq > self.last_seq:
                        self.pending[seq] = wire.from_log(seq, data)
                self.flush()
                if not batch and self.pending and not to_end:
                    # the gap is not in the log: the room expired
                    self.last_seq = min(self.pending) - 1
                    self.flush()
                elif to_end and len(batch) == want:
                    self.refill = True  # more to read
        finally:
            self.filling = None
        if (self.pending or self.refill) and self.owner.alive(self):
            self.flush()

    def refill_soon(self) -> None:
        """The room's subscription was re-established: read what it may have missed."""
        self.refill = True
        if self.filling is None and self.last_seq is not None:
            self.filling = asyncio.get_running_loop().create_task(self.fill())
