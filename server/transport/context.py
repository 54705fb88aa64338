r"""What a command handler gets and gives: the connection's :class:`Context`, its room
:class:`Member`\ ship, and the :class:`Handled` reply."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import protocol.messages as pm
from server.fanout.feed import Sink, Subscription
from server.service.facade import Rooms
from server.transport.connection import TokenBucket
from server.transport.runtime import Runtime

__all__ = ["Context", "Handled", "Member"]


@dataclass(slots=True)
class Member:
    """The room a connection is in, as what, and its feed subscription."""

    room: str
    role: Literal["player", "spectator"]
    player: str | None
    subscription: Subscription


@dataclass(slots=True)
class Context:
    """What a handler knows of the connection it serves."""

    rt: Runtime
    #: the rooms, as a handler may use them (the service, seats, upkeep behind one facade)
    rooms: Rooms
    conn_id: str
    sink: Sink
    send: Callable[[pm.Message], object]
    address: str = ""
    #: this connection's room-creation quota (made when it first creates a room)
    creations: TokenBucket | None = None
    member: Member | None = None
    #: a player token or JWT the connection presented (handshake header or hello), and the
    #: identity it names once resolved (remembered players, protocol 1.3)
    credential: str | None = None
    identity: str | None = None
    #: the display name of ``identity`` (v1.4: quick play seats the player under it)
    identity_name: str | None = None


@dataclass(frozen=True, slots=True)
class Handled:
    """A command's reply, and the connection's membership after it (``enter``: it joined or
    spectated a room; ``leave``: it left its room)."""

    reply: pm.Message
    enter: Member | None = None
    leave: bool = False
    close: int | None = None
