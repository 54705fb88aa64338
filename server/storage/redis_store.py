"""The room store on Redis and Redis Cluster (the source of truth): :class:`RedisStore`
implements :class:`~server.storage.interface.Store`; the keys it uses are in
:mod:`server.storage.keys`.

Every change of a room is one call of ``transition.lua``: idempotency check, version check,
seat changes, log append, record write, TTLs, and the sharded publication (``SPUBLISH`` on
``<prefix>{room:<id>}:events``) of the events themselves, so other processes need not read the
log. A process whose feed listens to a room joins the room's listeners set first
(:meth:`RedisStore.listen`); a commit publishes only when a process other than the committer
listens (the committer delivers to its own subscribers): with one process, nothing is
published. The deadline and the index are hints outside the room's slot, written only when they
change (a new turn with a timer, a join, the game's end), never on a plain roll or hold.

When replicas must confirm a transition (on a Cluster by default, see :class:`RedisStore`), the
script runs with ``WAIT`` on the same connection (:mod:`server.storage.replicas`) and does not
publish: the store publishes the events once a replica confirmed them (always: the listeners
are not asked there).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from server.boundary import wire
from server.storage.interface import (
    TRANSIENT_ERRORS,
    Committed,
    Conflict,
    Duplicate,
    NotReplicatedError,
    Store,
    StoredRoom,
    Transition,
    classify_fault,
    fault_boundary,
    lease_member,
    parse_cached,
    parse_lease,
)
from server.storage.keys import RoomKeys, room_keys
from server.storage.lobby_index import LobbyIndex
from server.storage.pipe import ScriptPipe
from server.storage.replicas import ReplicaWait

__all__ = [
    "TRANSIENT_ERRORS",
    "Committed",
    "Conflict",
    "Duplicate",
    "RedisStore",
    "Store",
    "StoredRoom",
    "Transition",
    "lease_member",
    "parse_lease",
]

log = logging.getLogger("yahtzee.store")
_Call = tuple[str, tuple[Any, ...], dict[str, Any]]  # a client method's name, args, kwargs


def _lua(name: str) -> str:
    """The script in this package's ``<name>.lua`` (every Lua script of the store is a file)."""
    return (Path(__file__).parent / f"{name}.lua").read_text(encoding="utf-8")


_TRANSITION = _lua("transition")


@fault_boundary
class RedisStore:
    """:class:`Store` on Redis or Redis Cluster (redis-py's asyncio clients).

    ``min_replicas`` (None: 1 on a Cluster master that has a replica, else 0) replicas must
    confirm a transition within ``replication_timeout`` seconds before :meth:`commit` returns
    it; then its events are published (not by the script). Fewer in time:
    :class:`NotReplicatedError` (retryable; the retry's duplicate is confirmed the same way)."""

    def __init__(
        self,
        redis: Any,
        prefix: str = "yz:",
        buckets: int = 8,
        *,
        min_replicas: int | None = 0,
        replication_timeout: float = 0.5,
    ) -> None:
        # redis-py's return types are unions over decode_responses; this client returns bytes.
        self.redis: Any = redis
        self.prefix = prefix
        self.buckets = max(1, buckets)
        self.replicas = ReplicaWait(redis, min_replicas, replication_timeout)
        self._transition = redis.register_script(_TRANSITION)
        # the hot path: transitions pipelined on a connection of their own (single Redis)
        self._pipe = None if self.replicas.cluster else ScriptPipe(redis, self._transition)
        # the schedule's bucket is in another slot than the room's keys on a Cluster
        self.commits_deadlines = not self.replicas.cluster
        self._cached_result = redis.register_script(_lua("cached_result"))
        self._index_put = redis.register_script(_lua("index_put"))
        self._claim_deadline = redis.register_script(_lua("claim_deadline"))
        self._claim_lease = redis.register_script(_lua("claim_lease"))
        self._renew_leases = redis.register_script(_lua("renew_leases"))
        self._spectator_drop = redis.register_script(_lua("spectator_drop"))
        self._spectators_renew = redis.register_script(_lua("spectators_renew"))
        self._listen = redis.register_script(_lua("listen"))
        self._due_members = redis.register_script(_lua("due"))
        self._lobby = LobbyIndex(self.buckets, self._global, self._batch)
        #: This process's name in the rooms' listeners sets (see :meth:`listen`).
        self.listener_id = secrets.token_hex(8)

    # -- key names ------------------------------------------------------------------------------

    def keys(self, room_id: str) -> RoomKeys:
        return room_keys(self.prefix, room_id)

    def channel(self, room_id: str) -> str:
        """The room's sharded pub/sub channel (in the room's slot)."""
        return self.keys(room_id).channel

    def bucket_of(self, room_id: str) -> int:
        return zlib.crc32(room_id.encode()) % self.buckets

    def _global(self, name: str, bucket: int) -> str:
        return f"{self.prefix}{{g{bucket}}}:{name}"

    # -- room state -----------------------------------------------------------------------------

    async def load(self, room_id: str) -> StoredRoom | None:
        version, seq, record = await self.redis.hmget(
            self.keys(room_id).room, ["version", "seq", "record"]
        )
        if version is None or record is None:
            return None
        return StoredRoom(int(version), int(seq or 0), record)

    def _replicas_for(self, keys: RoomKeys) -> int:
        return self.replicas.replicas_for(keys.room) if self.replicas.enabled else 0

    def awaits_replicas(self, room_id: str) -> bool:
        """Whether the room's commits wait for replicas: then the store publishes their events
        once confirmed, to every listener, and its log may hold writes not confirmed yet."""
        return self._replicas_for(self.keys(room_id)) > 0

    async def commit(self, room_id: str, t: Transition) -> Committed | Conflict | Duplicate:
        keys = self.keys(room_id)
        wanted = self._replicas_for(keys)
        args: list[Any] = [
            t.expected_version,
            t.record,
            max(1, int(t.ttl_seconds)),
            keys.channel,
            t.cache_field,
            t.cache_value,
            t.cache_size,
            b"" if wanted else t.publish,  # published below, once replicated
            t.new_version,
            self.listener_id,
            len(t.seats),
        ]
        for name, value in t.seats.items():
            args += [name, value]
        args.append(len(t.events))
        args += t.events
        script_keys = keys.transition()
        if t.deadline_changed and self.commits_deadlines:
            script_keys.append(self._global("deadlines", self.bucket_of(room_id)))
            args += [room_id, "-" if t.deadline_ms is None else t.deadline_ms]
        if not wanted:
            if self._pipe is not None:
                reply = await self._pipe(script_keys, args)
            else:
                reply = await self._transition(keys=script_keys, args=args)
        else:
            reply, confirmed = await self.replicas.eval(self._transition, script_keys, args, wanted)
            if int(reply[0]) in (1, 2) and confirmed < wanted:
                raise NotReplicatedError(f"{confirmed} of {wanted} replicas confirmed in time")
        kind = int(reply[0])
        if kind == 1:
            if wanted and t.publish:
                await self._publish(keys, t.publish)
            return Committed(int(reply[1]), int(reply[2]), int(reply[3]))
        if kind == 2:
            cached = parse_cached(reply[1])
            assert cached is not None
            if wanted:
                await self._republish(room_id, cached.seq)
            return cached
        version, seq, record = int(reply[1]), int(reply[2]), reply[3]
        return Conflict(StoredRoom(version, seq, record) if version else None)

    async def cached_result(self, room_id: str, key: str) -> Duplicate | None:
        keys = self.keys(room_id)
        wanted = self._replicas_for(keys)
        if not wanted:
            return parse_cached(await self.redis.hget(keys.results, key))
        raw, confirmed = await self.replicas.eval(self._cached_result, [keys.results], [key],
                                                  wanted)  # fmt: skip
        cached = parse_cached(raw)
        if cached is not None:
            if confirmed < wanted:
                raise NotReplicatedError(f"{confirmed} of {wanted} replicas confirmed in time")
            await self._republish(room_id, cached.seq)
        return cached

    async def _publish(self, keys: RoomKeys, message: bytes) -> None:
        """Publish replicated events. The transition stands even if this fails: subscribers
        find the events in the log at the next gap or after resubscribing."""
        try:
            await self.redis.spublish(keys.channel, message)
        except TRANSIENT_ERRORS as exc:
            log.warning("events on %s committed but not published: %s", keys.channel, exc)

    async def _republish(self, room_id: str, seq: int) -> None:
        """A retry found its first execution, which may never have been published (its wait
        fell short): publish the room's event at ``seq`` again. A subscriber that has it drops
        it; one that is behind reads the gap from the log."""
        found = await self.read_events(room_id, seq - 1, count=1)
        if found and found[0][0] == seq:
            batch = wire.encode_batch([wire.from_log(seq, found[0][1])])
            await self._publish(self.keys(room_id), batch)

    async def listen(self, room_id: str) -> None:
        """This process listens to the room now: commits publish their events to it.
        Called once subscribed and before the room's log is read, so that every commit is
        either in what is read or published; the set lives as long as the room's keys."""
        keys = self.keys(room_id)
        await self._listen(keys=[keys.listeners, keys.room], args=[self.listener_id])

    async def unlisten(self, room_id: str) -> None:
        """This process no longer listens to the room (a left-over id costs only a publication
        nobody reads: it goes with the room's keys)."""
        await self.redis.srem(self.keys(room_id).listeners, self.listener_id)

    async def read_events(
        self, room_id: str, after_seq: int, count: int | None = None
    ) -> list[tuple[int, bytes]]:
        entries = await self.redis.xrange(
            self.keys(room_id).log, min=f"0-{after_seq + 1}", max="+", count=count
        )
        return [(_seq_of(entry_id), fields[b"e"]) for entry_id, fields in entries]

    async def seat_fields(self, room_id: str) -> dict[str, str]:
        raw: dict[bytes, bytes] = await self.redis.hgetall(self.keys(room_id).seats)
        return {k.decode(): v.decode() for k, v in raw.items()}

    # -- spectators (leases: a crashed process's spectators drop out when theirs run out) ------

    async def spectator_put(self, room_id: str, conn_id: str, lease_ms: int, now: int) -> int:
        return await self.spectators_renew(room_id, [conn_id], lease_ms, now)

    async def spectator_drop(self, room_id: str, conn_id: str, now: int) -> int:
        key = self.keys(room_id).spectators
        return int(await self._spectator_drop(keys=[key], args=[conn_id, now]))

    async def spectators_renew(
        self, room_id: str, conn_ids: Sequence[str], lease_ms: int, now: int
    ) -> int:
        """Renew the leases of every connection in ``conn_ids`` watching the room in one call;
        the room's count after the expired ones were pruned."""
        (count,) = await self._renew_spectators([(room_id, conn_ids)], lease_ms, now)
        if isinstance(count, Exception):
            raise count
        return int(count)

    async def spectators_renew_rooms(
        self, renewals: Sequence[tuple[str, Sequence[str]]], lease_ms: int, now: int
    ) -> list[int | Exception]:
        """:meth:`spectators_renew` for many rooms (``(room, connection ids)``): on a single
        Redis one script call for up to :data:`_ROOMS_A_CALL` rooms or :data:`_IDS_A_CALL`
        connections; on a Cluster, whose rooms are on several nodes, a call a room;
        :data:`_CALLS_AT_ONCE` calls at a time. Each room's count, or the error its renewal met
        (classified as a store call's, :func:`classify_fault`), in order. A call a room, all
        at once, was a tenth of an idle process's CPU (a task, a connection checked out, a read
        each)."""
        parts = _renewal_parts(renewals, 1 if self.replicas.cluster else _ROOMS_A_CALL)
        replies: list[Any] = []
        # a wave of calls at a time: thousands at once would take every pooled connection
        # from the players' commands (and fail beyond the pool's bound)
        for start in range(0, len(parts), _CALLS_AT_ONCE):
            wave = parts[start : start + _CALLS_AT_ONCE]
            calls = (self._renew_spectators(part, lease_ms, now) for part in wave)
            replies += await asyncio.gather(*calls, return_exceptions=True)
        counts: list[int | Exception] = []
        for part, reply in zip(parts, replies, strict=True):
            if isinstance(reply, BaseException):
                if not isinstance(reply, Exception):
                    raise reply  # cancelled: not a room's failure
                counts += [classify_fault(reply)] * len(part)
            else:
                counts += [classify_fault(r) if isinstance(r, Exception) else int(r) for r in reply]
        return counts

    async def _renew_spectators(
        self, renewals: Sequence[tuple[str, Sequence[str]]], lease_ms: int, now: int
    ) -> list[Any]:
        """One call of ``spectators_renew.lua``: each room's count or error reply, in order."""
        keys = [self.keys(room_id).spectators for room_id, _ in renewals]
        args: list[Any] = [now + lease_ms, now, lease_ms * 2]
        for _, conn_ids in renewals:
            args += [len(conn_ids), *conn_ids]
        replies: list[Any] = await self._spectators_renew(keys=keys, args=args)
        return replies

    # -- room index -----------------------------------------------------------------------------

    async def index_put(self, room_id: str, summary: bytes, expires_ms: int) -> None:
        bucket = self.bucket_of(room_id)
        names = ("rooms", "rooms:info", "rooms:changes", "rooms:changed")
        keys = [self._global(name, bucket) for name in names]
        await self._index_put(keys=keys, args=[room_id, expires_ms, summary])

    async def index_list(self, now: int, limit: int) -> list[bytes]:
        """Summaries of live rooms, most recently active first (expired entries pruned), from
        this process's copy of the index, which reads only the entries changed since its last
        read (:mod:`server.storage.lobby_index`). A bucket whose node does not answer (a
        Cluster master failing over) keeps the entries last read."""
        return await self._lobby.read(now, limit)

    async def _batch(self, calls: list[_Call]) -> list[Any]:
        """Several commands; their replies (or errors) in order. On a single Redis one pipeline;
        on a Cluster each command on its own, all at once: the cluster client's pipeline, when
        a node fails, closes the connections to every node, failing other commands in flight."""
        if self.replicas.cluster:
            calling = (getattr(self.redis, name)(*a, **kw) for name, a, kw in calls)
            return list(await asyncio.gather(*calling, return_exceptions=True))
        pipe = self.redis.pipeline(transaction=False)
        for name, a, kw in calls:
            getattr(pipe, name)(*a, **kw)
        replies: list[Any] = await pipe.execute(raise_on_error=False)
        return replies

    async def _due(self, name: str, now: int, limit: int) -> list[str]:
        """The members of every bucket's ``name`` zset scored up to ``now`` (``limit`` a bucket),
        in one round trip: one script call on a single Redis (``due.lua``), a command a bucket
        on a Cluster (:meth:`_batch`), where a bucket whose node does not answer (a master
        failing over) is skipped, so the others are still served; when nothing was found and
        a bucket failed, its error is raised."""
        if not self.replicas.cluster:
            keys = [self._global(name, k) for k in range(self.buckets)]
            members: list[bytes] = await self._due_members(keys=keys, args=[now, limit])
            return [member.decode() for member in members]
        calls: list[_Call] = [
            ("zrangebyscore", (self._global(name, k), "-inf", now), {"start": 0, "num": limit})
            for k in range(self.buckets)
        ]
        found: list[str] = []
        failed: Exception | None = None
        for k, reply in enumerate(await self._batch(calls)):
            if isinstance(reply, TRANSIENT_ERRORS):
                failed = reply
                log.warning("%s bucket %d skipped: %s", name, k, reply)
            elif isinstance(reply, Exception):
                raise reply
            else:
                found += [member.decode() for member in reply]
        if failed is not None and not found:
            raise failed
        return found

    # -- deadlines ------------------------------------------------------------------------------

    async def set_deadline(self, room_id: str, at_ms: int | None) -> None:
        key = self._global("deadlines", self.bucket_of(room_id))
        if at_ms is None:
            await self.redis.zrem(key, room_id)
        else:
            await self.redis.zadd(key, {room_id: at_ms})

    async def due_deadlines(self, now: int, limit: int = 50) -> list[str]:
        return await self._due("deadlines", now, limit)

    async def claim_deadline(self, room_id: str, now: int, lease_ms: int = 5000) -> bool:
        key = self._global("deadlines", self.bucket_of(room_id))
        return int(await self._claim_deadline(keys=[key], args=[room_id, now, lease_ms])) == 1

    # -- player leases --------------------------------------------------------------------------

    async def lease_put(self, member: str, room_id: str, expires_ms: int) -> bool:
        """Add or renew a lease; True when it was not there (new, or swept meanwhile)."""
        key = self._global("presence", self.bucket_of(room_id))
        return int(await self.redis.zadd(key, {member: expires_ms})) == 1

    async def leases_put(self, leases: Sequence[tuple[str, str]], expires_ms: int) -> list[str]:
        """Add or renew many leases (``(member, room_id)`` pairs) in one script call a bucket,
        the buckets at once; the members that were not there (new, or swept meanwhile)."""
        by_bucket: dict[int, list[str]] = {}
        for member, room_id in leases:
            by_bucket.setdefault(self.bucket_of(room_id), []).append(member)
        calls = [
            self._renew_leases(keys=[self._global("presence", bucket)],
                               args=[expires_ms, *members[start : start + _LEASES_A_CALL]])
            for bucket, members in by_bucket.items()
            for start in range(0, len(members), _LEASES_A_CALL)
        ]  # fmt: skip
        replies = await asyncio.gather(*calls)
        return [member.decode() for reply in replies for member in reply]

    async def lease_drop(self, member: str, room_id: str) -> None:
        await self.redis.zrem(self._global("presence", self.bucket_of(room_id)), member)

    async def expired_leases(self, now: int, limit: int = 100) -> list[str]:
        return await self._due("presence", now, limit)

    async def claim_lease(self, member: str, room_id: str, now: int) -> bool:
        key = self._global("presence", self.bucket_of(room_id))
        return int(await self._claim_lease(keys=[key], args=[member, now])) == 1

    # -- create keys and kicks ------------------------------------------------------------------

    async def reserve_create_key(self, key_hash: str, value: bytes) -> bytes | None:
        """Store ``value`` under a create key for an hour; returns the earlier value if the key
        was used already (then nothing is written)."""
        key = f"{self.prefix}{{ck:{key_hash}}}"
        old: bytes | None = await self.redis.set(key, value, nx=True, ex=3600, get=True)
        return old

    async def publish_kick(self, room_id: str, conn_id: str) -> None:
        """Tell every process serving the room that ``conn_id`` no longer holds its seat."""
        await self.redis.spublish(self.channel(room_id), wire.encode_kick(conn_id))


_LEASES_A_CALL = 500  # members a script call: bounds the time Redis spends in one script
_ROOMS_A_CALL = 200  # rooms a spectator renewal call, for the same reason
_IDS_A_CALL = 2_000  # connections a spectator renewal call (one room may have more)
_CALLS_AT_ONCE = 32  # spectator renewal calls in flight at once (a call a room on a Cluster)


def _seq_of(entry_id: bytes) -> int:
    """The seq of a log entry: its stream id is ``0-<seq>``."""
    return int(entry_id.split(b"-")[1])


def _renewal_parts(
    renewals: Sequence[tuple[str, Sequence[str]]], rooms_a_call: int
) -> list[Sequence[tuple[str, Sequence[str]]]]:
    """``renewals`` in order, cut into script calls of at most ``rooms_a_call`` rooms and, but
    for a room alone in its call, :data:`_IDS_A_CALL` connections."""
    parts: list[Sequence[tuple[str, Sequence[str]]]] = []
    part: list[tuple[str, Sequence[str]]] = []
    ids = 0
    for renewal in renewals:
        if part and (len(part) == rooms_a_call or ids + len(renewal[1]) > _IDS_A_CALL):
            parts.append(part)
            part, ids = [], 0
        part.append(renewal)
        ids += len(renewal[1])
    if part:
        parts.append(part)
    return parts
