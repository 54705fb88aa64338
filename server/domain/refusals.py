"""The server's one refusal tree. Every command the server refuses raises a :class:`RefusalError`
(or the rules engine's ``game.GameError``, which the boundary maps to a protocol code): the
command changed nothing, and the client gets an ``error`` with :attr:`RefusalError.code`, a member
of the protocol's :class:`~protocol.errors.ErrorCode`, and :attr:`RefusalError.message`.

    RefusalError
    |-- room.RoomError            the room layer (a seat taken back: room.SeatTakenError)
    `-- service.rooms.ServiceError  the service (unknown room, bad token, stale state, ...)
        `-- service.rooms.UnavailableError  storage failed: retryable, outcome unknown

Storage faults themselves are one type, classified in one place
(:class:`server.storage.interface.StorageUnavailableError`); the service turns them into
:class:`~server.service.rooms.UnavailableError` where it commits.
"""

from __future__ import annotations

from protocol.errors import ErrorCode

__all__ = ["RefusalError"]


class RefusalError(Exception):
    """A refused command: a protocol error ``code`` and a message for a person."""

    def __init__(self, code: ErrorCode | str, message: str) -> None:
        super().__init__(message)
        #: the protocol's code (a string code is checked against the protocol's list here)
        self.code = ErrorCode(code)
        self.message = message
