"""Pure scoring of one roll of five dice (RULES.md sections 3 and 6).

These functions know nothing about score cards or turns: they answer "does this roll meet the
box's condition" (:func:`qualifies`) and "what does it score there under the normal rules"
(:func:`score_box`). The Joker and extra-Yahtzee bonus, which depend on the card, are in
:mod:`server.game.preview`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType

from .boxes import Box, upper_boxes, upper_face
from .errors import InvalidDiceError, UnknownBoxError
from .options import RuleSet

__all__ = [
    "DICE_COUNT",
    "FULL_HOUSE_POINTS",
    "LARGE_STRAIGHT_POINTS",
    "SMALL_STRAIGHT_POINTS",
    "UPPER_BONUS_THRESHOLD",
    "YAHTZEE_BONUS",
    "YAHTZEE_POINTS",
    "YATZY_LARGE_STRAIGHT_POINTS",
    "YATZY_POINTS",
    "YATZY_SMALL_STRAIGHT_POINTS",
    "Dice",
    "box_scores",
    "check_dice",
    "face_counts",
    "is_five_of_a_kind",
    "joker_points",
    "qualifies",
    "score_box",
    "upper_bonus_for",
    "upper_bonus_value",
]

Dice = tuple[int, ...]
"""Five faces, each 1..6."""

DICE_COUNT = 5
UPPER_BONUS_THRESHOLD = 63
YAHTZEE_BONUS = 100
FULL_HOUSE_POINTS = 25
SMALL_STRAIGHT_POINTS = 30
LARGE_STRAIGHT_POINTS = 40
YAHTZEE_POINTS = 50
YATZY_SMALL_STRAIGHT_POINTS = 15
YATZY_LARGE_STRAIGHT_POINTS = 20
YATZY_POINTS = 50

_SMALL_RUNS = (frozenset({1, 2, 3, 4}), frozenset({2, 3, 4, 5}), frozenset({3, 4, 5, 6}))
_LARGE_RUNS = (frozenset({1, 2, 3, 4, 5}), frozenset({2, 3, 4, 5, 6}))


_FACES = frozenset(range(1, 7))
_INT_ONLY = frozenset({int})


def check_dice(dice: Sequence[int]) -> Dice:
    """Return ``dice`` as a tuple if it is five faces 1..6, else raise ``InvalidDiceError``."""
    faces = tuple(dice)
    # Checked in C (several times a command). The types first: 1.0 and True equal a face, and
    # a set cannot hold a list.
    if (
        len(faces) != DICE_COUNT
        or not _INT_ONLY.issuperset(map(type, faces))
        or not _FACES.issuperset(faces)
    ):
        raise InvalidDiceError(f"a roll is five faces 1..6, not {faces!r}")
    return faces


def face_counts(dice: Dice) -> tuple[int, ...]:
    """How many dice show each face: index ``f`` holds the count of face ``f`` (index 0 is 0)."""
    counts = [0] * 7
    for face in dice:
        counts[face] += 1
    return tuple(counts)


def _highest_face_with(dice: Dice, at_least: int) -> int | None:
    counts = face_counts(dice)
    for face in range(6, 0, -1):
        if counts[face] >= at_least:
            return face
    return None


def is_five_of_a_kind(dice: Dice) -> bool:
    """Whether all five dice show the same face."""
    return len(set(dice)) == 1


def _is_full_house(dice: Dice) -> bool:
    return sorted(c for c in face_counts(dice) if c) == [2, 3]


def _has_small_run(dice: Dice) -> bool:
    faces = set(dice)
    return any(run <= faces for run in _SMALL_RUNS)


def _has_large_run(dice: Dice) -> bool:
    return set(dice) in _LARGE_RUNS


def _pair_faces(dice: Dice) -> tuple[int, ...]:
    counts = face_counts(dice)
    return tuple(f for f in range(6, 0, -1) if counts[f] >= 2)


def _upper(box: Box) -> tuple[Callable[[Dice], bool], Callable[[Dice], int]]:
    face = upper_face(box)
    return (lambda d: face in d), (lambda d: face * d.count(face))


def _n_kind_sum(n: int) -> tuple[Callable[[Dice], bool], Callable[[Dice], int]]:
    return (lambda d: _highest_face_with(d, n) is not None), sum


def _n_kind_only(n: int) -> tuple[Callable[[Dice], bool], Callable[[Dice], int]]:
    def points(d: Dice) -> int:
        face = _highest_face_with(d, n)
        return 0 if face is None else n * face

    return (lambda d: _highest_face_with(d, n) is not None), points


def _fixed(
    test: Callable[[Dice], bool], value: int
) -> tuple[Callable[[Dice], bool], Callable[[Dice], int]]:
    return test, (lambda d: value)


def _two_pairs_points(dice: Dice) -> int:
    pairs = _pair_faces(dice)
    return 2 * (pairs[0] + pairs[1]) if len(pairs) >= 2 else 0


_Rule = tuple[Callable[[Dice], bool], Callable[[Dice], int]]

_YAHTZEE_RULES: Mapping[Box, _Rule] = MappingProxyType(
    {
        **{box: _upper(box) for box in upper_boxes(RuleSet.YAHTZEE)},
        Box.THREE_OF_A_KIND: _n_kind_sum(3),
        Box.FOUR_OF_A_KIND: _n_kind_sum(4),
        Box.FULL_HOUSE: _fixed(_is_full_house, FULL_HOUSE_POINTS),
        Box.SMALL_STRAIGHT: _fixed(_has_small_run, SMALL_STRAIGHT_POINTS),
        Box.LARGE_STRAIGHT: _fixed(_has_large_run, LARGE_STRAIGHT_POINTS),
        Box.YAHTZEE: _fixed(is_five_of_a_kind, YAHTZEE_POINTS),
        Box.CHANCE: ((lambda d: True), sum),
    }
)

_YATZY_RULES: Mapping[Box, _Rule] = MappingProxyType(
    {
        **{box: _upper(box) for box in upper_boxes(RuleSet.YATZY)},
        Box.ONE_PAIR: _n_kind_only(2),
        Box.TWO_PAIRS: ((lambda d: len(_pair_faces(d)) >= 2), _two_pairs_points),
        Box.THREE_OF_A_KIND: _n_kind_only(3),
        Box.FOUR_OF_A_KIND: _n_kind_only(4),
        Box.SMALL_STRAIGHT: _fixed(
            lambda d: sorted(d) == [1, 2, 3, 4, 5], YATZY_SMALL_STRAIGHT_POINTS
        ),
        Box.LARGE_STRAIGHT: _fixed(
            lambda d: sorted(d) == [2, 3, 4, 5, 6], YATZY_LARGE_STRAIGHT_POINTS
        ),
        Box.FULL_HOUSE: (_is_full_house, sum),
        Box.CHANCE: ((lambda d: True), sum),
        Box.YATZY: _fixed(is_five_of_a_kind, YATZY_POINTS),
    }
)


def _rule(rules: RuleSet, box: Box) -> _Rule:
    table = _YAHTZEE_RULES if RuleSet(rules) is RuleSet.YAHTZEE else _YATZY_RULES
    try:
        return table[box]
    except KeyError:
        raise UnknownBoxError(f"{box!s} is not a box of {RuleSet(rules)!s}") from None


def qualifies(rules: RuleSet, box: Box, dice: Sequence[int]) -> bool:
    """Whether ``dice`` meet the condition of ``box`` in ``rules`` (Chance always does).

    Upper boxes qualify when at least one die shows their face. Five of a kind qualifies for
    3 and 4 of a Kind but not for Full House or Two Pairs.
    """
    test, _ = _rule(rules, box)
    return test(check_dice(dice))


def score_box(rules: RuleSet, box: Box, dice: Sequence[int]) -> int:
    """Points ``dice`` score in ``box`` under the normal rules (no Joker); 0 if not met."""
    test, points = _rule(rules, box)
    faces = check_dice(dice)
    return points(faces) if test(faces) else 0


def box_scores(rules: RuleSet, dice: Sequence[int]) -> Mapping[Box, int]:
    """Points ``dice`` score in every box of ``rules`` under the normal rules (no Joker).

    What a roll scores depends only on its faces, not their order: one table per rule set and
    multiset of faces (252 of them) is made once and kept, so a preview of the open boxes after
    every roll checks the dice once and looks the rest up."""
    rule_set = rules if type(rules) is RuleSet else RuleSet(rules)
    return _scores_of(rule_set, tuple(sorted(check_dice(dice))))


@functools.cache
def _scores_of(rules: RuleSet, faces: Dice) -> Mapping[Box, int]:
    table = _YAHTZEE_RULES if rules is RuleSet.YAHTZEE else _YATZY_RULES
    return MappingProxyType(
        {box: points(faces) if test(faces) else 0 for box, (test, points) in table.items()}
    )


def joker_points(box: Box, dice: Sequence[int]) -> int:
    """Points of a Yahtzee lower box "at full value" under the Joker (RULES.md section 4).

    Full House 25, Small Straight 30, Large Straight 40, YAHTZEE 50; 3 and 4 of a Kind and Chance
    the sum of the dice. ``ValueError`` for any other box.
    """
    faces = check_dice(dice)
    if box in (Box.THREE_OF_A_KIND, Box.FOUR_OF_A_KIND, Box.CHANCE):
        return sum(faces)
    fixed = {
        Box.FULL_HOUSE: FULL_HOUSE_POINTS,
        Box.SMALL_STRAIGHT: SMALL_STRAIGHT_POINTS,
        Box.LARGE_STRAIGHT: LARGE_STRAIGHT_POINTS,
        Box.YAHTZEE: YAHTZEE_POINTS,
    }
    if box not in fixed:
        raise ValueError(f"{box!s} has no Joker value")
    return fixed[box]


def upper_bonus_value(rules: RuleSet) -> int:
    """The upper-section bonus of ``rules``: 35 in Yahtzee, 50 in Yatzy."""
    return 35 if RuleSet(rules) is RuleSet.YAHTZEE else 50


def upper_bonus_for(rules: RuleSet, upper_total: int) -> int:
    """The upper bonus earned by ``upper_total``: the bonus if it is 63 or more, else 0."""
    return upper_bonus_value(rules) if upper_total >= UPPER_BONUS_THRESHOLD else 0
