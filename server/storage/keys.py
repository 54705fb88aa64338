"""The Redis keys of the store (:class:`~server.storage.redis_store.RedisStore`).

Keys of one room share the hash tag ``{room:<id>}``, so one room lives in one Cluster slot and
one script may touch all of them::

    <prefix>{room:<id>}:room       hash    version, seq, record (see :mod:`server.domain.room`)
    <prefix>{room:<id>}:log        stream  the event log; entry id ``0-<seq>``, field ``e``: the
                                           event, encoded once as MessagePack
    <prefix>{room:<id>}:seats      hash    seat metadata (sha256 of seat tokens, player ids)
    <prefix>{room:<id>}:results    hash    command key -> ``<seq>|<result>`` (idempotency)
    <prefix>{room:<id>}:resorder   list    insertion order of ``results``, to cap it
    <prefix>{room:<id>}:spectators zset    spectator connection -> lease expiry (ms)
    <prefix>{room:<id>}:listeners  set     listener ids of the processes subscribed to the room
                                           (a commit publishes only when another one listens)

Global data is spread over ``buckets`` buckets, each under its own hash tag ``{g<k>}``; a room
belongs to bucket ``crc32(room id) % buckets``. On a Cluster the buckets land on different
nodes, so no single key is a hot spot, and each command touches one slot; the lobby, the due
deadlines and the expired leases are read bucket by bucket, and a bucket whose master is failing
over is skipped until its replica took over (the others are still served)::

    <prefix>{g<k>}:rooms           zset    room index, scored by the room's expiry time (ms)
    <prefix>{g<k>}:rooms:info      hash    room id -> summary JSON (status, players, ...)
    <prefix>{g<k>}:rooms:changes   string  the number of the bucket's last entry write
    <prefix>{g<k>}:rooms:changed   zset    room id -> the number of its entry's last write
    <prefix>{g<k>}:deadlines       zset    room id -> its next deadline (ms)
    <prefix>{g<k>}:presence        zset    ``<room>|<player>|<connection>`` -> lease expiry (ms)
    <prefix>{ck:<hash>}            string  a ``create_key``'s room (1 hour)
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RoomKeys", "room_keys"]


@dataclass(frozen=True, slots=True)
class RoomKeys:
    """The keys of one room (all in the room's Cluster slot) and its pub/sub channel."""

    room: str
    log: str
    seats: str
    results: str
    resorder: str
    spectators: str
    listeners: str
    channel: str

    def transition(self) -> list[str]:
        """The keys ``transition.lua`` takes, in its order."""
        return [self.room, self.log, self.seats, self.results, self.resorder, self.listeners]


def room_keys(prefix: str, room_id: str) -> RoomKeys:
    """The keys of room ``room_id`` under ``prefix``."""
    base = f"{prefix}{{room:{room_id}}}"
    return RoomKeys(
        room=f"{base}:room",
        log=f"{base}:log",
        seats=f"{base}:seats",
        results=f"{base}:results",
        resorder=f"{base}:resorder",
        spectators=f"{base}:spectators",
        listeners=f"{base}:listeners",
        channel=f"{base}:events",
    )
