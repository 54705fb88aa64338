"""Events: the facts :func:`server.game.apply` reports, in the order they happened.

Every event is a frozen dataclass with a class-level ``type`` string (its stable wire name) and
JSON-friendly fields: ``str``, ``int``, ``bool``, string enums and tuples of those. Tuples of
records are ``NamedTuple``s, so they encode as JSON arrays. See
:mod:`server.translate` for their wire form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, NamedTuple

from .boxes import Box
from .options import FirstPlayer

__all__ = [
    "EVENT_TYPES",
    "BonusTaken",
    "Event",
    "GameOver",
    "GameStarted",
    "HoldChanged",
    "HostChanged",
    "PlayerJoined",
    "PlayerLeft",
    "RollOffEntry",
    "RollOffRolled",
    "RollOffStarted",
    "Rolled",
    "Scored",
    "Standing",
    "TurnChanged",
]


class RollOffEntry(NamedTuple):
    """One contender's roll in a roll-off round."""

    player: str
    faces: tuple[int, ...]
    total: int


class Standing(NamedTuple):
    """One line of the final ranking. ``place`` is 1-based; equal totals share it (1, 1, 3)."""

    player: str
    total: int
    place: int
    forfeited: bool


@dataclass(frozen=True)
class PlayerJoined:
    """A player took seat ``seat`` (0-based, join order) in the lobby; ``computer`` is the
    label of a computer seat (``None`` for a person)."""

    type: ClassVar[str] = "player_joined"
    player: str
    name: str
    seat: int
    computer: str | None = None


@dataclass(frozen=True)
class PlayerLeft:
    """A player left. In the lobby the seats after ``seat`` move up (``forfeited`` false);
    during a game the seat and card stay and the player forfeits (``forfeited`` true)."""

    type: ClassVar[str] = "player_left"
    player: str
    seat: int
    forfeited: bool


@dataclass(frozen=True)
class HostChanged:
    """``player`` is now the host (the first seat still playing)."""

    type: ClassVar[str] = "host_changed"
    player: str


@dataclass(frozen=True)
class RollOffStarted:
    """The game started with a roll-off for the first player; ``contenders`` roll first."""

    type: ClassVar[str] = "roll_off_started"
    contenders: tuple[str, ...]


@dataclass(frozen=True)
class RollOffRolled:
    """One round of the roll-off (1-based ``round``); ``contenders_next`` are the tied highest
    (a single id: the winner)."""

    type: ClassVar[str] = "roll_off_rolled"
    round: int
    rolls: tuple[RollOffEntry, ...]
    contenders_next: tuple[str, ...]


@dataclass(frozen=True)
class GameStarted:
    """Play begins; ``order`` is the play order (every seat, first player first)."""

    type: ClassVar[str] = "game_started"
    order: tuple[str, ...]
    first_player_mode: FirstPlayer


@dataclass(frozen=True)
class TurnChanged:
    """It is now ``player``'s turn, in round ``round`` (1-based)."""

    type: ClassVar[str] = "turn_changed"
    player: str
    round: int


@dataclass(frozen=True)
class Rolled:
    """``player`` rolled: ``dice`` are all five faces after the roll, ``held`` the indexes that
    were not rolled, ``roll_number`` 1..3."""

    type: ClassVar[str] = "rolled"
    player: str
    dice: tuple[int, ...]
    roll_number: int
    rolls_left: int
    held: tuple[int, ...]


@dataclass(frozen=True)
class HoldChanged:
    """The held dice (sorted indexes 0..4) changed."""

    type: ClassVar[str] = "hold_changed"
    player: str
    held: tuple[int, ...]


@dataclass(frozen=True)
class Scored:
    """``player`` wrote ``points`` in ``box``.

    ``upper_bonus`` is 35 (Yahtzee) or 50 (Yatzy) when this score just earned the upper bonus,
    else 0. ``yahtzee_bonus`` is 100 when this score paid an extra-Yahtzee bonus check, else 0.
    ``joker`` is true when the Joker rule was in force (an extra Yahtzee with the YAHTZEE box
    filled and extra Yahtzees on). ``automatic`` is copied from the command (turn timer).
    ``total`` is the player's grand total afterwards.
    """

    type: ClassVar[str] = "scored"
    player: str
    box: Box
    points: int
    upper_bonus: int
    yahtzee_bonus: int
    joker: bool
    automatic: bool
    total: int


@dataclass(frozen=True)
class BonusTaken:
    """``player`` took the +100 extra-Yahtzee bonus and filled no box (room option
    ``bonus_turn``). ``yahtzee_bonus`` is 100; ``automatic`` is copied from the command;
    ``total`` is the player's grand total afterwards."""

    type: ClassVar[str] = "bonus_taken"
    player: str
    yahtzee_bonus: int
    automatic: bool
    total: int


@dataclass(frozen=True)
class GameOver:
    """The game ended; ``results`` are ranked best first (forfeited players last)."""

    type: ClassVar[str] = "game_over"
    results: tuple[Standing, ...]


Event = (
    PlayerJoined
    | PlayerLeft
    | HostChanged
    | RollOffStarted
    | RollOffRolled
    | GameStarted
    | TurnChanged
    | Rolled
    | HoldChanged
    | Scored
    | BonusTaken
    | GameOver
)
"""Any event."""

EVENT_TYPES: dict[str, type[Event]] = {
    cls.type: cls
    for cls in (
        PlayerJoined,
        PlayerLeft,
        HostChanged,
        RollOffStarted,
        RollOffRolled,
        GameStarted,
        TurnChanged,
        Rolled,
        HoldChanged,
        Scored,
        BonusTaken,
        GameOver,
    )
}
"""Event class by its ``type`` string."""
