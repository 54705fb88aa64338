"""The quick-play queues in Redis (works on a Redis Cluster)::

    <prefix>{qp}:q:<rules>:<seats>  zset    ticket -> when its player queued (ms)
    <prefix>{qp}:tickets            hash    ticket -> entry JSON (identity, name, rating, ...)
    <prefix>{qp}:alive              zset    ticket -> when its process last renewed it (ms)
    <prefix>{qp}:who                hash    identity -> its ticket (a player queues once)
    <prefix>{qp}:matched            hash    ticket -> its match JSON ("pending" while made)

Every key shares the hash tag ``{qp}``: one Cluster slot, so one script checks a player across
every queue (``already_queued``) and takes a whole group out at once (a player is never matched
twice). Quick play is one command per game, far from the hot path of play commands, so one
slot is enough; a room's own keys stay spread by their ``{room:<id>}`` tags.

Each change is one Lua script (the ``quickplay_*.lua`` files beside this module).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from server.storage.interface import fault_boundary

__all__ = ["PENDING", "QueueEntry", "QueueNews", "QuickPlayQueue", "queue_name"]

PENDING = "pending"
"""The mark of a claimed ticket whose room is being made."""

MATCHES_TTL_MS = 120_000


def _lua(name: str) -> str:
    return (Path(__file__).parent / f"{name}.lua").read_text(encoding="utf-8")


def queue_name(rules: str, seats: int) -> str:
    """The queue of ``seats``-seat games with ``rules`` (its key's suffix)."""
    return f"{rules}:{seats}"


class QueueEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One queued player as stored (JSON)."""

    ticket: str
    identity: str
    name: str
    rating: float | None
    enqueued_ms: int
    computers: bool


@dataclass(frozen=True, slots=True)
class QueueNews:
    """What a poll found for one ticket: its match (JSON), its position, or neither."""

    match: bytes | None = None
    position: int | None = None
    pending: bool = False

    @property
    def gone(self) -> bool:
        """Neither queued nor matched (expired, or its match was lost)."""
        return self.match is None and self.position is None and not self.pending


_encode = msgspec.json.Encoder().encode
_decode_entry = msgspec.json.Decoder(QueueEntry).decode


@fault_boundary
class QuickPlayQueue:
    """The queues (see the module docstring); every storage fault is ``unavailable``."""

    def __init__(self, redis: Any, prefix: str = "yz:") -> None:
        self.redis: Any = redis
        self.base = f"{prefix}{{qp}}"
        self._enqueue = redis.register_script(_lua("quickplay_enqueue"))
        self._remove = redis.register_script(_lua("quickplay_remove"))
        self._snapshot = redis.register_script(_lua("quickplay_snapshot"))
        self._poll = redis.register_script(_lua("quickplay_poll"))

    def _keys(self, queue: str) -> list[str]:
        b = self.base
        return [f"{b}:q:{queue}", f"{b}:tickets", f"{b}:alive", f"{b}:who", f"{b}:matched"]

    async def enqueue(
        self, queue: str, entry: QueueEntry, now_ms: int, ttl_ms: int = 15_000
    ) -> int | None:
        """Queue ``entry``: its position (1: the longest waiting), or None when its player is
        queued already (in any queue, with a ticket renewed in the last ``ttl_ms``)."""
        keys = self._keys(queue)[:4]
        args = [entry.ticket, entry.identity, _encode(entry), entry.enqueued_ms, now_ms, ttl_ms]
        queued, value = await self._enqueue(keys=keys, args=args)
        return int(value) if int(queued) == 1 else None

    async def cancel(self, queue: str, ticket: str) -> bool:
        """Take ``ticket`` out of ``queue``; False when it was not queued (any more)."""
        return int(await self._remove(keys=self._keys(queue), args=["", ticket])) == 1

    async def claim(self, queue: str, tickets: list[str]) -> bool:
        """Take every ticket of a group out of ``queue`` for its match, or none of them (False:
        one of them left or was matched meanwhile)."""
        return int(await self._remove(keys=self._keys(queue), args=[PENDING, *tickets])) == 1

    async def snapshot(self, queue: str, now_ms: int, ttl_ms: int,
                       limit: int = 1000) -> list[QueueEntry]:  # fmt: skip
        """The queue, longest waiting first, after dropping tickets not renewed in ``ttl_ms``."""
        flat = await self._snapshot(keys=self._keys(queue)[:4], args=[now_ms, ttl_ms, limit])
        return [_decode_entry(flat[i + 1]) for i in range(0, len(flat), 2)]

    async def deliver(self, matches: dict[str, bytes]) -> None:
        """Store each claimed ticket's match for its waiting connection's process."""
        key = f"{self.base}:matched"
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hset(key, mapping=matches)
            pipe.pexpire(key, MATCHES_TTL_MS)
            await pipe.execute()

    async def forget(self, ticket: str) -> None:
        """Drop a match delivered in-process (its poll will not collect it)."""
        await self.redis.hdel(f"{self.base}:matched", ticket)

    async def poll(
        self, queue: str, tickets: list[str], now_ms: int
    ) -> tuple[int, list[QueueNews]]:
        """Renew ``tickets`` (this process's, of ``queue``) and read their news; also the
        queue's size."""
        keys = self._keys(queue)
        reply = await self._poll(keys=[keys[0], keys[2], keys[4]], args=[now_ms, *tickets])
        return int(reply[0]), [_news(item) for item in reply[1:]]


def _news(item: bytes) -> QueueNews:
    if item == b"":
        return QueueNews()
    if item == b"p":
        return QueueNews(pending=True)
    if item[:1] == b"q":
        return QueueNews(position=int(item[1:]))
    return QueueNews(match=item)
