"""Box names and the box list of each rule set (RULES.md sections 3 and 6)."""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from types import MappingProxyType

from .options import RuleSet

__all__ = [
    "UPPER_BOX_COUNT",
    "YAHTZEE_BOXES",
    "YATZY_BOXES",
    "Box",
    "boxes_for",
    "five_of_a_kind_box",
    "is_upper",
    "lower_boxes",
    "upper_box_for_face",
    "upper_boxes",
    "upper_face",
]


class Box(StrEnum):
    """A box of a score card. Which boxes exist depends on the rule set, see :func:`boxes_for`."""

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


YAHTZEE_BOXES: tuple[Box, ...] = (
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
"""The 13 boxes of Yahtzee, in score-card order."""

YATZY_BOXES: tuple[Box, ...] = (
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
"""The 15 boxes of Yatzy, in score-card order."""

UPPER_BOX_COUNT = 6
"""The upper boxes are the first six of every card (a sum over ``scores[:6]`` is the upper
section's)."""

_UPPER_FACE: Mapping[Box, int] = MappingProxyType(
    {
        Box.ACES: 1,
        Box.ONES: 1,
        Box.TWOS: 2,
        Box.THREES: 3,
        Box.FOURS: 4,
        Box.FIVES: 5,
        Box.SIXES: 6,
    }
)


def boxes_for(rules: RuleSet) -> tuple[Box, ...]:
    """Return the boxes of ``rules`` in score-card order (13 for Yahtzee, 15 for Yatzy)."""
    # a card asks on every lookup, with its rules already a RuleSet: no Enum call for that
    if rules is RuleSet.YAHTZEE:
        return YAHTZEE_BOXES
    if rules is RuleSet.YATZY:
        return YATZY_BOXES
    return boxes_for(RuleSet(rules))


def is_upper(box: Box) -> bool:
    """Whether ``box`` is in the upper section (Aces/Ones to Sixes)."""
    return box in _UPPER_FACE


def upper_face(box: Box) -> int:
    """The face (1..6) counted by an upper box; ``ValueError`` for a lower box."""
    try:
        return _UPPER_FACE[box]
    except KeyError:
        raise ValueError(f"{box} is not an upper box") from None


def upper_boxes(rules: RuleSet) -> tuple[Box, ...]:
    """The six upper boxes of ``rules``, Aces/Ones first."""
    return boxes_for(rules)[:6]


def lower_boxes(rules: RuleSet) -> tuple[Box, ...]:
    """The lower boxes of ``rules`` in score-card order."""
    return boxes_for(rules)[6:]


def upper_box_for_face(rules: RuleSet, face: int) -> Box:
    """The upper box counting ``face`` (1..6) in ``rules``, e.g. Fours for 4."""
    if face not in range(1, 7):
        raise ValueError(f"face must be 1..6, not {face!r}")
    return upper_boxes(rules)[face - 1]


def five_of_a_kind_box(rules: RuleSet) -> Box:
    """The five-of-a-kind box: YAHTZEE or YATZY."""
    return Box.YAHTZEE if RuleSet(rules) is RuleSet.YAHTZEE else Box.YATZY
