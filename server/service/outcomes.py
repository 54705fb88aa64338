"""The values the service's commands take and give, and its refusals: what a step makes of a
room (:class:`Change`), a room as this process last saw it (:class:`Cached`), a finished
command (:class:`Outcome`), the callbacks the service is wired with, and
:class:`ServiceError` (a :class:`~server.domain.refusals.RefusalError`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import NamedTuple

import msgspec

from protocol.errors import ErrorCode
from server import game
from server.boundary import wire
from server.domain import room
from server.domain.events import Occurred
from server.domain.refusals import RefusalError

__all__ = [
    "Attempt",
    "Cached",
    "Change",
    "Claimed",
    "CreatedRoom",
    "Deliver",
    "Finished",
    "GameEndings",
    "Outcome",
    "RematchMade",
    "Result",
    "Seated",
    "ServiceError",
    "Step",
    "UnavailableError",
    "Wake",
    "decode_result",
    "encode_result",
    "room_not_found",
    "seat_result",
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


class GameEndings:
    """Where the service reports a game that just finished: built with the service, connected
    to the archive's pending set when the players part starts and disconnected when it stops
    (without a database nothing listens)."""

    def __init__(self) -> None:
        self._listener: Finished | None = None

    def connect(self, listener: Finished) -> None:
        self._listener = listener

    def disconnect(self) -> None:
        self._listener = None

    async def finished(self, room_id: str, now: int) -> None:
        """A room's game just finished (after its commit)."""
        if self._listener is not None:
            await self._listener(room_id, now)


EntryListener = Callable[[str, str, int, int, int], Awaitable[None]]
"""Told (tournament id, entry room id, its total, last seq, now) after each commit of an entry:
its live leaderboard and when its events became old enough to watch (SPEC.md 13.23)."""


class EntryCommits:
    """Where the service reports each commit of a tournament entry: built with the service,
    connected to the tournaments when the players part starts and disconnected when it stops
    (without a database there are no tournaments)."""

    def __init__(self) -> None:
        self._listener: EntryListener | None = None

    def connect(self, listener: EntryListener) -> None:
        self._listener = listener

    def disconnect(self) -> None:
        self._listener = None

    async def committed(
        self, tournament: str, room_id: str, total: int, last_seq: int, now: int
    ) -> None:
        """An entry's commit is written: its total, its last seq and the clock after it."""
        if self._listener is not None:
            await self._listener(tournament, room_id, total, last_seq, now)


class Seated(msgspec.Struct, frozen=True, omit_defaults=True):
    """A seat a command took or gave: its player id and seat, the seat's token (for its owner
    only, never stored) and the connection that held the seat before (a repeated join)."""

    player: str
    seat: int
    token: str | None = None
    previous: str | None = None


def seat_result(state: game.GameState, player: str, previous: str | None = None) -> Seated:
    """The seat ``player`` holds in ``state`` (a command's result)."""
    seat = state.seat_of(player)
    assert seat is not None, player  # the step just seated them
    return Seated(player, seat, previous=previous)


class RematchMade(msgspec.Struct, frozen=True, omit_defaults=True):
    """The rematch room of a finished game, and the offering player's seat there (None each
    when no seat was left)."""

    room: str
    invite_code: str | None = None
    player: str | None = None
    seat: int | None = None
    token: str | None = None


class CreatedRoom(NamedTuple):
    """A room just created: its id and, for a private room, its invite code."""

    room: str
    invite: str | None


class Claimed(NamedTuple):
    """A seat claimed by a connection, and the connection that held it before (to close)."""

    outcome: Outcome
    previous: str | None


class Attempt(NamedTuple):
    """What one commit attempt gave: the finished command, or the room as it is now (the
    version moved: run the step again on it); both None: the room is gone."""

    outcome: Outcome | None
    fresh: Cached | None


#: What a command returns beside the room's seq (None: nothing but the seq).
Result = Seated | RematchMade | None


def encode_result(result: Result) -> bytes:
    """A result as the idempotency cache keeps it (JSON)."""
    return b"{}" if result is None else msgspec.json.encode(result)


def decode_result(raw: bytes) -> Result:
    """Inverse of :func:`encode_result`."""
    data = msgspec.json.decode(raw)
    if not data:
        return None
    kind: type[Seated] | type[RematchMade] = RematchMade if "room" in data else Seated
    result: Seated | RematchMade = msgspec.convert(data, kind)
    return result


@dataclass
class Change:
    """What a step makes of a room: the new record, what happened (made protocol events at the
    commit), the command's result and seat-field changes (tokens)."""

    record: room.RoomRecord
    events: list[Occurred] = field(default_factory=list)
    result: Result = None
    seats: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Outcome:
    """A finished command: the room's seq after it, its result, whether it was a retry."""

    seq: int
    result: Result = None
    cached: bool = False
    record: room.RoomRecord | None = None


Step = Callable[[Cached], Change | None]
