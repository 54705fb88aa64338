"""The quick-play commands (SPEC 6.20, 6.21): queue the connection's remembered player, and the
queue's news as messages on the connection."""

from __future__ import annotations

import protocol.messages as pm
from protocol.errors import ErrorCode
from protocol.types import Level
from server.service.outcomes import ServiceError
from server.service.quickplay import Matched, News, Status
from server.transport.context import Context, Handled
from server.transport.replies import ack, remembered, require_free

__all__ = ["cancel_quick_play", "quick_play", "quick_play_message"]


async def quick_play(ctx: Context, command: pm.ClientMessage) -> Handled:
    """Queue the connection's remembered player (SPEC 6.20); news arrive as messages."""
    assert isinstance(command, pm.QuickPlay)
    require_free(ctx)
    if ctx.credential is None:
        raise ServiceError(
            ErrorCode.IDENTITY_REQUIRED, "quick play needs a remembered player: send a player token"
        )
    if ctx.identity is None or ctx.identity_name is None:
        await remembered(ctx)  # else resolved by `hello` already: no database call
    assert ctx.identity is not None
    assert ctx.identity_name is not None
    send = ctx.send
    queued = await ctx.rt.quickplay.enqueue(
        ctx.conn_id, ctx.identity, ctx.identity_name, seats=command.seats,
        rules=command.rules.value,
        computers=command.computers, notify=lambda news: send(quick_play_message(news)),
    )  # fmt: skip
    result = pm.QuickPlayResult(
        position=queued.position,
        window=queued.window,
        rating=queued.rating,
        computers_after_ms=queued.computers_after_ms,
    )
    return ack(ctx, command, result)


def quick_play_message(news: News) -> pm.QuickPlayStatus | pm.QuickPlayMatched:
    """The wire message of a quick-play waiter's news."""
    if isinstance(news, Status):
        return pm.QuickPlayStatus(
            position=news.position, waiting=news.waiting, window=news.window,
            waited_ms=news.waited_ms,
        )  # fmt: skip
    assert isinstance(news, Matched)
    return pm.QuickPlayMatched(
        room=news.room,
        invite_code=news.invite,
        player=news.player,
        seat=news.seat,
        token=news.token,
        opponents=news.opponents,
        computers=tuple(
            pm.ComputerSeat(level=Level(level), name=name) for level, name in news.computers
        ),
        waited_ms=news.waited_ms,
    )


async def cancel_quick_play(ctx: Context, command: pm.ClientMessage) -> Handled:
    """Take the connection out of the quick-play queue (SPEC 6.21)."""
    await ctx.rt.quickplay.cancel(ctx.conn_id)
    return ack(ctx, command)
