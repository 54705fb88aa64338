"""Rooms waiting for the archive, in Redis (beside the other global keys of a bucket)::

    <prefix>{g<k>}:archive      zset    room id -> when the archiver may try it next (ms)
    <prefix>{g<k>}:archive:at   hash    room id -> when its game ended (ms)

A room is added by the transition that finishes its game (:meth:`PendingArchive.add`, called
right after the commit), claimed by one archiver at a time (its score is pushed a lease into
the future, so a crashed archiver's rooms come back), and removed only once its archive row is
confirmed. Until then the archiver keeps the room's keys from expiring
(:meth:`PendingArchive.keep_alive`): a finished room stays in Redis until it is archived.
"""

from __future__ import annotations

from typing import Any

from server.storage.redis_store import RedisStore

__all__ = ["PendingArchive"]

_ADD = """
redis.call('ZADD', KEYS[1], 'NX', tonumber(ARGV[2]), ARGV[1])
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
"""

_CLAIM = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) <= tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], tonumber(ARGV[2]) + tonumber(ARGV[3]), ARGV[1])
  return redis.call('HGET', KEYS[2], ARGV[1]) or ARGV[2]
end
return false
"""

_DONE = """
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
"""

# Every key of the room that exists and expires within ARGV[1] ms gets ARGV[2] ms again.
_KEEP_ALIVE = """
local kept = 0
for i = 1, #KEYS do
  local left = redis.call('PTTL', KEYS[i])
  if left >= 0 and left < tonumber(ARGV[1]) then
    redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[2]))
    kept = kept + 1
  end
end
return kept
"""


# Every key of the room that has no expiry or a later one than ARGV[1] ms from now expires then.
_EXPIRE_SOON = """
for i = 1, #KEYS do
  local left = redis.call('PTTL', KEYS[i])
  if left == -1 or left > tonumber(ARGV[1]) then
    redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[1]))
  end
end
return 1
"""


class PendingArchive:
    """The rooms whose finished games are not archived yet (see the module docstring)."""

    def __init__(self, store: RedisStore) -> None:
        self.store = store
        self.redis: Any = store.redis
        self._expire_soon = self.redis.register_script(_EXPIRE_SOON)
        self._add = self.redis.register_script(_ADD)
        self._claim = self.redis.register_script(_CLAIM)
        self._done = self.redis.register_script(_DONE)
        self._keep_alive = self.redis.register_script(_KEEP_ALIVE)

    def _keys(self, room_id: str) -> list[str]:
        bucket = self.store.bucket_of(room_id)
        base = f"{self.store.prefix}{{g{bucket}}}:archive"
        return [base, f"{base}:at"]

    async def add(self, room_id: str, finished_ms: int) -> None:
        """Mark the room's game for the archive (a second call changes nothing)."""
        await self._add(keys=self._keys(room_id), args=[room_id, finished_ms])

    async def due(self, now: int, limit: int = 100) -> list[str]:
        """Rooms whose next attempt is due, from every bucket."""
        found: list[str] = []
        for bucket in range(self.store.buckets):
            key = f"{self.store.prefix}{{g{bucket}}}:archive"
            members = await self.redis.zrangebyscore(key, "-inf", now, start=0, num=limit)
            found += [m.decode() for m in members]
        return found

    async def count(self) -> int:
        total = 0
        for bucket in range(self.store.buckets):
            total += int(await self.redis.zcard(f"{self.store.prefix}{{g{bucket}}}:archive"))
        return total

    async def claim(self, room_id: str, now: int, lease_ms: int) -> int | None:
        """Claim a due room for ``lease_ms``: when its game ended (ms), or None when another
        archiver has it (or it is done)."""
        found = await self._claim(keys=self._keys(room_id), args=[room_id, now, lease_ms])
        return None if found is None else int(found)

    async def retry_at(self, room_id: str, at_ms: int) -> None:
        """Try the room again at ``at_ms`` (it stays pending)."""
        await self.redis.zadd(self._keys(room_id)[0], {room_id: at_ms}, xx=True)

    async def done(self, room_id: str) -> None:
        """The room's game is archived: it leaves the set (and may now expire)."""
        await self._done(keys=self._keys(room_id), args=[room_id])

    async def expire_soon(self, room_id: str, grace_ms: int) -> None:
        """The room's game is archived: its keys expire within ``grace_ms`` (late readers of
        the room still find it meanwhile; the archive has it for good)."""
        keys = self.store.keys(room_id)
        await self._expire_soon(keys=[*keys.transition(), keys.spectators], args=[grace_ms])

    async def keep_alive(self, room_id: str, retention_ms: int) -> int:
        """Give the room's keys ``retention_ms`` again when less than half of it is left."""
        keys = self.store.keys(room_id)
        names = [*keys.transition(), keys.spectators]
        return int(await self._keep_alive(keys=names, args=[retention_ms // 2, retention_ms]))
