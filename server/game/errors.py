"""Typed refusals of the rules engine, each with a stable string ``code``.

Every command that :func:`server.game.apply` refuses raises one of these; the state passed in is
never changed (it is immutable, and no new state is built before every guard has passed). Codes
are part of the wire contract: never rename one, only add.

The tree::

    GameError
     ├── InvalidCommandError        invalid_command      malformed command
     │    ├── InvalidNameError      invalid_name
     │    ├── InvalidDiceError      invalid_dice         bad faces, count or die index
     │    └── UnknownBoxError       unknown_box          box not in this rule set
     ├── WrongPhaseError            wrong_phase          generic: not possible in this phase
     │    ├── GameNotStartedError   game_not_started
     │    ├── GameAlreadyStartedError game_already_started
     │    └── GameOverError         game_over
     ├── RoomFullError              room_full
     ├── AlreadyJoinedError         already_joined
     ├── NameTakenError             name_taken
     ├── NotAPlayerError            not_a_player
     ├── NotHostError               not_host
     ├── NotYourTurnError           not_your_turn
     ├── MustRollFirstError         must_roll_first
     ├── NoRollsLeftError           no_rolls_left
     ├── NothingToRollError         nothing_to_roll
     ├── CategoryTakenError         category_taken
     └── BoxNotAllowedError         box_not_allowed      the Joker forces another box
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import ClassVar

__all__ = [
    "ERROR_CLASSES",
    "ERROR_CODES",
    "AlreadyJoinedError",
    "BoxNotAllowedError",
    "CategoryTakenError",
    "GameAlreadyStartedError",
    "GameError",
    "GameNotStartedError",
    "GameOverError",
    "InvalidCommandError",
    "InvalidDiceError",
    "InvalidNameError",
    "MustRollFirstError",
    "NameTakenError",
    "NoRollsLeftError",
    "NotAPlayerError",
    "NotHostError",
    "NotYourTurnError",
    "NothingToRollError",
    "RoomFullError",
    "UnknownBoxError",
    "WrongPhaseError",
]


class GameError(Exception):
    """Base of every refusal: a stable ``code`` (class attribute) and a human ``message``."""

    code: ClassVar[str] = "game_error"
    description: ClassVar[str] = "the command was refused"

    def __init__(self, message: str | None = None) -> None:
        self.message: str = message or self.description
        super().__init__(self.message)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class InvalidCommandError(GameError):
    """The command is malformed (unknown command, empty player id, wrong field types)."""

    code = "invalid_command"
    description = "the command is malformed"


class InvalidNameError(InvalidCommandError):
    """The display name is empty, too long or contains control characters."""

    code = "invalid_name"
    description = "the name must be 1 to 32 printable characters"


class InvalidDiceError(InvalidCommandError):
    """Bad dice: wrong number of faces, a face outside 1..6, or a die index outside 0..4."""

    code = "invalid_dice"
    description = "the dice faces, their count or a die index is invalid"


class UnknownBoxError(InvalidCommandError):
    """The box does not exist in this room's rule set."""

    code = "unknown_box"
    description = "this box does not exist in this rule set"


class WrongPhaseError(GameError):
    """The command is not possible in the current phase of the game."""

    code = "wrong_phase"
    description = "this command is not possible in the current phase"


class GameNotStartedError(WrongPhaseError):
    """The command needs a started game, and the room is still in the lobby."""

    code = "game_not_started"
    description = "the game has not started yet"


class GameAlreadyStartedError(WrongPhaseError):
    """The command is only possible in the lobby, and the game has started."""

    code = "game_already_started"
    description = "the game has already started"


class GameOverError(WrongPhaseError):
    """The game is finished; no command is accepted any more."""

    code = "game_over"
    description = "the game is over"


class RoomFullError(GameError):
    """Every seat of the room is taken."""

    code = "room_full"
    description = "every seat is taken"


class AlreadyJoinedError(GameError):
    """This player already has a seat in the room."""

    code = "already_joined"
    description = "this player has already joined"


class NameTakenError(GameError):
    """Another seated player already uses this name (compared case-insensitively)."""

    code = "name_taken"
    description = "another player already uses this name"


class NotAPlayerError(GameError):
    """The sender has no seat in the room, or has left the game."""

    code = "not_a_player"
    description = "the sender is not a player of this game"


class NotHostError(GameError):
    """Only the host (the first seat still playing) may start the game."""

    code = "not_host"
    description = "only the host may do this"


class NotYourTurnError(GameError):
    """Only the player whose turn it is may roll, hold, release or score."""

    code = "not_your_turn"
    description = "it is not this player's turn"


class MustRollFirstError(GameError):
    """Holding or scoring before the first roll of the turn."""

    code = "must_roll_first"
    description = "roll the dice first"


class NoRollsLeftError(GameError):
    """All three rolls of the turn are used: the player must score."""

    code = "no_rolls_left"
    description = "no rolls are left this turn; score a box"


class NothingToRollError(GameError):
    """A re-roll would roll no die because all five are held."""

    code = "nothing_to_roll"
    description = "all five dice are held; release at least one to roll"


class CategoryTakenError(GameError):
    """The box is already filled on this player's card."""

    code = "category_taken"
    description = "this box is already filled"


class BoxNotAllowedError(GameError):
    """The Joker rule (forced mode) requires another box for this extra Yahtzee."""

    code = "box_not_allowed"
    description = "the Joker rule requires another box"


_CONCRETE: tuple[type[GameError], ...] = (
    InvalidCommandError,
    InvalidNameError,
    InvalidDiceError,
    UnknownBoxError,
    WrongPhaseError,
    GameNotStartedError,
    GameAlreadyStartedError,
    GameOverError,
    RoomFullError,
    AlreadyJoinedError,
    NameTakenError,
    NotAPlayerError,
    NotHostError,
    NotYourTurnError,
    MustRollFirstError,
    NoRollsLeftError,
    NothingToRollError,
    CategoryTakenError,
    BoxNotAllowedError,
)

ERROR_CLASSES: Mapping[str, type[GameError]] = MappingProxyType({c.code: c for c in _CONCRETE})
"""Error class by code."""

ERROR_CODES: Mapping[str, str] = MappingProxyType({c.code: c.description for c in _CONCRETE})
"""Every error code with its one-line description, for the docs."""
