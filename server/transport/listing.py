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
        entries = _decoded(rt, await rt.store.index_list(now, 1000))
        live = [summary for summary, ghost_at in entries if ghost_at is None or ghost_at > now]
        cached = rt.lobby_cache = (now, writes, live)
    return cached[2][:limit]


def _decoded(rt: Runtime, raw: list[bytes]) -> list[tuple[pm.RoomSummary, int | None]]:
    """The public entries of ``raw`` (index order) as wire summaries with their ``ghost_at``.
    An entry that has not changed since the last read is not decoded again: most rooms of a
    busy lobby are the same from one second to the next, and decoding every entry each second
    was the lobby's cost."""
    known = rt.lobby_entries
    fresh: dict[bytes, tuple[pm.RoomSummary, int | None] | None] = {}
    out = []
    for text in raw:
        entry = known[text] if text in known else _decode(text)
        fresh[text] = entry
        if entry is not None:
            out.append(entry)
    rt.lobby_entries = fresh  # only the entries of this read: rooms gone are forgotten
    return out


def _decode(text: bytes) -> tuple[pm.RoomSummary, int | None] | None:
    """A lobby entry as (summary, ghost_at); None for a room that is not public."""
    summary = json.loads(text)
    if not summary.get("public"):
        return None
    ghost_at = summary.get("ghost_at")
    return views.room_summary(summary), ghost_at if isinstance(ghost_at, int) else None
