"""Watching a live tournament entry with a delay (SPEC.md 13.23).

While a tournament is open, an entry's dice are its future: an entrant who saw another's rolls
would know the dice of the turns still ahead of them (every entry rolls the same dice). A
tournament with ``watch_delay_seconds`` lets anyone who may see it read an entry's events once
they are that old: only an entrant playing within the delay of the watched one could use them,
and an operator who wants none of that keeps the delay null (the default: nobody watches an
entry before the end time). After the end time the delay no longer applies (the seed is public).

An event's age is its commit's, recorded after the commit (``Standings.committed``); an event
whose commit time is missing waits for a later recorded commit to cover it: less, never more.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.service.tournament_spec import TournamentError, ms
from server.storage.interface import Store
from server.storage.standings import Standings
from server.storage.tournaments import TournamentRepository, TournamentRow

__all__ = ["WatchPage", "watch_page"]


@dataclass(frozen=True, slots=True)
class WatchPage:
    """One page of an entry's events: ``(seq, msgpack)`` in order; ``next_after`` is ``None``
    when nothing more may be shown for now."""

    tournament: str
    room: str
    events: list[tuple[int, bytes]]
    next_after: int | None


async def watch_page(
    t: TournamentRow,
    room_id: str,
    after: int,
    limit: int,
    *,
    now: int,
    repo: TournamentRepository,
    standings: Standings,
    store: Store,
) -> WatchPage:
    """The events of entry ``room_id`` of ``t`` after ``after`` (at most ``limit``) that may be
    shown at ``now``: ``room_not_found`` for a room that is not one of its entries (or expired),
    ``watch_not_allowed`` while open without a watch delay."""
    stored = await store.load(room_id) if await repo.is_entry(t.id, room_id) else None
    if stored is None:
        raise TournamentError("room_not_found", "no entry of this tournament has this room", 404)
    ceiling = stored.seq
    if now < ms(t.ends_at):
        ceiling = min(ceiling, await _shown_seq(t, room_id, now, standings))
    if ceiling <= after:
        return WatchPage(t.id, room_id, [], None)
    count = min(limit, ceiling - after)
    events = [e for e in await store.read_events(room_id, after, count) if e[0] <= ceiling]
    last = events[-1][0] if events else after
    more = len(events) == count and last < ceiling
    return WatchPage(t.id, room_id, events, last if more else None)


async def _shown_seq(t: TournamentRow, room_id: str, now: int, standings: Standings) -> int:
    """The last seq of the entry old enough to watch while ``t`` is open."""
    if t.watch_delay_seconds is None:
        raise TournamentError(
            "watch_not_allowed", "entries of this tournament are shown after its end", 409
        )
    return await standings.committed_by(t.id, room_id, now - t.watch_delay_seconds * 1000)
