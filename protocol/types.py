"""Value types shared by the messages of the wire protocol.

Every constrained scalar is an :data:`typing.Annotated` alias carrying a :class:`msgspec.Meta`:
the bounds are enforced by the codec when a frame is decoded and are exported into
``protocol/schema.json`` and the field tables of ``protocol/SPEC.md``, so code, schema and
specification cannot disagree.

Enumerations are :class:`enum.StrEnum` classes: a member compares equal to its wire string
(``Box.ACES == "aces"``).

Integers on the wire never exceed ``MAX_SAFE_INTEGER`` (2**53 - 1) so that JavaScript clients can
hold every value in a ``Number``. There are no floating point fields in protocol version 1.
"""

from __future__ import annotations

import enum
from typing import Annotated, Final

from msgspec import Meta

__all__ = [
    "MAX_ID_LENGTH",
    "MAX_SAFE_INTEGER",
    "MAX_SEATS",
    "ROOM_ID_PATTERN",
    "YAHTZEE_BOXES",
    "YATZY_BOXES",
    "Box",
    "CommandId",
    "Count",
    "DieFace",
    "DieIndex",
    "ExtraYahtzees",
    "FirstPlayer",
    "HintKind",
    "InviteCode",
    "Joker",
    "LastSeq",
    "Level",
    "Name",
    "Phase",
    "PlayerId",
    "Points",
    "RoomId",
    "RoomStatus",
    "Round",
    "Rules",
    "Seat",
    "Seq",
    "Toggle",
    "Token",
    "TurnSeconds",
    "boxes_for",
]

MAX_SAFE_INTEGER: Final = 2**53 - 1
"""Largest integer any field may carry (exactly representable in an IEEE 754 double)."""

MAX_SEATS: Final = 8
"""Most players a room can seat."""

MAX_ID_LENGTH: Final = 64
"""Longest command id and player id, in characters (announced in ``welcome.limits``)."""

ROOM_ID_PATTERN: Final = "^[A-Za-z0-9_-]+$"
"""Regular expression (anchored at both ends) a room id must match."""

CommandId = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=MAX_ID_LENGTH,
        description="Client-chosen command id (1..64 characters), echoed in the reply.",
    ),
]
RoomId = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=32,
        pattern=ROOM_ID_PATTERN,
        description="Room id: 1..32 characters from A-Z, a-z, 0-9, '_' and '-'.",
    ),
]
PlayerId = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=MAX_ID_LENGTH,
        description="Opaque player id assigned by the server (1..64 characters).",
    ),
]
Name = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=32,
        description="Display name: 1..32 Unicode code points.",
    ),
]
Token = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=128,
        description="Secret seat token (1..128 characters); proves a seat on rejoin.",
    ),
]
InviteCode = Annotated[
    str,
    Meta(
        min_length=1,
        max_length=32,
        description="Invite code of a private room (1..32 characters).",
    ),
]
Seat = Annotated[int, Meta(ge=0, le=MAX_SEATS - 1, description="Seat number, 0..7.")]
Seq = Annotated[
    int,
    Meta(
        ge=1,
        le=MAX_SAFE_INTEGER,
        description="Position of the event in the room's event log (1, 2, 3, ...).",
    ),
]
LastSeq = Annotated[
    int,
    Meta(
        ge=0,
        le=MAX_SAFE_INTEGER,
        description="A room log position; 0 means before the first event.",
    ),
]
Count = Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER, description="A non-negative integer.")]
DieFace = Annotated[int, Meta(ge=1, le=6, description="A die face, 1..6.")]
DieIndex = Annotated[int, Meta(ge=0, le=4, description="Index of a die in the `dice` array, 0..4.")]
Points = Annotated[int, Meta(ge=0, le=50, description="Points written in one box, 0..50.")]
Round = Annotated[int, Meta(ge=1, le=15, description="Game round: 1..13 (Yahtzee), 1..15 (Yatzy).")]
TurnSeconds = Annotated[
    int,
    Meta(ge=0, le=3600, description="Seconds per turn, 0..3600; 0 means no turn timer."),
]


class Rules(enum.StrEnum):
    """Rule set: `yahtzee` (official Hasbro rules, 13 boxes, 13 rounds) or `yatzy`
    (Scandinavian, 15 boxes, 15 rounds, no extra-Yatzy bonus and no Joker)."""

    YAHTZEE = "yahtzee"
    YATZY = "yatzy"


class ExtraYahtzees(enum.StrEnum):
    """`on`: five of a kind rolled when the YAHTZEE box is already filled pays +100 (if that box
    holds 50) and triggers the Joker rule; `off`: it scores like any other roll."""

    ON = "on"
    OFF = "off"


class Toggle(enum.StrEnum):
    """A house variant on or off (v1.2)."""

    ON = "on"
    OFF = "off"


class Level(enum.StrEnum):
    """How well a computer player plays (v1.2). `easy`: greedy, the most points this turn;
    `medium`: one-turn lookahead, weak on the upper bonus; `hard`: optimal but for a few
    deliberate mistakes; `optimal`: the strategy with the highest expected final score."""

    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"
    OPTIMAL = "optimal"


class HintKind(enum.StrEnum):
    """What a hint option does (v1.2): `roll` (roll again keeping `keep`; before the first roll
    of a turn: roll all five), `score` (fill `box`), `take_bonus` (take the +100, fill nothing;
    room option `bonus_turn`)."""

    ROLL = "roll"
    SCORE = "score"
    TAKE_BONUS = "take_bonus"


class Joker(enum.StrEnum):
    """Joker rule for extra Yahtzees. `forced`: the matching upper box if open, else any open
    lower box at full value, else a zero in an open upper box. `free`: any open box; full house
    and straights get their Joker values only if the matching upper box is filled."""

    FORCED = "forced"
    FREE = "free"


class FirstPlayer(enum.StrEnum):
    """Who plays first. `roll_off`: every player rolls five dice, the highest total starts (ties
    roll again); `seat_order`: the lowest seat starts; `random`: the server draws one. Play then
    goes round the table in seat order."""

    ROLL_OFF = "roll_off"
    SEAT_ORDER = "seat_order"
    RANDOM = "random"


class RoomStatus(enum.StrEnum):
    """Life cycle of a room: `lobby` (players join), `playing`, `finished` (game over)."""

    LOBBY = "lobby"
    PLAYING = "playing"
    FINISHED = "finished"


class Phase(enum.StrEnum):
    """Phase of the game: `awaiting_roll` (turn started, no roll yet) and `rolled` (at least one
    roll this turn, the player may score) refine the `playing` status."""

    LOBBY = "lobby"
    AWAITING_ROLL = "awaiting_roll"
    ROLLED = "rolled"
    FINISHED = "finished"


class Box(enum.StrEnum):
    """Name of a scorecard box. One enumeration for both rule sets; a room accepts only the 13
    boxes of Yahtzee or the 15 boxes of Yatzy (SPEC.md section 5.3)."""

    ACES = "aces"
    ONES = "ones"
    TWOS = "twos"
    THREES = "threes"
    FOURS = "fours"
    FIVES = "fives"
    SIXES = "sixes"
    ONE_PAIR = "one_pair"
    TWO_PAIRS = "two_pairs"
    THREE_OF_A_KIND = "three_of_a_kind"
    FOUR_OF_A_KIND = "four_of_a_kind"
    FULL_HOUSE = "full_house"
    SMALL_STRAIGHT = "small_straight"
    LARGE_STRAIGHT = "large_straight"
    YAHTZEE = "yahtzee"
    YATZY = "yatzy"
    CHANCE = "chance"


YAHTZEE_BOXES: Final[tuple[Box, ...]] = (
    Box.ACES,
    Box.TWOS,
    Box.THREES,
    Box.FOURS,
    Box.FIVES,
    Box.SIXES,
    Box.THREE_OF_A_KIND,
    Box.FOUR_OF_A_KIND,
    Box.FULL_HOUSE,
    Box.SMALL_STRAIGHT,
    Box.LARGE_STRAIGHT,
    Box.YAHTZEE,
    Box.CHANCE,
)
"""The 13 boxes of the Yahtzee rule set, in scorecard order."""

YATZY_BOXES: Final[tuple[Box, ...]] = (
    Box.ONES,
    Box.TWOS,
    Box.THREES,
    Box.FOURS,
    Box.FIVES,
    Box.SIXES,
    Box.ONE_PAIR,
    Box.TWO_PAIRS,
    Box.THREE_OF_A_KIND,
    Box.FOUR_OF_A_KIND,
    Box.SMALL_STRAIGHT,
    Box.LARGE_STRAIGHT,
    Box.FULL_HOUSE,
    Box.CHANCE,
    Box.YATZY,
)
"""The 15 boxes of the Yatzy rule set, in scorecard order."""


def boxes_for(rules: Rules) -> tuple[Box, ...]:
    """Return the boxes of a rule set in scorecard order (the order of `scorecard` maps)."""
    return YAHTZEE_BOXES if Rules(rules) is Rules.YAHTZEE else YATZY_BOXES
