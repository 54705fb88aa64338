"""The values the service's commands take and give, and its refusals: what a step makes of a
room (:class:`Change`), a room as this process last saw it (:class:`Cached`), a finished
command (:class:`Outcome`), the callbacks the service is wired with, and
:class:`ServiceError` (a :class:`~server.domain.refusals.RefusalError`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from protocol.errors import ErrorCode
from server.boundary import wire
from server.domain import room
from server.domain.events import Occurred
from server.domain.refusals import RefusalError

__all__ = [
    "Cached",
    "Change",
    "Deliver",
    "Finished",
    "Outcome",
    "ServiceError",
    "Step",
    "UnavailableError",
    "Wake",
    "room_not_found",
]


Deliver = Callable[[str, list[wire.EncodedEvent]], None]
"""Hands a room's freshly committed events to this process's subscribers."""

Finished = Callable[[str, int], Awaitable[None]]
"""Told, after the commit, that a room's game just finished (room id, Unix ms): the archive
marks the room pending (best effort here; a failure is logged)."""

Wake = Callable[[str, int], None]
"""Told when a committed room has a computer's move due at a time (Unix ms), so that this
process can make it on time instead of at the next poll of the deadline schedule."""


class ServiceError(RefusalError):
    """A refusal that is not a game rule (unknown room, bad token, ...)."""


class UnavailableError(ServiceError):
    """Redis did not answer in time: nothing is known to have changed; retry the command."""

    def __init__(self, detail: str) -> None:
        super().__init__(ErrorCode.UNAVAILABLE, f"storage unavailable, retry: {detail}")


def room_not_found(room_id: str) -> ServiceError:
    return ServiceError(ErrorCode.ROOM_NOT_FOUND, f"no room {room_id!r}")


@dataclass(frozen=True, slots=True)
class Cached:
    """A room as this process last saw it."""

    version: int
    seq: int
    record: room.RoomRecord


@dataclass
class Change:
    """What a step makes of a room: the new record, what happened (made protocol events at the
    commit), the command's result and seat-field changes (tokens)."""

    record: room.RoomRecord
    events: list[Occurred] = field(default_factory=list)
    result: dict[str, Any] = field(default_factory=dict)
    seats: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Outcome:
    """A finished command: the room's seq after it, its result, whether it was a retry."""

    seq: int
    result: dict[str, Any] = field(default_factory=dict)
    cached: bool = False
    record: room.RoomRecord | None = None


Step = Callable[[Cached], Change | None]
