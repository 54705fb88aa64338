"""A connection entering a room (``join``, ``rejoin``, ``spectate``): the room as committed, the
feed subscription, the player's lease and the snapshot, all or nothing."""

from __future__ import annotations

from typing import Literal

from server.boundary import views
from server.domain import room
from server.service.outcomes import Cached
from server.transport.context import Context, Member

__all__ = ["attach", "committed"]


async def attach(
    ctx: Context, room_id: str, role: Literal["player", "spectator"], player: str | None,
    at: Cached, last_seq: int | None,
) -> tuple[Member, bool]:  # fmt: skip
    """Subscribe the connection: the events after ``last_seq`` when the client can resume from
    there (``True``: resumed), else a snapshot of ``at`` and the events after it.

    Nothing stays subscribed unless every step succeeds: a command that fails here
    (``unavailable``) and is retried must not leave a second subscription behind (every event
    twice). What this sends (the snapshot, the catch-up events) is held by the session until the
    command's reply, and dropped with a refusal, so a retry's snapshot is the only one."""
    resumed = last_seq is not None and last_seq <= at.seq
    if not resumed:  # first: the session holds it ahead of the subscription's events
        grace = ctx.rt.settings.absent_turn_seconds
        ctx.send(views.snapshot(room_id, at.seq, at.record, grace))
    after = last_seq if resumed and last_seq is not None else at.seq
    subscription = await ctx.rt.feed.subscribe(room_id, after, ctx.sink)
    try:
        if player is not None:
            await ctx.rooms.renew_lease(room_id, player, ctx.conn_id, ctx.rt.player_lease_ms)
    except BaseException:
        subscription.close()
        raise
    return Member(room_id, role, player, subscription), resumed


async def committed(ctx: Context, room_id: str, seq: int, record: room.RoomRecord | None) -> Cached:
    """The room at ``seq`` as just committed, or read again (for a retried command)."""
    if record is not None:
        return Cached(0, seq, record)
    return await ctx.rooms.view(room_id)
