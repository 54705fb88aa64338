"""The store in this process's memory: the same contract as :class:`server.store.RedisStore`
(atomic transitions with version check and idempotency, the log, seats, buckets of global
data), for unit tests of the service that need no Redis and for reading the contract in plain
Python. It publishes nothing: a test hands committed events on through the service's
``deliver`` callback, as the feed does for local subscribers.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from server.storage import Committed, Conflict, Duplicate, StoredRoom, Transition

__all__ = ["MemoryStore"]


@dataclass
class _Room:
    version: int = 0
    seq: int = 0
    record: bytes = b""
    log: list[tuple[int, bytes]] = field(default_factory=list)
    seats: dict[str, str] = field(default_factory=dict)
    results: OrderedDict[str, Duplicate] = field(default_factory=OrderedDict)
    spectators: dict[str, int] = field(default_factory=dict)


class MemoryStore:
    """:class:`server.storage.Store` on dictionaries (one process; no expiry)."""

    def __init__(self) -> None:
        self.rooms: dict[str, _Room] = {}
        self.index: dict[str, tuple[int, bytes]] = {}
        self.deadlines: dict[str, int] = {}
        self.leases: dict[str, int] = {}
        self.create_keys: dict[str, bytes] = {}
        self.kicks: list[tuple[str, str]] = []

    async def load(self, room_id: str) -> StoredRoom | None:
        room = self.rooms.get(room_id)
        return StoredRoom(room.version, room.seq, room.record) if room else None

    async def commit(self, room_id: str, t: Transition) -> Committed | Conflict | Duplicate:
        room = self.rooms.get(room_id)
        if t.cache_field and room is not None and t.cache_field in room.results:
            return room.results[t.cache_field]
        if (room.version if room else 0) != t.expected_version:
            return Conflict(await self.load(room_id))
        room = room or self.rooms.setdefault(room_id, _Room())
        for name, value in t.seats.items():
            if value:
                room.seats[name] = value
            else:
                room.seats.pop(name, None)
        first = room.seq + 1
        for event in t.events:
            room.seq += 1
            room.log.append((room.seq, event))
        room.version = t.new_version
        room.record = t.record
        if t.cache_field:
            room.results[t.cache_field] = Duplicate(room.seq, t.cache_value)
            while len(room.results) > t.cache_size:
                room.results.popitem(last=False)
        return Committed(room.version, first, room.seq)

    async def cached_result(self, room_id: str, key: str) -> Duplicate | None:
        room = self.rooms.get(room_id)
        return room.results.get(key) if room else None

    async def read_events(
        self, room_id: str, after_seq: int, count: int | None = None
    ) -> list[tuple[int, bytes]]:
        room = self.rooms.get(room_id)
        events = [e for e in room.log if e[0] > after_seq] if room else []
        return events[:count] if count is not None else events

    async def seat_fields(self, room_id: str) -> dict[str, str]:
        room = self.rooms.get(room_id)
        return dict(room.seats) if room else {}

    async def spectator_put(self, room_id: str, conn_id: str, lease_ms: int, now: int) -> int:
        spectators = self.rooms.setdefault(room_id, _Room()).spectators
        spectators[conn_id] = now + lease_ms
        return await self.spectator_drop(room_id, "", now)

    async def spectator_drop(self, room_id: str, conn_id: str, now: int) -> int:
        room = self.rooms.get(room_id)
        if room is None:
            return 0
        room.spectators.pop(conn_id, None)
        room.spectators = {c: t for c, t in room.spectators.items() if t > now}
        return len(room.spectators)

    async def index_put(self, room_id: str, summary: bytes, expires_ms: int) -> None:
        self.index[room_id] = (expires_ms, summary)

    async def index_list(self, now: int, limit: int) -> list[bytes]:
        live = sorted((e for e in self.index.values() if e[0] > now), key=lambda e: -e[0])
        return [summary for _, summary in live[:limit]]

    async def set_deadline(self, room_id: str, at_ms: int | None) -> None:
        if at_ms is None:
            self.deadlines.pop(room_id, None)
        else:
            self.deadlines[room_id] = at_ms

    async def due_deadlines(self, now: int, limit: int = 50) -> list[str]:
        return [r for r, at in self.deadlines.items() if at <= now][:limit]

    async def claim_deadline(self, room_id: str, now: int, lease_ms: int = 5000) -> bool:
        at = self.deadlines.get(room_id)
        if at is None or at > now:
            return False
        self.deadlines[room_id] = now + lease_ms
        return True

    async def lease_put(self, member: str, room_id: str, expires_ms: int) -> bool:
        new = member not in self.leases
        self.leases[member] = expires_ms
        return new

    async def lease_drop(self, member: str, room_id: str) -> None:
        self.leases.pop(member, None)

    async def expired_leases(self, now: int, limit: int = 100) -> list[str]:
        return [m for m, at in self.leases.items() if at <= now][:limit]

    async def claim_lease(self, member: str, room_id: str, now: int) -> bool:
        at = self.leases.get(member)
        if at is None or at > now:
            return False
        del self.leases[member]
        return True

    async def reserve_create_key(self, key_hash: str, value: bytes) -> bytes | None:
        earlier = self.create_keys.get(key_hash)
        if earlier is None:
            self.create_keys[key_hash] = value
        return earlier

    async def publish_kick(self, room_id: str, conn_id: str) -> None:
        self.kicks.append((room_id, conn_id))
