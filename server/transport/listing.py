"""The public rooms as the lobby lists them (``list_rooms``, ``GET /rooms``, ``GET /lobby``):
read from the store's lobby index at most once a second per process, without ghost rooms."""

from __future__ import annotations

import json

import protocol.messages as pm
from server.boundary import views
from server.transport.runtime import Runtime

__all__ = ["LOBBY_CACHE_MS", "public_rooms"]

LOBBY_CACHE_MS = 1000


async def public_rooms(rt: Runtime, limit: int) -> list[pm.RoomSummary]:
    """Public rooms of the lobby index, most recently active first, without ghost rooms (a
    lobby whose people are all away past the absent grace, ``room.ghost_at``). The list is
    read at most once a second per process (and again at once after this process changed an
    entry): a flood of listings costs Redis nothing more."""
    now, writes = rt.service.clock(), rt.service.index_writes
    cached = rt.lobby_cache
    if cached is None or now - cached[0] >= LOBBY_CACHE_MS or cached[1] != writes:
        raw = [json.loads(s) for s in await rt.store.index_list(now, 1000)]
        live = [s for s in raw if s.get("public") and not _ghost(s, now)]
        cached = rt.lobby_cache = (now, writes, [views.room_summary(s) for s in live])
    return cached[2][:limit]


def _ghost(summary: dict[str, object], now: int) -> bool:
    ghost_at = summary.get("ghost_at")
    return isinstance(ghost_at, int) and ghost_at <= now
