"""This process's copy of the lobby index, kept current by reading only what changed.

Every lobby entry write (``index_put.lua``) also numbers itself: it increments its bucket's
change counter and records the room under that number in the bucket's ``rooms:changed`` zset
(one member a room: a newer write moves it). A process that read a bucket up to change ``n``
reads next only the rooms changed after ``n`` (their scores and summaries), and prunes the
expired ones by their score itself. The lobby list was read whole once a second in each
process (every room's score and summary: a few milliseconds of CPU a second for a thousand
rooms, paid again by every process); now a second with ten changed rooms reads ten.

A bucket is still read whole when this process has no copy of it yet and then once a minute
(``FULL_READ_MS``): entries that no change names (written by a server of an earlier version,
before the counter existed) are found within that minute. Keys (see :mod:`server.storage.keys`):
``rooms`` (zset: room -> expiry), ``rooms:info`` (hash: room -> summary), ``rooms:changes``
(counter) and ``rooms:changed`` (zset: room -> the change that last wrote it), all in the
bucket's slot.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FULL_READ_MS", "LobbyIndex"]

log = logging.getLogger("yahtzee.store")

FULL_READ_MS = 60_000
"""How often (ms) a bucket is read whole all the same."""

_PRUNE_A_READ = 1000  # expired entries removed from Redis a bucket a read

Call = tuple[str, tuple[Any, ...], dict[str, Any]]  # a client method's name, args, kwargs
Batch = Callable[[list[Call]], Awaitable[list[Any]]]


@dataclass
class _Bucket:
    """One bucket as this process last read it."""

    #: the highest change number read (every change up to it is in ``entries``)
    seen: int = 0
    #: when the bucket was last read whole (ms); None: never
    whole_at: int | None = None
    #: room id -> (expiry ms, summary JSON)
    entries: dict[bytes, tuple[float, bytes]] = field(default_factory=dict)
    #: no entry expires before this (ms); it may be earlier than the earliest entry's expiry
    earliest: float = math.inf


@dataclass
class _Plan:
    """The first round trip's commands for one bucket."""

    calls: list[Call]
    whole: bool  # the bucket is read whole (else: the rooms changed since)
    prunes: bool  # the first command asks for the expired entries


@dataclass
class _Read:
    """One bucket's rooms to read in the second round trip, and what the copy becomes."""

    bucket: int
    rooms: list[bytes]  # the rooms changed since (a whole read reads every room)
    seen: int
    whole_at: int | None
    position: int = 0  # where their two replies are in the second round trip


def _expiry(entry: tuple[float, bytes]) -> float:
    return entry[0]


class LobbyIndex:
    """Reads the buckets of the lobby index through ``batch`` (one round trip for several
    commands, each reply or its error in order); ``key(name, bucket)`` names a bucket's key."""

    def __init__(self, buckets: int, key: Callable[[str, int], str], batch: Batch) -> None:
        self.buckets = buckets
        self._key = key
        self._batch = batch
        self._copies = [_Bucket() for _ in range(buckets)]
        #: every copy's summaries, latest expiry first (None: to be ranked again)
        self._ranked: list[bytes] | None = None

    async def read(self, now: int, limit: int) -> list[bytes]:
        """Summaries of live rooms, most recently active first. A bucket whose node does not
        answer (a Cluster master failing over) keeps the copy it had; when no bucket answers,
        the error is raised."""
        plans = [self._plan(bucket, now) for bucket in range(self.buckets)]
        replies = await self._batch([call for plan in plans for call in plan.calls])
        failed: list[Exception] = []
        follow: list[Call] = []
        reads: list[_Read] = []
        at = 0
        for bucket, plan in enumerate(plans):
            mine = replies[at : at + len(plan.calls)]
            at += len(plan.calls)
            error = next((r for r in mine if isinstance(r, Exception)), None)
            if error is not None:
                failed.append(error)
                log.warning("rooms bucket %d skipped: %s", bucket, error)
                continue
            if plan.prunes:
                follow += self._prune(bucket, mine.pop(0))
            read = self._read_of(bucket, plan.whole, mine, now)
            read.position = len(follow)
            reads.append(read)
            index, info = self._key("rooms", bucket), self._key("rooms:info", bucket)
            if read.whole_at is not None:  # after the counter's read, on a Cluster too
                follow.append(("zrangebyscore", (index, f"({now}", "+inf"), {"withscores": True}))
                follow.append(("hgetall", (info,), {}))
            elif read.rooms:
                follow.append(("zmscore", (index, read.rooms), {}))
                follow.append(("hmget", (info, read.rooms), {}))
        if failed and len(failed) == self.buckets:
            raise failed[0]
        answers = await self._batch(follow) if follow else []
        for read in reads:
            self._apply(read, answers)
        return self._listed(now, limit)

    def _plan(self, bucket: int, now: int) -> _Plan:
        """The first round trip's commands for ``bucket``: its expired entries (to prune) when
        the copy may know of one or is read whole, then either the change counter (a whole
        read: the entries themselves are read in the second round trip, so that every change
        the counter counts is in them) or the rooms changed since."""
        copy = self._copies[bucket]
        whole = copy.whole_at is None or now - copy.whole_at >= FULL_READ_MS
        calls: list[Call] = []
        if whole or copy.earliest <= now:
            index = self._key("rooms", bucket)
            calls.append(
                ("zrangebyscore", (index, "-inf", now), {"start": 0, "num": _PRUNE_A_READ})
            )
        if whole:
            calls.append(("get", (self._key("rooms:changes", bucket),), {}))
        else:
            changed = self._key("rooms:changed", bucket)
            calls.append(
                ("zrangebyscore", (changed, f"({copy.seen}", "+inf"), {"withscores": True})
            )
        return _Plan(calls, whole=whole, prunes=len(calls) == 2)

    def _prune(self, bucket: int, expired: list[bytes]) -> list[Call]:
        """Remove expired entries from Redis (any process may; the copies drop them by score)."""
        if not expired:
            return []
        return [
            ("zrem", (self._key("rooms", bucket), *expired), {}),
            ("hdel", (self._key("rooms:info", bucket), *expired), {}),
            ("zrem", (self._key("rooms:changed", bucket), *expired), {}),
        ]

    def _read_of(self, bucket: int, whole: bool, replies: list[Any], now: int) -> _Read:
        """What the first round trip says to read of ``bucket``."""
        if whole:
            return _Read(bucket, [], int(replies[0] or 0), whole_at=now)
        changed: list[tuple[bytes, float]] = replies[0]
        seen = max((int(number) for _, number in changed), default=self._copies[bucket].seen)
        return _Read(bucket, [room for room, _ in changed], seen, whole_at=None)

    def _apply(self, read: _Read, answers: list[Any]) -> None:
        """Update the bucket's copy with what was read; a read that failed changes nothing
        (its changes are read again next time)."""
        copy = self._copies[read.bucket]
        if read.whole_at is None and not read.rooms:
            return  # nothing changed
        first, second = answers[read.position], answers[read.position + 1]
        error = next((r for r in (first, second) if isinstance(r, Exception)), None)
        if error is not None:
            log.warning("rooms bucket %d not read: %s", read.bucket, error)
            return
        if read.whole_at is not None:  # every live room with its score; every summary
            rooms = [room for room, _ in first]
            scores = [score for _, score in first]
            summaries = [second.get(room) for room in rooms]
            copy.entries = {}
            copy.whole_at = read.whole_at
            copy.earliest = math.inf
        else:
            rooms, scores, summaries = read.rooms, first, second
        entries = copy.entries
        for room, score, summary in zip(rooms, scores, summaries, strict=True):
            if score is None or not summary:
                entries.pop(room, None)  # pruned meanwhile
            else:
                entries[room] = (float(score), summary)
                copy.earliest = min(copy.earliest, float(score))
        copy.seen = read.seen
        self._ranked = None

    def _listed(self, now: int, limit: int) -> list[bytes]:
        """Every copy's live entries, latest expiry first; expired ones are dropped. Ranked
        again only when an entry came, changed or left: most seconds, none did."""
        for copy in self._copies:
            if copy.earliest <= now:  # a bucket is scanned only when an entry has expired
                self._drop_expired(copy, now)
        ranked = self._ranked
        if ranked is None:
            live = [entry for copy in self._copies for entry in copy.entries.values()]
            live.sort(key=_expiry, reverse=True)  # stable: ties keep their order
            ranked = self._ranked = [summary for _, summary in live]
        return ranked[:limit]

    def _drop_expired(self, copy: _Bucket, now: int) -> None:
        entries = copy.entries
        gone = [room for room, (score, _) in entries.items() if score <= now]
        for room in gone:
            del entries[room]
        copy.earliest = min((score for score, _ in entries.values()), default=math.inf)
        if gone:
            self._ranked = None
