"""The room store: Redis is the source of truth.

Keys of one room share the hash tag ``{room:<id>}`` (so one room lives in one Cluster slot)::

    <prefix>{room:<id>}:room      hash    version, seq, record (JSON: game state + room metadata)
    <prefix>{room:<id>}:log       stream  the event log; entry id ``0-<seq>``, field ``e`` (JSON)
    <prefix>{room:<id>}:seats     hash    seat metadata (sha256 of seat tokens, player ids, names)
    <prefix>{room:<id>}:results   hash    command-id -> ``<seq>|<result JSON>`` (idempotency)
    <prefix>{room:<id>}:resorder  list    insertion order of ``results``, to cap it
    <prefix>{room:<id>}:spectators zset   spectator connection -> lease expiry (ms)

Process-wide keys (each a single key, so also fine on Cluster)::

    <prefix>rooms                 zset    room index, scored by the room's expiry time (ms)
    <prefix>rooms:info            hash    room id -> summary JSON (status, public, players, ...)
    <prefix>deadlines             zset    room id -> next deadline (ms since the epoch): the turn
                                          timer, or when an absent player's turn is played
    <prefix>presence              zset    ``<room>|<player>|<connection>`` -> lease expiry (ms)

and the pub/sub channel ``<prefix>wake:<id>`` carrying a wake-up (the last seq) or, prefixed
with ``kick ``, the id of a connection whose seat was taken back by another connection.

Player connections hold leases in ``presence``, renewed by the process that serves them; when a
process dies its leases run out and any process's sweeper claims each one (``ZREM`` succeeds for
exactly one caller) and marks the player disconnected through the usual compare-and-set.

Every change of a room goes through :meth:`RoomStore.commit`, one Lua script
(``transition.lua``) that checks the expected version, appends the events with consecutive seqs,
writes the record and seat fields, caches the command result, refreshes the TTL of all the room's
keys and publishes the wake-up. Two writers racing on one room can never both win: the loser gets
:class:`Conflict` and retries from a fresh load. Every write sets a TTL (idle period for live
rooms, retention period for finished ones), the results cache is capped, and the indexes are
pruned when read, so nothing grows without bound.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import redis.asyncio as aioredis

__all__ = ["Committed", "Conflict", "LoadedRoom", "RoomKeys", "RoomStore"]

_TRANSITION = (Path(__file__).parent / "transition.lua").read_text(encoding="utf-8")

# Claim a due deadline: push it `lease` ms into the future, so that one process works on it
# while a crashed claimer's entry comes back after the lease. The CAS makes the firing itself
# exactly-once.
_CLAIM = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]), ARGV[1])
  return 1
end
return 0
"""

# Claim an expired player lease: remove it only if it is still expired (not renewed meanwhile).
_CLAIM_LEASE = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
"""

_json_encode = msgspec.json.Encoder().encode
_json_decode = msgspec.json.Decoder().decode


_ROOM_FIELDS = ["version", "seq", "record"]


def now_ms() -> int:
    """Wall-clock milliseconds: the clock of deadlines, leases and ``server_time_ms``."""
    return int(time.time() * 1000)


def _loaded(room_id: str, raw: list[bytes | None]) -> LoadedRoom | None:
    version, seq, record = raw
    if version is None or record is None:
        return None
    return LoadedRoom(room_id, int(version), int(seq or 0), _json_decode(record))


def _seq_of(entry_id: bytes) -> int:
    """The seq of a log entry: its stream id is ``0-<seq>``."""
    return int(entry_id.split(b"-")[1])


def _cached(raw: bytes | None) -> tuple[int, bytes] | None:
    if raw is None:
        return None
    seq, _, value = raw.partition(b"|")
    return int(seq), value


@dataclass(frozen=True, slots=True)
class RoomKeys:
    room: str
    log: str
    seats: str
    results: str
    resorder: str
    channel: str

    def all(self) -> list[str]:
        return [self.room, self.log, self.seats, self.results, self.resorder]


@dataclass(frozen=True, slots=True)
class LoadedRoom:
    room_id: str
    version: int
    seq: int
    record: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Committed:
    version: int
    first_seq: int
    last_seq: int


@dataclass(frozen=True, slots=True)
class Conflict:
    version: int
    seq: int


class RoomStore:
    """Typed access to the room keys; knows Redis, not the rules."""

    def __init__(self, redis: aioredis.Redis, prefix: str = "yz:") -> None:
        self.redis = redis
        # redis-py's return types are unions over decode_responses; this client returns bytes.
        self._r: Any = redis
        self.prefix = prefix
        self._transition = redis.register_script(_TRANSITION)
        self._claim = redis.register_script(_CLAIM)
        self._claim_lease = redis.register_script(_CLAIM_LEASE)
        self.index_key = f"{prefix}rooms"
        self.summary_key = f"{prefix}rooms:info"
        self.deadlines_key = f"{prefix}deadlines"
        self.presence_key = f"{prefix}presence"
        self.wake_pattern = f"{prefix}wake:*"

    def _tagged(self, room_id: str) -> str:
        """The start of every key of one room: the ``{room:<id>}`` hash tag keeps them in one
        Cluster slot, so scripts and pipelines may touch them together."""
        return f"{self.prefix}{{room:{room_id}}}"

    def keys(self, room_id: str) -> RoomKeys:
        base = self._tagged(room_id)
        return RoomKeys(
            room=f"{base}:room",
            log=f"{base}:log",
            seats=f"{base}:seats",
            results=f"{base}:results",
            resorder=f"{base}:resorder",
            channel=f"{self.prefix}wake:{room_id}",
        )

    def room_of_channel(self, channel: str) -> str:
        return channel[len(self.prefix) + len("wake:") :]

    # -- state -------------------------------------------------------------------------------

    async def load(self, room_id: str) -> LoadedRoom | None:
        """The room's record with its version and seq (None when there is no such room)."""
        raw = await self._r.hmget(self.keys(room_id).room, _ROOM_FIELDS)
        return _loaded(room_id, raw)

    async def load_with_result(
        self, room_id: str, cache_field: str
    ) -> tuple[LoadedRoom | None, tuple[int, bytes] | None]:
        """:meth:`load` and :meth:`cached_result` in one round trip (both keys share a slot)."""
        keys = self.keys(room_id)
        pipe = self._r.pipeline(transaction=False)
        pipe.hmget(keys.room, _ROOM_FIELDS)
        pipe.hget(keys.results, cache_field)
        raw, cached = await pipe.execute()
        return _loaded(room_id, raw), _cached(cached)

    async def commit(
        self,
        room_id: str,
        expected_version: int,
        record: Mapping[str, Any],
        events: Sequence[Mapping[str, Any]] = (),
        *,
        ttl_seconds: int,
        seats: Mapping[str, str] | None = None,
        cache_field: str | None = None,
        cache_value: bytes | str = b"",
        cache_size: int = 1024,
    ) -> Committed | Conflict:
        """Atomically apply one transition; see ``transition.lua``."""
        keys = self.keys(room_id)
        seat_items = list((seats or {}).items())
        args: list[Any] = [
            expected_version,
            _json_encode(record),
            max(1, int(ttl_seconds)),
            keys.channel,
            cache_field or "",
            cache_value,
            cache_size,
            len(seat_items),
        ]
        for field, value in seat_items:
            args += [field, value]
        args.append(len(events))
        args += [_json_encode(event) for event in events]
        result = await self._transition(keys=keys.all(), args=args)
        if int(result[0]) == 1:
            return Committed(int(result[1]), int(result[2]), int(result[3]))
        return Conflict(int(result[1]), int(result[2]))

    # -- log ---------------------------------------------------------------------------------

    async def read_events(
        self, room_id: str, after_seq: int = 0, count: int | None = None
    ) -> list[tuple[int, dict[str, Any]]]:
        """Events with seq > ``after_seq``, in order (empty when none or the room expired)."""
        entries = await self._r.xrange(
            self.keys(room_id).log, min=f"0-{after_seq + 1}", max="+", count=count
        )
        return [(_seq_of(entry_id), _json_decode(fields[b"e"])) for entry_id, fields in entries]

    async def first_seq(self, room_id: str) -> int | None:
        """Seq of the oldest event still in the log (None when the log is empty or gone)."""
        entries = await self._r.xrange(self.keys(room_id).log, min="-", max="+", count=1)
        if not entries:
            return None
        return _seq_of(entries[0][0])

    async def current_seq(self, room_id: str) -> int | None:
        raw: bytes | None = await self._r.hget(self.keys(room_id).room, "seq")
        return int(raw) if raw is not None else None

    # -- spectators (leases: a crashed process's spectators drop out when theirs run out) ------

    def spectators_key(self, room_id: str) -> str:
        return f"{self._tagged(room_id)}:spectators"

    async def spectator_put(self, room_id: str, conn_id: str, lease_ms: int) -> int:
        """Add or refresh a spectator lease; returns the live spectator count."""
        key = self.spectators_key(room_id)
        now = now_ms()
        pipe = self._r.pipeline(transaction=True)
        pipe.zadd(key, {conn_id: now + lease_ms})
        pipe.zremrangebyscore(key, "-inf", now)
        pipe.zcard(key)
        pipe.pexpire(key, lease_ms * 2)
        result = await pipe.execute()
        return int(result[2])

    async def spectator_drop(self, room_id: str, conn_id: str) -> int:
        key = self.spectators_key(room_id)
        pipe = self._r.pipeline(transaction=True)
        pipe.zrem(key, conn_id)
        pipe.zremrangebyscore(key, "-inf", now_ms())
        pipe.zcard(key)
        result = await pipe.execute()
        return int(result[2])

    # -- seats and idempotency ---------------------------------------------------------------

    async def seat_fields(self, room_id: str) -> dict[str, str]:
        raw: dict[bytes, bytes] = await self._r.hgetall(self.keys(room_id).seats)
        return {k.decode(): v.decode() for k, v in raw.items()}

    async def seat_field(self, room_id: str, field: str) -> str | None:
        raw: bytes | None = await self._r.hget(self.keys(room_id).seats, field)
        return raw.decode() if raw is not None else None

    async def cached_result(self, room_id: str, field: str) -> tuple[int, bytes] | None:
        """The seq and result cached for command ``field`` (see ``transition.lua``), if any."""
        return _cached(await self._r.hget(self.keys(room_id).results, field))

    # -- room index --------------------------------------------------------------------------

    async def index_put(self, room_id: str, summary: Mapping[str, Any], expires_ms: int) -> None:
        """Record a room's summary (status, public, players, ...) until ``expires_ms``."""
        pipe = self._r.pipeline(transaction=False)
        pipe.zadd(self.index_key, {room_id: expires_ms})
        pipe.hset(self.summary_key, room_id, _json_encode(summary))
        await pipe.execute()

    async def index_list(self, limit: int = 1000) -> list[tuple[str, dict[str, Any]]]:
        """Summaries of rooms not yet expired, most recently active first (prunes expired)."""
        await self.index_prune()
        ids: list[bytes] = await self._r.zrevrange(self.index_key, 0, limit - 1)
        if not ids:
            return []
        raw: list[bytes | None] = await self._r.hmget(self.summary_key, ids)
        return [
            (room_id.decode(), _json_decode(info))
            for room_id, info in zip(ids, raw, strict=True)
            if info is not None
        ]

    async def index_prune(self) -> None:
        expired: list[bytes] = await self._r.zrangebyscore(
            self.index_key, "-inf", now_ms(), start=0, num=1000
        )
        if expired:
            pipe = self._r.pipeline(transaction=False)
            pipe.zrem(self.index_key, *expired)
            pipe.hdel(self.summary_key, *expired)
            await pipe.execute()

    # -- turn deadlines ----------------------------------------------------------------------

    async def set_deadline(self, room_id: str, at_ms: int | None) -> None:
        if at_ms is None:
            await self._r.zrem(self.deadlines_key, room_id)
        else:
            await self._r.zadd(self.deadlines_key, {room_id: at_ms})

    async def due_deadlines(self, at_ms: int, limit: int = 50) -> list[str]:
        ids: list[bytes] = await self._r.zrangebyscore(
            self.deadlines_key, "-inf", at_ms, start=0, num=limit
        )
        return [i.decode() for i in ids]

    async def claim_deadline(self, room_id: str, at_ms: int, lease_ms: int = 5000) -> bool:
        """True for exactly one caller per due deadline (until the lease runs out)."""
        won = await self._claim(keys=[self.deadlines_key], args=[room_id, at_ms, lease_ms])
        return int(won) == 1

    # -- player leases (a crashed process's players are swept when theirs run out) ----------

    @staticmethod
    def _lease_member(room_id: str, player_id: str, conn_id: str) -> str:
        return f"{room_id}|{player_id}|{conn_id}"

    async def player_lease_put(
        self, room_id: str, player_id: str, conn_id: str, lease_ms: int
    ) -> bool:
        """Add or renew a lease; True when it was not there (new, or swept meanwhile)."""
        member = self._lease_member(room_id, player_id, conn_id)
        added = await self._r.zadd(self.presence_key, {member: now_ms() + lease_ms})
        return int(added) == 1

    async def player_lease_drop(self, room_id: str, player_id: str, conn_id: str) -> None:
        await self._r.zrem(self.presence_key, self._lease_member(room_id, player_id, conn_id))

    async def expired_player_leases(
        self, at_ms: int, limit: int = 100
    ) -> list[tuple[str, str, str, str]]:
        """Expired leases as (member, room, player, connection)."""
        raw: list[bytes] = await self._r.zrangebyscore(
            self.presence_key, "-inf", at_ms, start=0, num=limit
        )
        out = []
        for item in raw:
            member = item.decode()
            room_id, player_id, conn_id = member.split("|", 2)
            out.append((member, room_id, player_id, conn_id))
        return out

    async def claim_player_lease(self, member: str, at_ms: int) -> bool:
        """True for exactly one caller per expired lease (False if it was renewed meanwhile)."""
        won = await self._claim_lease(keys=[self.presence_key], args=[member, at_ms])
        return int(won) == 1

    async def kick(self, room_id: str, conn_id: str) -> None:
        """Tell every process that connection ``conn_id`` no longer holds its seat."""
        await self._r.publish(self.keys(room_id).channel, f"kick {conn_id}")
