"""One function per command type; each returns its reply as a value (:class:`Handled`).

A handler runs the command through the service and, for the commands that enter a room,
subscribes the connection to the room's feed before the reply is returned: the events a
command caused (or the snapshot that covers them) reach the connection before its ack, and the
ack's ``seq`` covers them. Refusals are raised as typed errors; :func:`handle` turns every one
of them into an ``error`` reply with its protocol code.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable

import msgspec

import protocol.messages as pm
from protocol.errors import ErrorCode
from server import game
from server.boundary import translate, views
from server.domain import room, roomlist
from server.domain.refusals import RefusalError
from server.service.outcomes import (
    Outcome,
    RematchMade,
    Seated,
    ServiceError,
    UnavailableError,
)
from server.storage.redis_store import TRANSIENT_ERRORS
from server.strategy import computers
from server.transport.connection import TokenBucket
from server.transport.context import Context, Handled, Member
from server.transport.listing import public_rooms
from server.transport.membership import attach, committed
from server.transport.quickplay_commands import cancel_quick_play, quick_play
from server.transport.replies import (
    ack,
    check_invite,
    error,
    remembered,
    require_free,
    require_player,
    room_seq,
)

__all__ = ["Context", "Handled", "Member", "handle"]

log = logging.getLogger("yahtzee.handlers")

#: rooms one connection may create at once (then ``rooms_per_minute``)
ROOMS_BURST = 5


Handler = Callable[[Context, pm.ClientMessage], Awaitable[Handled]]


async def handle(ctx: Context, command: pm.ClientMessage) -> Handled:
    """Run one command; every refusal becomes a typed ``error`` (the command changed nothing)."""
    try:
        return await _HANDLERS[type(command)](ctx, command)
    except room.SeatTakenError as exc:  # another connection took the seat back
        return Handled(error(ctx, exc.code, command.id, str(exc)), leave=True, close=1000)
    except RefusalError as exc:
        return Handled(error(ctx, exc.code, command.id, exc.message))
    except game.GameError as exc:
        return Handled(error(ctx, translate.error_code(exc.code), command.id, str(exc)))
    except TRANSIENT_ERRORS as exc:
        return Handled(error(ctx, "unavailable", command.id, UnavailableError(str(exc)).message))


# -- lobby ----------------------------------------------------------------------------------------


async def _hello(ctx: Context, command: pm.ClientMessage) -> Handled:
    assert isinstance(command, pm.Hello)
    if not isinstance(command.player_token, msgspec.UnsetType):
        ctx.credential, ctx.identity, ctx.identity_name = command.player_token, None, None
    if ctx.credential is None:
        return ack(ctx, command)
    who = await remembered(ctx)
    return ack(ctx, command, pm.HelloResult(player=who if who is not None else msgspec.UNSET))


async def _ping(ctx: Context, command: pm.ClientMessage) -> Handled:
    return Handled(pm.Pong(id=command.id))


async def _list_rooms(ctx: Context, command: pm.ClientMessage) -> Handled:
    rooms = await public_rooms(ctx.rt, 100)
    return ack(ctx, command, pm.ListRoomsResult(rooms=tuple(rooms)))


async def _get_room(ctx: Context, command: pm.ClientMessage) -> Handled:
    assert isinstance(command, pm.GetRoom)
    current = await ctx.rooms.view(command.room)
    check_invite(current.record, command.invite_code)
    grace = ctx.rt.settings.absent_turn_seconds
    summary = views.room_summary(roomlist.summary(command.room, current.record, grace))
    return ack(ctx, command, pm.GetRoomResult(room=summary))


def _creation_allowed(ctx: Context) -> bool:
    """Room creation quotas: per connection and per client address (this process)."""
    per_address = ctx.rt.room_quota(ctx.address)
    if ctx.creations is None:
        ctx.creations = TokenBucket(ctx.rt.settings.rooms_per_minute / 60, ROOMS_BURST)
    return ctx.creations.take() and per_address.take()


async def _create_room(ctx: Context, command: pm.ClientMessage) -> Handled:
    """Create a room; a ``create_key`` used before (by anyone, within an hour) answers with the
    room it created then, without counting against the quota."""
    assert isinstance(command, pm.CreateRoom)
    service = ctx.rooms
    room_id: str | None = None
    invite: str | None = None
    key_hash = room.hash_secret(command.create_key) if command.create_key else None
    if key_hash is not None:
        room_id, invite = service.new_room_id(), None if command.public else service.new_invite()
        earlier = await ctx.rooms.reserve_create_key(
            key_hash, json.dumps([room_id, invite]).encode()
        )
        if earlier is not None:
            room_id, invite = json.loads(earlier)
            if await ctx.rooms.exists(room_id):
                return ack(ctx, command, pm.CreateRoomResult(room=room_id, invite_code=invite))
    if not _creation_allowed(ctx):
        raise ServiceError(ErrorCode.RATE_LIMITED, "room creation quota used up: wait a minute")
    options = translate.engine_options(command.options)
    if command.rated:
        if ctx.credential is not None and ctx.identity is None:
            await remembered(ctx)
        if ctx.identity is None:
            raise ServiceError(
                ErrorCode.IDENTITY_REQUIRED, "a rated room is created by a remembered player"
            )
    if len(command.computers) >= command.seats:
        raise ServiceError(ErrorCode.INVALID_FIELD, "leave at least one seat for a person")
    if command.computers:
        ctx.rooms.prepare_strategy(options)  # loaded by the time the game starts
    room_id, invite = await service.create_room(
        options=options,
        seats=command.seats,
        public=command.public,
        turn_seconds=command.turn_seconds,
        room_id=room_id,
        invite=invite,
        hints=command.hints,
        computer_delay_ms=command.computer_delay_ms,
        computers=[(c.level.value, c.name) for c in command.computers],
        auto_start=command.auto_start,
        correspondence_seconds=(
            command.correspondence.seconds_per_move if command.correspondence else None
        ),
        rated=command.rated,
    )
    return ack(ctx, command, pm.CreateRoomResult(room=room_id, invite_code=invite))


# -- entering and leaving a room ----------------------------------------------------------------


async def _join(ctx: Context, command: pm.ClientMessage) -> Handled:
    assert isinstance(command, pm.Join)
    require_free(ctx)
    if ctx.credential is not None and ctx.identity is None:
        await remembered(ctx)
    out = await ctx.rooms.join(
        command.room,
        command.name,
        command.invite_code,
        conn_id=ctx.conn_id,
        join_key=command.join_key,
        seed=command.seed,
        identity=ctx.identity,
    )
    at = await committed(ctx, command.room, out.seq, out.record)
    seated = _seated(out)
    member, _ = await attach(ctx, command.room, "player", seated.player, at, None)
    if seated.previous is not None and seated.previous != ctx.conn_id:
        await _close_previous(ctx, member, seated.previous)
    result = pm.JoinResult(player=seated.player, seat=seated.seat, token=seated.token or "")
    return Handled(pm.make_ack(command, result, seq=out.seq), enter=member)


async def _close_previous(ctx: Context, member: Member, previous: str) -> None:
    """Close the connection that held the seat before (a kick, wherever it is). The seat is
    this connection's already: a kick that cannot be published now (Redis) does not fail the
    command, as the old connection's process closes it at its next lease renewal. Anything
    else closes the subscription just made, so that a retry cannot leave a second one behind
    (every event twice, as a chaos soak found when the kick met a Redis restart)."""
    try:
        await ctx.rt.kick(member.room, previous)
    except TRANSIENT_ERRORS as exc:
        ctx.rt.metrics.redis_errors.labels("kick").inc()
        log.warning("room %s: a kick not published (its lease closes it): %s", member.room, exc)
    except BaseException:
        member.subscription.close()
        raise


def _seated(out: Outcome) -> Seated:
    """The seat a seat command took (its result)."""
    assert isinstance(out.result, Seated)
    return out.result


async def _rejoin(ctx: Context, command: pm.ClientMessage) -> Handled:
    assert isinstance(command, pm.Rejoin)
    require_free(ctx)
    player = await ctx.rooms.authenticate(command.room, command.token)
    out, previous = await ctx.rooms.claim_seat(command.room, player, ctx.conn_id)
    at = await committed(ctx, command.room, out.seq, out.record)
    member, resumed = await attach(ctx, command.room, "player", player, at, command.last_seq)
    if previous is not None:
        await _close_previous(ctx, member, previous)
    seat = at.record.game.seat_of(player)
    result = pm.RejoinResult(player=player, seat=seat if seat is not None else 0, resumed=resumed)
    return Handled(pm.make_ack(command, result, seq=at.seq), enter=member)


async def _spectate(ctx: Context, command: pm.ClientMessage) -> Handled:
    assert isinstance(command, pm.Spectate)
    require_free(ctx)
    at = await ctx.rooms.view(command.room)
    check_invite(at.record, command.invite_code)
    # counted before subscribing: a failure here leaves no subscription behind (a lease without
    # a connection is swept)
    await ctx.rooms.spectator_joined(command.room, ctx.conn_id, ctx.rt.spectator_lease_ms)
    member, resumed = await attach(ctx, command.room, "spectator", None, at, command.last_seq)
    result = pm.SpectateResult(resumed=resumed)
    return Handled(pm.make_ack(command, result, seq=member.subscription.cursor), enter=member)


async def _leave(ctx: Context, command: pm.ClientMessage) -> Handled:
    member = ctx.member
    if member is None:
        raise ServiceError(ErrorCode.NOT_IN_ROOM, "join or spectate a room first")
    seq = room_seq(ctx)
    if member.role == "player" and member.player is not None:
        key = f"{member.player}:{command.id}"
        out = await ctx.rooms.leave(member.room, member.player, ctx.conn_id, key)
        seq = out.seq
    return Handled(pm.make_ack(command, seq=seq), leave=True)


# -- computers and the advisor -------------------------------------------------------------------


async def _add_computer(ctx: Context, command: pm.ClientMessage) -> Handled:
    assert isinstance(command, pm.AddComputer)
    room_id, player = require_player(ctx)
    out = await ctx.rooms.add_computer(
        room_id, player, command.level.value, command.name, ctx.conn_id, f"{player}:{command.id}"
    )
    if out.record is not None:
        ctx.rooms.prepare_strategy(out.record.game.options)
    seated = _seated(out)
    result = pm.AddComputerResult(player=seated.player, seat=seated.seat)
    return Handled(pm.make_ack(command, result, seq=out.seq))


async def _remove_computer(ctx: Context, command: pm.ClientMessage) -> Handled:
    assert isinstance(command, pm.RemoveComputer)
    room_id, player = require_player(ctx)
    out = await ctx.rooms.remove_computer(
        room_id, player, command.player, ctx.conn_id, f"{player}:{command.id}"
    )
    return Handled(pm.make_ack(command, seq=out.seq))


TABLE_WAIT_SECONDS = 1.0
"""How long a ``hint`` waits for a strategy table that is loading (a build takes longer)."""


async def _hint(ctx: Context, command: pm.ClientMessage) -> Handled:
    """The advisor's best options for the player on turn (any member of a room with hints)."""
    member = ctx.member
    if member is None:
        raise ServiceError(ErrorCode.NOT_IN_ROOM, "join or spectate a room first")
    current = await ctx.rooms.view(member.room)
    record = current.record
    if not record.meta.hints:
        raise ServiceError(ErrorCode.HINTS_DISABLED, "this room was created without hints")
    if game.current_player(record.game) is None:
        raise game.WrongPhaseError("hints are given during a turn")
    table = await ctx.rooms.strategy_table(record.game.options, TABLE_WAIT_SECONDS)
    if table is None:
        raise ServiceError(
            ErrorCode.UNAVAILABLE, "the advisor is still building its strategy table"
        )
    advice = computers.hint(table, record.game)
    assert advice is not None  # a turn is in progress
    return ack(ctx, command, views.hint_result(advice), seq=current.seq)


async def _offer_rematch(ctx: Context, command: pm.ClientMessage) -> Handled:
    """A rematch of the finished game: the rematch room (created by the first offer) and the
    sender's seat there; the connection stays where it is (SPEC 6.19)."""
    room_id, player = require_player(ctx)
    if ctx.credential is not None and ctx.identity is None:
        await remembered(ctx)
    # the rematch seat belongs to the same remembered player (its game is archived as theirs)
    out = await ctx.rooms.offer_rematch(room_id, player, ctx.conn_id, ctx.identity)
    cached = ctx.rooms.cached(room_id)
    if cached is not None and cached.record.game.players:
        ctx.rooms.prepare_strategy(cached.record.game.options)  # for its computers
    made = out.result
    assert isinstance(made, RematchMade)
    result = pm.OfferRematchResult(
        room=made.room, invite_code=made.invite_code, player=made.player, seat=made.seat,
        token=made.token,
    )  # fmt: skip
    return Handled(pm.make_ack(command, result, seq=out.seq))


# -- play -----------------------------------------------------------------------------------------


async def _play(ctx: Context, command: pm.ClientMessage) -> Handled:
    assert isinstance(command, pm.Start | pm.Roll | pm.Hold | pm.Release | pm.Score | pm.TakeBonus)
    room_id, player = require_player(ctx)
    out = await ctx.rooms.play(
        room_id, player, command, conn_id=ctx.conn_id, cache_key=f"{player}:{command.id}"
    )
    return Handled(pm.make_ack(command, seq=out.seq))


_HANDLERS: dict[type[pm.ClientMessage], Handler] = {
    pm.Hello: _hello,
    pm.Ping: _ping,
    pm.ListRooms: _list_rooms,
    pm.GetRoom: _get_room,
    pm.CreateRoom: _create_room,
    pm.Join: _join,
    pm.Rejoin: _rejoin,
    pm.Spectate: _spectate,
    pm.Leave: _leave,
    pm.Start: _play,
    pm.Roll: _play,
    pm.Hold: _play,
    pm.Release: _play,
    pm.Score: _play,
    pm.TakeBonus: _play,
    pm.AddComputer: _add_computer,
    pm.RemoveComputer: _remove_computer,
    pm.Hint: _hint,
    pm.OfferRematch: _offer_rematch,
    pm.QuickPlay: quick_play,
    pm.CancelQuickPlay: cancel_quick_play,
}
