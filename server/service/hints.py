"""A room's hints outside its slot: the deadline schedule (when a timer or a computer's move is
due, polled by every process) and the lobby index, plus this process's local wake-up for a
computer's move. They are written after the commit, best effort: the record is the truth. (On a
single Redis the commit's script writes the deadline itself: ``Store.commits_deadlines``.)

A commit whose reply never came (Redis froze or failed over mid-call: ``unavailable``, the
outcome unknown) may still have run; its hints were then never written, and a turn handed to a
computer would never be played. :meth:`Hints.repair_soon` sets them again from the room as it
is, once Redis answers."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Sequence

import redis.exceptions

import protocol.messages as pm
from server.domain import deadlines, room, roomlist
from server.ops.retry import RetryPause
from server.service.correspondence import Correspondence
from server.service.outcomes import Wake
from server.settings import Settings
from server.storage.interface import TRANSIENT_ERRORS, Store

__all__ = ["Hints"]

log = logging.getLogger("yahtzee.service")

#: Events after which the room's lobby entry changes.
SUMMARY_EVENTS = (
    pm.PlayerJoined,
    pm.PlayerLeft,
    pm.GameStarted,
    pm.GameOver,
    pm.Spectators,
    pm.PlayerDisconnected,  # a ghost room leaves the lobby (room.ghost_at)
    pm.PlayerReconnected,
)
#: Tries of one repair (its pauses grow to a second): Redis is back well within them, or the
#: polled schedule's own sweep is the fallback.
REPAIR_TRIES = 60

Load = Callable[[str], Awaitable[room.RoomRecord | None]]


class Hints:
    """The hints of this process's commits; see the module docstring."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        wake: Wake | None,
        correspondence: Correspondence | None = None,
    ) -> None:
        self.store = store
        self.settings = settings
        self.wake = wake
        #: the players' index and reminders of correspondence rooms (None: not kept)
        self.correspondence = correspondence
        #: how many lobby entries this process wrote (a local listing cache compares it)
        self.index_writes = 0
        self._repairs: dict[str, asyncio.Task[None]] = {}

    async def update(
        self,
        room_id: str,
        before: room.RoomRecord,
        after: room.RoomRecord,
        events: Sequence[pm.Event],
        ttl: int,
        now: int,
        *,
        created: bool,
    ) -> None:
        """The deadline schedule and the lobby index, when they changed."""
        if after.computer_ms is not None and self.wake is not None:
            self.wake(room_id, after.computer_ms)
        try:
            if not self.store.commits_deadlines:  # (a Cluster: the schedule is in another slot)
                wake = deadlines.wake_at(after)
                if wake != deadlines.wake_at(before):
                    await self.store.set_deadline(room_id, wake)
            if created or any(isinstance(e, SUMMARY_EVENTS) for e in events):
                grace = self.settings.absent_turn_seconds
                summary = json.dumps(roomlist.summary(room_id, after, grace)).encode()
                await self.store.index_put(room_id, summary, now + ttl * 1000)
                self.index_writes += 1
        except redis.exceptions.RedisError as exc:
            log.warning("room %s: hint not written: %s", room_id, exc)
        if self.correspondence is not None and after.meta.correspondence:
            try:
                await self.correspondence.after_commit(room_id, before, after, now)
            except redis.exceptions.RedisError as exc:
                log.warning("room %s: turn index or reminder not written: %s", room_id, exc)

    def repair_soon(self, room_id: str, load: Load) -> None:
        """Set the room's deadline and wake-up again from its record (``load``), once Redis
        answers (one repair a room at a time)."""
        if room_id in self._repairs:
            return
        task = asyncio.get_running_loop().create_task(self._repair(room_id, load))
        self._repairs[room_id] = task
        task.add_done_callback(lambda _: self._repairs.pop(room_id, None))

    async def _repair(self, room_id: str, load: Load) -> None:
        pause = RetryPause(base=0.05, cap=1.0)
        for _ in range(REPAIR_TRIES):
            try:
                record = await load(room_id)
                if record is None:
                    return
                if record.computer_ms is not None and self.wake is not None:
                    self.wake(room_id, record.computer_ms)
                await self.store.set_deadline(room_id, deadlines.wake_at(record))
                return
            except TRANSIENT_ERRORS:
                await pause.wait()
        log.warning("room %s: hints not repaired (the polled schedule is the fallback)", room_id)

    async def stop(self) -> None:
        """Cancel the repairs under way (shutdown)."""
        for task in list(self._repairs.values()):
            task.cancel()
