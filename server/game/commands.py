"""Commands: what a player (or the service) asks the engine to do.

Every command is a frozen dataclass with a ``player`` (the opaque id the service chose) and a
class-level ``kind`` string, the name used by the transition table. Randomness is an input: the
service draws the dice faces and puts them in :class:`Roll` and :class:`RollOff`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from .boxes import Box

__all__ = [
    "COMMAND_TYPES",
    "Command",
    "Hold",
    "Join",
    "Leave",
    "Release",
    "Roll",
    "RollOff",
    "Score",
    "Start",
    "TakeBonus",
]


@dataclass(frozen=True)
class Join:
    """Take the next free seat in the lobby, with display name ``name``. ``computer`` is set
    for a computer seat (its level, a label the rules do not read): it is never the host."""

    kind: ClassVar[str] = "join"
    player: str
    name: str
    computer: str | None = None


@dataclass(frozen=True)
class Leave:
    """Leave the room: in the lobby the seat is freed; during a game the player forfeits."""

    kind: ClassVar[str] = "leave"
    player: str


@dataclass(frozen=True)
class Start:
    """Start the game (host only). ``random_choice`` (drawn by the service) picks the first seat
    as ``random_choice % seats`` when the room's ``first_player`` is ``random``."""

    kind: ClassVar[str] = "start"
    player: str
    random_choice: int = 0


@dataclass(frozen=True)
class RollOff:
    """One roll-off round: exactly one five-dice roll per current contender (sent by the
    service, so ``player`` may be empty)."""

    kind: ClassVar[str] = "roll_off"
    faces: Mapping[str, tuple[int, ...]]
    player: str = ""


@dataclass(frozen=True)
class Roll:
    """Roll the dice. Roll 1 rolls all five (``keep`` must be ``None`` or empty). On rolls 2 and 3
    a given ``keep`` first replaces the held set; the dice not held are rolled. ``faces`` holds
    one face per rolled die, in index order (see :func:`server.game.dice_to_roll`)."""

    kind: ClassVar[str] = "roll"
    player: str
    faces: tuple[int, ...]
    keep: frozenset[int] | None = None


@dataclass(frozen=True)
class Hold:
    """Add the dice at these indexes (0..4) to the held set.

    Hold and Release need a roll this turn (``must_roll_first``) and a roll left: after the
    third roll holding is pointless and is refused with ``no_rolls_left``. Holding a held die or
    releasing a free one is a no-op; an empty set is ``invalid_dice``.
    """

    kind: ClassVar[str] = "hold"
    player: str
    dice: frozenset[int]


@dataclass(frozen=True)
class Release:
    """Remove the dice at these indexes (0..4) from the held set (same rules as :class:`Hold`)."""

    kind: ClassVar[str] = "release"
    player: str
    dice: frozenset[int]


@dataclass(frozen=True)
class Score:
    """Fill one open box with the current dice. ``automatic`` marks a score made by the turn
    timer; it is only copied to the :class:`~server.game.events.Scored` event."""

    kind: ClassVar[str] = "score"
    player: str
    box: Box
    automatic: bool = False


@dataclass(frozen=True)
class TakeBonus:
    """Take the +100 extra-Yahtzee bonus and fill no box (room option ``bonus_turn`` only).

    Allowed after a roll when the current dice pay the bonus (five of a kind, YAHTZEE box
    holding 50, extra Yahtzees on); otherwise refused with ``box_not_allowed``. The turn passes
    as after a score. ``automatic`` is copied to the :class:`~server.game.events.BonusTaken`
    event.
    """

    kind: ClassVar[str] = "take_bonus"
    player: str
    automatic: bool = False


Command = Join | Leave | Start | RollOff | Roll | Hold | Release | Score | TakeBonus
"""Any command."""

COMMAND_TYPES: tuple[type[Command], ...] = (
    Join,
    Leave,
    Start,
    RollOff,
    Roll,
    Hold,
    Release,
    Score,
    TakeBonus,
)
"""Every command class, in transition-table column order."""
