"""What every command handler shares: its replies (``ack``, ``error`` at the room's seq), the
checks of where the connection stands, and the connection's remembered player."""

from __future__ import annotations

import protocol.messages as pm
from protocol.errors import ErrorCode, make_error
from server.domain import room
from server.service.identities import IdentityError
from server.service.outcomes import ServiceError
from server.transport.context import Context, Handled

__all__ = [
    "ack",
    "check_invite",
    "error",
    "remembered",
    "require_free",
    "require_player",
    "room_seq",
]


def error(ctx: Context, code: str, command_id: str | None, message: str) -> pm.Error:
    """An ``error`` reply carrying the seq of the connection's room."""
    return make_error(code, command_id, seq=room_seq(ctx), message=message)


def room_seq(ctx: Context) -> int | None:
    """The seq of the connection's room as this process last saw it (no round trip)."""
    if ctx.member is None:
        return None
    cached = ctx.rooms.cached(ctx.member.room)
    return cached.seq if cached is not None else ctx.member.subscription.cursor


def ack(ctx: Context, command: pm.ClientMessage, result: pm.AckResult | None = None,
         seq: int | None = None) -> Handled:  # fmt: skip
    """The ``ack`` of ``command`` at the room's seq (or ``seq``)."""
    return Handled(pm.make_ack(command, result, seq=seq if seq is not None else room_seq(ctx)))


def require_free(ctx: Context) -> None:
    """Refuse with ``already_in_room`` a connection that is in a room."""
    if ctx.member is not None:
        raise ServiceError(ErrorCode.ALREADY_IN_ROOM, "leave this room first")


def require_player(ctx: Context) -> tuple[str, str]:
    """The connection's room and player; refused for a connection outside a room or a
    spectator."""
    member = ctx.member
    if member is None:
        raise ServiceError(ErrorCode.NOT_IN_ROOM, "join or spectate a room first")
    if member.role != "player" or member.player is None:
        raise ServiceError(ErrorCode.SPECTATOR_CANNOT_ACT, "spectators can only watch")
    return member.room, member.player


def check_invite(record: room.RoomRecord, invite: str | None) -> None:
    """Refuse with ``invite_required`` a wrong invite code of a private room."""
    if not room.invite_matches(record, invite):
        raise ServiceError(
            ErrorCode.INVITE_REQUIRED, "this room is private: a valid invite is needed"
        )


async def remembered(ctx: Context) -> pm.RememberedPlayer | None:
    """The remembered player of the connection's credential (v1.3), resolved once; refused
    credentials raise their typed error. None without a credential."""
    if ctx.credential is None:
        return None
    players = ctx.rt.players
    if players is None:
        raise ServiceError("unsupported", "this server keeps no players (no database)")
    try:
        identity = await players.identity_of(ctx.credential)
    except IdentityError as exc:
        raise ServiceError(exc.code, exc.message) from None
    ctx.identity, ctx.identity_name = identity.id, identity.name
    return pm.RememberedPlayer(player=identity.id, name=identity.name)
