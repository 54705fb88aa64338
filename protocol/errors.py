"""Error codes of the protocol, the decode exception, and the builder of `error` messages.

Error tree::

    Exception
    +-- DecodeError          raised by protocol.codec for every unreadable frame; `code` is one
                             of the "decode" codes below, `command_id` the frame's `id` if known

Codes are stable strings grouped in three categories:

* ``decode``: the frame could not be turned into a valid message (raised as `DecodeError`);
* ``service``: the server refused the command (rooms, seats, rate, races, failures);
* ``rules``: the game engine refused the command (same strings as the engine's errors).

New codes may appear in later revisions of protocol version 1; a client must handle an unknown
code by showing `message` and relying on `retryable`.
"""

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from protocol.messages import Error

__all__ = [
    "ERROR_CODES",
    "DecodeError",
    "ErrorCategory",
    "ErrorCode",
    "ErrorInfo",
    "make_error",
]

ErrorCategory = Literal["decode", "service", "rules"]
"""Where an error code comes from."""


class ErrorCode(enum.StrEnum):
    """Every error code of protocol version 1.1 (members compare equal to the strings)."""

    # decode
    MALFORMED = "malformed"
    UNKNOWN_TYPE = "unknown_type"
    MISSING_FIELD = "missing_field"
    INVALID_FIELD = "invalid_field"
    OUT_OF_RANGE = "out_of_range"
    FRAME_TOO_LARGE = "frame_too_large"
    TOO_DEEP = "too_deep"
    STRING_TOO_LONG = "string_too_long"
    WRONG_FRAME_TYPE = "wrong_frame_type"
    # service
    RATE_LIMITED = "rate_limited"
    ROOM_NOT_FOUND = "room_not_found"
    INVITE_REQUIRED = "invite_required"
    ROOM_FULL = "room_full"
    BAD_TOKEN = "bad_token"
    NOT_IN_ROOM = "not_in_room"
    ALREADY_IN_ROOM = "already_in_room"
    SPECTATOR_CANNOT_ACT = "spectator_cannot_act"
    CONFLICT = "conflict"
    STALE_STATE = "stale_state"
    INTERNAL_ERROR = "internal_error"
    UNAVAILABLE = "unavailable"
    UNSUPPORTED = "unsupported"
    HINTS_DISABLED = "hints_disabled"
    BAD_PLAYER_TOKEN = "bad_player_token"
    PLAYER_TOKEN_REVOKED = "player_token_revoked"
    BAD_JWT = "bad_jwt"
    JWT_EXPIRED = "jwt_expired"
    FOREIGN_JWT = "foreign_jwt"
    NAME_TAKEN = "name_taken"
    IDENTITY_LINKED = "identity_linked"
    PLAYER_NOT_FOUND = "player_not_found"
    GAME_NOT_FOUND = "game_not_found"
    IDENTITY_REQUIRED = "identity_required"
    ALREADY_QUEUED = "already_queued"
    NOT_QUEUED = "not_queued"
    RATED_NO_COMPUTERS = "rated_no_computers"
    UNKNOWN_BOARD = "unknown_board"
    UNKNOWN_PERIOD = "unknown_period"
    TOURNAMENT_NOT_FOUND = "tournament_not_found"
    TOURNAMENT_NOT_STARTED = "tournament_not_started"
    TOURNAMENT_CLOSED = "tournament_closed"
    TOURNAMENT_FULL = "tournament_full"
    ALREADY_ENTERED = "already_entered"
    NOT_ALLOWED = "not_allowed"
    WATCH_NOT_ALLOWED = "watch_not_allowed"
    # rules
    WRONG_PHASE = "wrong_phase"
    GAME_NOT_STARTED = "game_not_started"
    GAME_ALREADY_STARTED = "game_already_started"
    GAME_OVER = "game_over"
    ALREADY_JOINED = "already_joined"
    NOT_A_PLAYER = "not_a_player"
    NOT_HOST = "not_host"
    NOT_YOUR_TURN = "not_your_turn"
    MUST_ROLL_FIRST = "must_roll_first"
    NO_ROLLS_LEFT = "no_rolls_left"
    INVALID_DICE = "invalid_dice"
    NOTHING_TO_ROLL = "nothing_to_roll"
    CATEGORY_TAKEN = "category_taken"
    BOX_NOT_ALLOWED = "box_not_allowed"
    UNKNOWN_BOX = "unknown_box"
    INVALID_NAME = "invalid_name"


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """What an error code means and whether resending the same command can help."""

    meaning: str
    """One-sentence explanation, also the default `message` of an `error`."""
    retryable: bool
    """True if the cause is transient: resending the same command (same `id`) later may work."""
    category: ErrorCategory
    """``decode``, ``service`` or ``rules``."""


def _decode(meaning: str) -> ErrorInfo:
    return ErrorInfo(meaning, False, "decode")


def _service(meaning: str, retryable: bool = False) -> ErrorInfo:
    return ErrorInfo(meaning, retryable, "service")


def _rules(meaning: str) -> ErrorInfo:
    return ErrorInfo(meaning, False, "rules")


ERROR_CODES: Final[Mapping[str, ErrorInfo]] = MappingProxyType(
    {
        # decode ------------------------------------------------------------------------------
        ErrorCode.MALFORMED: _decode(
            "The frame is not exactly one valid MessagePack or JSON value (bad syntax, invalid "
            "UTF-8, trailing data, non-string map keys), or its top level is not a map."
        ),
        ErrorCode.UNKNOWN_TYPE: _decode(
            "The `type` is not a client message type of this protocol version."
        ),
        ErrorCode.MISSING_FIELD: _decode("A required field (or `type`) is absent."),
        ErrorCode.INVALID_FIELD: _decode(
            "A field has the wrong type, a value outside its enumeration, or breaks its pattern."
        ),
        ErrorCode.OUT_OF_RANGE: _decode(
            "A number is outside its bounds, an array has too many or too few items, or a "
            "string is shorter than its minimum."
        ),
        ErrorCode.FRAME_TOO_LARGE: _decode("The frame is larger than `limits.max_frame_bytes`."),
        ErrorCode.TOO_DEEP: _decode("Maps and arrays are nested more than 16 levels deep."),
        ErrorCode.STRING_TOO_LONG: _decode("A string field is longer than its maximum."),
        ErrorCode.WRONG_FRAME_TYPE: _decode(
            "A text frame on the msgpack subprotocol, or a binary frame on the json one."
        ),
        # service -----------------------------------------------------------------------------
        ErrorCode.RATE_LIMITED: _service(
            "Too many messages: the command was not executed. Slow down, then resend it.", True
        ),
        ErrorCode.ROOM_NOT_FOUND: _service("No room has this id (or it was closed)."),
        ErrorCode.INVITE_REQUIRED: _service(
            "The room is private and the invite code is missing or wrong."
        ),
        ErrorCode.ROOM_FULL: _service("Every seat of the room is taken."),
        ErrorCode.BAD_TOKEN: _service("The seat token is not valid for this room."),
        ErrorCode.NOT_IN_ROOM: _service(
            "The command needs a room, but this connection has not joined, rejoined or "
            "spectated one."
        ),
        ErrorCode.ALREADY_IN_ROOM: _service(
            "This connection is already in a room; send `leave` first."
        ),
        ErrorCode.SPECTATOR_CANNOT_ACT: _service(
            "Spectators can only watch; play commands need a seat."
        ),
        ErrorCode.CONFLICT: _service(
            "The command lost a race with a concurrent change of the room; resend it.", True
        ),
        ErrorCode.STALE_STATE: _service(
            "The room moved on since the client last looked (an event other than a spectator "
            "count came after `expect_seq`, 10.8); nothing changed: read the new state and "
            "decide again."
        ),
        ErrorCode.INTERNAL_ERROR: _service(
            "Unexpected server failure; the command may be resent with the same id.", True
        ),
        ErrorCode.UNAVAILABLE: _service(
            "The server's storage did not answer in time; nothing changed. Resend the command "
            "with the same id after a short wait.",
            True,
        ),
        ErrorCode.UNSUPPORTED: _service(
            "The server understood the command but does not support it in this configuration."
        ),
        ErrorCode.HINTS_DISABLED: _service(
            "The room was created with `hints` false: no advice in this game (v1.2)."
        ),
        ErrorCode.BAD_PLAYER_TOKEN: _service(
            "No remembered player has this player token (v1.3); get one from `POST /players`."
        ),
        ErrorCode.PLAYER_TOKEN_REVOKED: _service(
            "This player token was revoked (v1.3); the player's games stay archived."
        ),
        ErrorCode.BAD_JWT: _service(
            "The JWT is not valid here: bad signature, unknown key, malformed, or this server "
            "accepts no JWTs (v1.3)."
        ),
        ErrorCode.JWT_EXPIRED: _service(
            "The JWT has expired (v1.3): get a fresh one from the identity provider."
        ),
        ErrorCode.FOREIGN_JWT: _service(
            "The JWT names another issuer or audience than this server's (v1.3)."
        ),
        ErrorCode.NAME_TAKEN: _service(
            "Another remembered player has this name (compared case-insensitively) (v1.3)."
        ),
        ErrorCode.IDENTITY_LINKED: _service(
            "The guest is linked to a JWT already, or the JWT's subject to another player (v1.3)."
        ),
        ErrorCode.PLAYER_NOT_FOUND: _service("No remembered player has this id (v1.3)."),
        ErrorCode.GAME_NOT_FOUND: _service(
            "No archived game has this id, or it is private and the request is not one of its "
            "players' (v1.3)."
        ),
        ErrorCode.IDENTITY_REQUIRED: _service(
            "The command needs a remembered player (v1.4): present a player token "
            "(`hello.player_token` or `Authorization: Bearer`). Quick play needs one, and so "
            "do creating a rated room and taking a seat in one."
        ),
        ErrorCode.ALREADY_QUEUED: _service(
            "This player is already waiting in a quick-play queue (v1.4); "
            "`cancel_quick_play` first."
        ),
        ErrorCode.NOT_QUEUED: _service(
            "This connection is not waiting in a quick-play queue (v1.4): nothing to cancel "
            "(it may have been matched a moment ago)."
        ),
        ErrorCode.RATED_NO_COMPUTERS: _service(
            "Computer players cannot sit in a rated room (v1.4)."
        ),
        ErrorCode.UNKNOWN_BOARD: _service(
            "No leaderboard has this name (`result`, `decision`, `best_score`) (v1.4)."
        ),
        ErrorCode.UNKNOWN_PERIOD: _service(
            "A leaderboard's `period` is not `today`, `week` or `all`, or its `family` not "
            "`yahtzee` or `yatzy` (v1.4)."
        ),
        ErrorCode.TOURNAMENT_NOT_FOUND: _service(
            "No tournament has this id, or it is invite-only and the invite code is missing or "
            "wrong (v1.4)."
        ),
        ErrorCode.TOURNAMENT_NOT_STARTED: _service(
            "The tournament's start time has not come yet: entries open then (v1.4)."
        ),
        ErrorCode.TOURNAMENT_CLOSED: _service(
            "The tournament's end time has passed: no more entries and no more play in its "
            "entries (v1.4)."
        ),
        ErrorCode.TOURNAMENT_FULL: _service("The tournament has its entry limit (v1.4)."),
        ErrorCode.ALREADY_ENTERED: _service(
            "This player has used every attempt the tournament allows (v1.4)."
        ),
        ErrorCode.NOT_ALLOWED: _service(
            "This credential may not do this here: e.g. only the operator creates tournaments "
            "(v1.4)."
        ),
        ErrorCode.WATCH_NOT_ALLOWED: _service(
            "The tournament is open and sets no watch delay: its entries are shown after its "
            "end (v1.4)."
        ),
        # rules -------------------------------------------------------------------------------
        ErrorCode.WRONG_PHASE: _rules("The command is not allowed in the current game phase."),
        ErrorCode.GAME_NOT_STARTED: _rules("The game has not started yet."),
        ErrorCode.GAME_ALREADY_STARTED: _rules("The game has already started."),
        ErrorCode.GAME_OVER: _rules(
            "The game is over: no more play, and nobody can join the room (v1.1: also `join`)."
        ),
        ErrorCode.ALREADY_JOINED: _rules("This player already has a seat in the room."),
        ErrorCode.NOT_A_PLAYER: _rules("The sender is not a player of this game."),
        ErrorCode.NOT_HOST: _rules("Only the host may do this."),
        ErrorCode.NOT_YOUR_TURN: _rules("It is another player's turn."),
        ErrorCode.MUST_ROLL_FIRST: _rules("Roll at least once this turn first."),
        ErrorCode.NO_ROLLS_LEFT: _rules("Three rolls were made this turn; score now."),
        ErrorCode.INVALID_DICE: _rules(
            "The die indexes are not acceptable now (e.g. keeping dice on the first roll, or no "
            "index for hold/release)."
        ),
        ErrorCode.NOTHING_TO_ROLL: _rules("`keep` lists all five dice: nothing would be rolled."),
        ErrorCode.CATEGORY_TAKEN: _rules("That box is already filled."),
        ErrorCode.BOX_NOT_ALLOWED: _rules(
            "The box is open but the Joker rule forbids it for these dice."
        ),
        ErrorCode.UNKNOWN_BOX: _rules("The box does not exist in this room's rule set."),
        ErrorCode.INVALID_NAME: _rules(
            "The name is not acceptable (blank, control characters, ...)."
        ),
    }
)
"""Every error code with its meaning, retryability and category, in documentation order."""


class DecodeError(Exception):
    """A frame could not be decoded into a valid message.

    ``code`` is one of the ``decode`` error codes, ``message`` a human-readable detail, and
    ``command_id`` the frame's `id` when it could be read (a string of 1..64 characters),
    else ``None``. The server answers with :meth:`to_message` and keeps the connection open.
    """

    code: str
    message: str
    command_id: str | None

    def __init__(self, code: str, message: str, command_id: str | None = None) -> None:
        super().__init__(code, message, command_id)
        self.code = str(code)
        self.message = message
        self.command_id = command_id

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def to_message(self, *, seq: int | None = None) -> Error:
        """Build the `error` reply for this failure (``seq``: the room's current seq or None)."""
        return make_error(self.code, self.command_id, seq=seq, message=self.message)


def make_error(
    code: str,
    command_id: str | None = None,
    *,
    seq: int | None = None,
    message: str | None = None,
) -> Error:
    """Build an `error` message for a code of :data:`ERROR_CODES`.

    ``command_id`` is the failed command's `id` (``None`` if unknown), ``seq`` the room's
    current seq (``None`` when the connection is not in a room), ``message`` a human-readable
    detail (defaults to the code's meaning; cut to 1024 characters). ``retryable`` comes from
    the table. Raises ``ValueError`` for a code missing from the table, so that every code sent
    is documented in SPEC.md.
    """
    info = ERROR_CODES.get(code)
    if info is None:
        raise ValueError(f"unknown error code {code!r}: add it to protocol.errors.ERROR_CODES")
    text = info.meaning if message is None else message
    return Error(
        id=command_id,
        code=str(code),
        message=text[:1024],
        seq=seq,
        retryable=info.retryable,
    )
