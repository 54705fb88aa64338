"""Redis data of correspondence rooms that lives outside a room's slot: each remembered
player's games and turns, and the outbox of the reminder webhook.

Keys (``<prefix>`` as the room store's)::

    <prefix>{p:<identity>}:turns   zset  room id -> the turn's deadline (ms): the player's turn
    <prefix>{p:<identity>}:games   zset  room id -> when the game was first indexed (ms): the
                                         player's running correspondence games
    <prefix>{outbox}:due           zset  delivery id -> its next attempt (ms)
    <prefix>{outbox}:bodies        hash  delivery id -> the JSON body (signed as it is)
    <prefix>{outbox}:tries         hash  delivery id -> failed attempts so far
    <prefix>{outbox}:dead          list  bodies given up on (the newest 1000)

A player's two sets share a hash tag, so one script updates them together on a Cluster too
(scripts, not ``MULTI`` pipelines: the Cluster client's pipelines are avoided, as in the room
store).
They are written after a room's commit, only when its turn moved (never on a roll or a hold),
and they are hints: the route that reads them checks each room's record, the truth.

The outbox is claimed like the deadline schedule: a due id is pushed a lease into the future
by the process that sends it, so a process that dies mid-send leaves it to be sent again
(at-least-once; the id is the receiver's idempotency key).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from server.storage.interface import fault_boundary

__all__ = ["CorrespondenceStore", "IndexEntry", "Pending"]

DEAD_LETTERS = 1000
"""Given-up deliveries kept for the operator (the newest)."""


def _lua(name: str) -> str:
    return (Path(__file__).parent / f"{name}.lua").read_text(encoding="utf-8")


@dataclass(frozen=True, slots=True)
class IndexEntry:
    """What one commit changes in one player's index: the room in their running games
    (``running``) and on their turn list with ``deadline_ms`` (None: not their turn)."""

    identity: str
    running: bool
    deadline_ms: int | None = None


@dataclass(frozen=True, slots=True)
class Pending:
    """A claimed delivery: its id, body and the attempts that failed before."""

    id: str
    body: bytes
    tries: int


@fault_boundary
class CorrespondenceStore:
    """The players' turn index and the webhook outbox on Redis (see the module docstring)."""

    def __init__(self, redis: Any, prefix: str = "yz:") -> None:
        self.redis: Any = redis
        self.prefix = prefix
        self._put = redis.register_script(_lua("outbox_put"))
        self._claim = redis.register_script(_lua("claim_deadline"))
        self._index = redis.register_script(_lua("turn_index"))
        self._settle_script = redis.register_script(_lua("outbox_settle"))

    # -- the players' index ---------------------------------------------------------------------

    def _player(self, identity: str, name: str) -> str:
        return f"{self.prefix}{{p:{identity}}}:{name}"

    async def index(self, room_id: str, entries: list[IndexEntry], now: int) -> None:
        """Record the room's place in each player's games and turns (one script a player)."""
        for entry in entries:
            keys = [self._player(entry.identity, "games"), self._player(entry.identity, "turns")]
            deadline = "" if entry.deadline_ms is None else entry.deadline_ms
            args = [room_id, "1" if entry.running else "0", deadline, now]
            await self._index(keys=keys, args=args)

    async def games_of(self, identity: str, limit: int = 100) -> list[tuple[str, int | None]]:
        """The player's running correspondence games, oldest first, each with its turn's
        deadline when it is the player's turn (else None)."""
        games = await self.redis.zrange(self._player(identity, "games"), 0, limit - 1)
        turns = await self.redis.zrange(self._player(identity, "turns"), 0, -1, withscores=True)
        deadlines = {room.decode(): int(score) for room, score in turns}
        return [(room.decode(), deadlines.get(room.decode())) for room in games]

    async def forget(self, identity: str, room_id: str) -> None:
        """Drop a room that no longer exists from the player's index."""
        await self.index(room_id, [IndexEntry(identity, running=False)], 0)

    # -- the outbox -----------------------------------------------------------------------------

    def _outbox(self, name: str) -> str:
        return f"{self.prefix}{{outbox}}:{name}"

    async def enqueue(self, delivery_id: str, body: bytes, at_ms: int) -> bool:
        """Queue a delivery to be sent from ``at_ms``; False when this id was queued already."""
        keys = [self._outbox("due"), self._outbox("bodies")]
        return int(await self._put(keys=keys, args=[delivery_id, body, at_ms])) == 1

    async def due(self, now: int, limit: int = 50) -> list[str]:
        """Ids of deliveries due at ``now`` (not yet claimed by a sender)."""
        found = await self.redis.zrangebyscore(self._outbox("due"), "-inf", now, 0, limit)
        return [item.decode() for item in found]

    async def claim(self, delivery_id: str, now: int, lease_ms: int) -> Pending | None:
        """Claim a due delivery for ``lease_ms`` (None: another sender has it, or it is done)."""
        claimed = await self._claim(keys=[self._outbox("due")], args=[delivery_id, now, lease_ms])
        if int(claimed) != 1:
            return None
        body = await self.redis.hget(self._outbox("bodies"), delivery_id)
        if body is None:  # delivered meanwhile by a sender whose lease ran out
            await self.done(delivery_id)
            return None
        tries = await self.redis.hget(self._outbox("tries"), delivery_id)
        return Pending(delivery_id, body, int(tries or 0))

    async def _settle(self, delivery_id: str, outcome: str, at_ms: int = 0) -> None:
        keys = [self._outbox(name) for name in ("due", "bodies", "tries", "dead")]
        await self._settle_script(keys=keys, args=[delivery_id, outcome, at_ms, DEAD_LETTERS])

    async def done(self, delivery_id: str) -> None:
        """The delivery was accepted (or is no longer wanted): forget it."""
        await self._settle(delivery_id, "done")

    async def retry(self, delivery_id: str, at_ms: int) -> None:
        """The attempt failed: count it and try again from ``at_ms``."""
        await self._settle(delivery_id, "retry", at_ms)

    async def give_up(self, pending: Pending) -> None:
        """Too many attempts failed: keep the body among the dead letters and forget it."""
        await self._settle(pending.id, "dead")
