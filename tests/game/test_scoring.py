"""Scoring tables for every box of both rule sets (RULES.md sections 3, 4, 6 and 7).

The tables double as documentation: each row is ``dice -> box -> points``.
"""

from __future__ import annotations

import itertools

import pytest

from server.game import Box, RuleOptions, RuleSet, Scorecard, boxes_for, score_box
from server.game.boxes import YAHTZEE_BOXES, YATZY_BOXES
from server.game.errors import InvalidDiceError, UnknownBoxError
from server.game.guards import to_die_indexes
from server.game.options import JokerMode, Toggle
from server.game.preview import box_previews, joker_in_force, yahtzee_bonus_due
from server.game.scoring import box_scores, joker_points, qualifies, upper_bonus_for

B = Box

YAHTZEE_TABLE = [
    # upper section: sum of the dice showing the face
    ((1, 1, 1, 2, 3), B.ACES, 3),
    ((2, 3, 4, 5, 6), B.ACES, 0),
    ((2, 2, 5, 2, 1), B.TWOS, 6),
    ((3, 3, 3, 3, 3), B.THREES, 15),
    ((4, 1, 2, 3, 5), B.FOURS, 4),
    ((5, 5, 6, 6, 6), B.FIVES, 10),
    ((6, 6, 6, 6, 1), B.SIXES, 24),
    ((1, 2, 3, 4, 5), B.SIXES, 0),
    # 3 / 4 of a kind: at least 3 / 4 alike, scores the sum of ALL five dice
    ((3, 3, 3, 4, 5), B.THREE_OF_A_KIND, 18),
    ((2, 2, 2, 2, 6), B.THREE_OF_A_KIND, 14),
    ((3, 3, 4, 4, 5), B.THREE_OF_A_KIND, 0),
    ((4, 4, 4, 4, 1), B.FOUR_OF_A_KIND, 17),
    ((4, 4, 4, 1, 1), B.FOUR_OF_A_KIND, 0),
    ((6, 6, 6, 6, 6), B.FOUR_OF_A_KIND, 30),
    # full house: three of one face and two of ANOTHER
    ((2, 2, 3, 3, 3), B.FULL_HOUSE, 25),
    ((6, 1, 6, 1, 6), B.FULL_HOUSE, 25),
    ((2, 2, 2, 2, 3), B.FULL_HOUSE, 0),
    ((1, 2, 3, 4, 5), B.FULL_HOUSE, 0),
    # small straight: four consecutive faces anywhere
    ((1, 2, 3, 4, 6), B.SMALL_STRAIGHT, 30),
    ((1, 2, 3, 4, 4), B.SMALL_STRAIGHT, 30),
    ((4, 3, 2, 5, 5), B.SMALL_STRAIGHT, 30),
    ((6, 4, 3, 5, 1), B.SMALL_STRAIGHT, 30),
    ((1, 2, 3, 4, 5), B.SMALL_STRAIGHT, 30),
    ((2, 3, 4, 5, 6), B.SMALL_STRAIGHT, 30),
    ((1, 2, 3, 5, 6), B.SMALL_STRAIGHT, 0),
    ((1, 1, 2, 2, 3), B.SMALL_STRAIGHT, 0),
    # large straight: 1-5 or 2-6
    ((1, 2, 3, 4, 5), B.LARGE_STRAIGHT, 40),
    ((6, 5, 4, 3, 2), B.LARGE_STRAIGHT, 40),
    ((1, 2, 3, 4, 6), B.LARGE_STRAIGHT, 0),
    ((1, 2, 3, 4, 4), B.LARGE_STRAIGHT, 0),
    # yahtzee and chance
    ((5, 5, 5, 5, 5), B.YAHTZEE, 50),
    ((5, 5, 5, 5, 4), B.YAHTZEE, 0),
    ((1, 2, 3, 4, 6), B.CHANCE, 16),
    ((6, 6, 6, 6, 6), B.CHANCE, 30),
]

YATZY_TABLE = [
    ((1, 1, 2, 3, 4), B.ONES, 2),
    ((2, 3, 4, 5, 6), B.ONES, 0),
    ((2, 2, 2, 1, 3), B.TWOS, 6),
    ((3, 1, 2, 3, 4), B.THREES, 6),
    ((4, 4, 4, 4, 4), B.FOURS, 20),
    ((5, 1, 1, 1, 1), B.FIVES, 5),
    ((6, 6, 2, 6, 1), B.SIXES, 18),
    # one pair: the two dice of the HIGHEST pair
    ((3, 3, 4, 4, 1), B.ONE_PAIR, 8),
    ((5, 5, 5, 2, 2), B.ONE_PAIR, 10),
    ((6, 6, 6, 6, 6), B.ONE_PAIR, 12),
    ((1, 2, 3, 4, 6), B.ONE_PAIR, 0),
    # two pairs: two DIFFERENT pairs, sum of those four dice
    ((3, 3, 4, 4, 1), B.TWO_PAIRS, 14),
    ((5, 5, 5, 2, 2), B.TWO_PAIRS, 14),
    ((6, 6, 6, 6, 2), B.TWO_PAIRS, 0),
    ((6, 6, 6, 6, 6), B.TWO_PAIRS, 0),
    ((1, 1, 2, 3, 4), B.TWO_PAIRS, 0),
    # three / four of a kind: ONLY the matching dice
    ((3, 3, 3, 4, 5), B.THREE_OF_A_KIND, 9),
    ((4, 4, 4, 4, 2), B.THREE_OF_A_KIND, 12),
    ((5, 5, 5, 5, 5), B.THREE_OF_A_KIND, 15),
    ((2, 2, 4, 4, 1), B.THREE_OF_A_KIND, 0),
    ((2, 2, 2, 2, 5), B.FOUR_OF_A_KIND, 8),
    ((6, 6, 6, 6, 6), B.FOUR_OF_A_KIND, 24),
    ((3, 3, 3, 1, 1), B.FOUR_OF_A_KIND, 0),
    # straights are exact in Yatzy
    ((1, 2, 3, 4, 5), B.SMALL_STRAIGHT, 15),
    ((5, 4, 3, 2, 1), B.SMALL_STRAIGHT, 15),
    ((2, 3, 4, 5, 6), B.SMALL_STRAIGHT, 0),
    ((1, 2, 3, 4, 4), B.SMALL_STRAIGHT, 0),
    ((2, 3, 4, 5, 6), B.LARGE_STRAIGHT, 20),
    ((1, 2, 3, 4, 5), B.LARGE_STRAIGHT, 0),
    # full house: the sum of all five dice
    ((2, 2, 3, 3, 3), B.FULL_HOUSE, 13),
    ((6, 6, 6, 5, 5), B.FULL_HOUSE, 28),
    ((6, 6, 6, 6, 6), B.FULL_HOUSE, 0),
    ((1, 2, 3, 4, 6), B.CHANCE, 16),
    ((6, 6, 6, 6, 6), B.YATZY, 50),
    ((6, 6, 6, 6, 1), B.YATZY, 0),
]


def _id(row: tuple[tuple[int, ...], Box, int]) -> str:
    dice, box, points = row
    return f"{box.value}-{''.join(map(str, dice))}-{points}"


@pytest.mark.parametrize("row", YAHTZEE_TABLE, ids=_id)
def test_yahtzee_scoring_table(row: tuple[tuple[int, ...], Box, int]) -> None:
    dice, box, points = row
    assert score_box(RuleSet.YAHTZEE, box, dice) == points
    assert qualifies(RuleSet.YAHTZEE, box, dice) is (points > 0)


@pytest.mark.parametrize("row", YATZY_TABLE, ids=_id)
def test_yatzy_scoring_table(row: tuple[tuple[int, ...], Box, int]) -> None:
    dice, box, points = row
    assert score_box(RuleSet.YATZY, box, dice) == points
    assert qualifies(RuleSet.YATZY, box, dice) is (points > 0)


@pytest.mark.parametrize(
    ("rules", "table"), [(RuleSet.YAHTZEE, YAHTZEE_TABLE), (RuleSet.YATZY, YATZY_TABLE)]
)
def test_tables_cover_every_box(rules: RuleSet, table: list[tuple[object, Box, int]]) -> None:
    covered = {box for _, box, _ in table}
    assert covered == set(boxes_for(rules))
    # every box has a scoring row, and every lower box but Chance a row that scores 0
    assert {box for _, box, points in table if points > 0} == set(boxes_for(rules))
    zero_rows = {box for _, box, points in table if points == 0}
    assert zero_rows >= set(boxes_for(rules)[6:]) - {B.CHANCE}


def test_box_lists_in_order() -> None:
    assert [b.value for b in boxes_for(RuleSet.YAHTZEE)] == [
        "aces", "twos", "threes", "fours", "fives", "sixes", "three_of_a_kind",
        "four_of_a_kind", "full_house", "small_straight", "large_straight", "yahtzee", "chance",
    ]  # fmt: skip
    assert [b.value for b in boxes_for(RuleSet.YATZY)] == [
        "ones", "twos", "threes", "fours", "fives", "sixes", "one_pair", "two_pairs",
        "three_of_a_kind", "four_of_a_kind", "small_straight", "large_straight", "full_house",
        "chance", "yatzy",
    ]  # fmt: skip


def test_five_fives_with_yahtzee_empty_section_7() -> None:
    """RULES.md 7: 5,5,5,5,5 with YAHTZEE empty: FH 0, 3K 25, 4K 25, Chance 25, Fives 25, Y 50."""
    card = Scorecard.empty(RuleSet.YAHTZEE)
    previews = {p.box: p for p in box_previews(RuleOptions(), card, (5, 5, 5, 5, 5))}
    assert all(p.allowed for p in previews.values())
    expected = {
        B.FULL_HOUSE: 0,
        B.THREE_OF_A_KIND: 25,
        B.FOUR_OF_A_KIND: 25,
        B.CHANCE: 25,
        B.FIVES: 25,
        B.YAHTZEE: 50,
        B.SMALL_STRAIGHT: 0,
        B.ACES: 0,
    }
    assert {box: previews[box].points for box in expected} == expected
    assert not joker_in_force(RuleOptions(), card, (5, 5, 5, 5, 5))


def _card(rules: RuleSet, filled: dict[Box, int], bonuses: int = 0) -> Scorecard:
    card = Scorecard.empty(rules)
    for box, points in filled.items():
        card = card.with_score(box, points)
    return Scorecard(card.rules, card.scores, bonuses)


@pytest.mark.parametrize(
    ("rules", "upper_points", "total", "bonus"),
    [
        # 2 + 6 + 9 + 12 + 15 + 18 = 62: no bonus
        (RuleSet.YAHTZEE, (2, 6, 9, 12, 15, 18), 62, 0),
        # 3 + 6 + 9 + 12 + 15 + 18 = 63: bonus (inclusive)
        (RuleSet.YAHTZEE, (3, 6, 9, 12, 15, 18), 63, 35),
        (RuleSet.YAHTZEE, (5, 10, 15, 20, 25, 30), 105, 35),
        (RuleSet.YATZY, (2, 6, 9, 12, 15, 18), 62, 0),
        (RuleSet.YATZY, (3, 6, 9, 12, 15, 18), 63, 50),
    ],
)
def test_upper_bonus_threshold_is_inclusive(
    rules: RuleSet, upper_points: tuple[int, ...], total: int, bonus: int
) -> None:
    assert upper_bonus_for(rules, total) == bonus
    card = _card(rules, dict(zip(boxes_for(rules)[:6], upper_points, strict=True)))
    totals = card.totals()
    assert (totals.upper, totals.upper_bonus, totals.grand) == (total, bonus, total + bonus)


def test_totals_are_the_sum_of_parts() -> None:
    card = _card(
        RuleSet.YAHTZEE,
        {B.ACES: 3, B.TWOS: 6, B.THREES: 9, B.FOURS: 12, B.FIVES: 15, B.SIXES: 18, B.CHANCE: 22},
        bonuses=2,
    )
    totals = card.totals()
    assert (totals.upper, totals.upper_bonus, totals.lower, totals.yahtzee_bonus) == (
        63,
        35,
        22,
        200,
    )
    assert totals.grand == 63 + 35 + 22 + 200


Y = RuleSet.YAHTZEE
FORCED = RuleOptions()
FREE = RuleOptions(joker=JokerMode.FREE)
NO_EXTRA = RuleOptions(extra_yahtzees=Toggle.OFF)
ALL_LOWER_FILLED = {
    B.THREE_OF_A_KIND: 10,
    B.FOUR_OF_A_KIND: 0,
    B.FULL_HOUSE: 25,
    B.SMALL_STRAIGHT: 30,
    B.LARGE_STRAIGHT: 0,
    B.CHANCE: 20,
}

# (id, options, filled boxes, dice, {box: (allowed, points)} for some open boxes, bonus due)
JOKER_TABLE = [
    (
        "forced-upper-open-only-legal",
        FORCED,
        {B.YAHTZEE: 50},
        (4, 4, 4, 4, 4),
        {B.FOURS: (True, 20), B.FULL_HOUSE: (False, 0), B.ACES: (False, 0), B.CHANCE: (False, 0)},
        True,
    ),
    (
        "forced-upper-filled-lower-full-value",
        FORCED,
        {B.YAHTZEE: 50, B.FOURS: 12},
        (4, 4, 4, 4, 4),
        {
            B.FULL_HOUSE: (True, 25),
            B.SMALL_STRAIGHT: (True, 30),
            B.LARGE_STRAIGHT: (True, 40),
            B.THREE_OF_A_KIND: (True, 20),
            B.FOUR_OF_A_KIND: (True, 20),
            B.CHANCE: (True, 20),
            B.ACES: (False, 0),
            B.SIXES: (False, 0),
        },
        True,
    ),
    (
        "forced-all-lower-filled-zero-in-upper",
        FORCED,
        {B.YAHTZEE: 50, B.FOURS: 16, **ALL_LOWER_FILLED},
        (4, 4, 4, 4, 4),
        {B.ACES: (True, 0), B.SIXES: (True, 0)},
        True,
    ),
    (
        "forced-yahtzee-zero-no-bonus-joker-still",
        FORCED,
        {B.YAHTZEE: 0},
        (4, 4, 4, 4, 4),
        {B.FOURS: (True, 20), B.FULL_HOUSE: (False, 0)},
        False,
    ),
    (
        "forced-yahtzee-zero-lower-full-value",
        FORCED,
        {B.YAHTZEE: 0, B.FOURS: 8},
        (4, 4, 4, 4, 4),
        {B.FULL_HOUSE: (True, 25), B.LARGE_STRAIGHT: (True, 40), B.ACES: (False, 0)},
        False,
    ),
    (
        "free-upper-open-straights-score-as-usual",
        FREE,
        {B.YAHTZEE: 50},
        (4, 4, 4, 4, 4),
        {
            B.FOURS: (True, 20),
            B.FULL_HOUSE: (True, 0),
            B.SMALL_STRAIGHT: (True, 0),
            B.LARGE_STRAIGHT: (True, 0),
            B.THREE_OF_A_KIND: (True, 20),
            B.CHANCE: (True, 20),
            B.ACES: (True, 0),
        },
        True,
    ),
    (
        "free-upper-filled-joker-values",
        FREE,
        {B.YAHTZEE: 50, B.FOURS: 12},
        (4, 4, 4, 4, 4),
        {
            B.FULL_HOUSE: (True, 25),
            B.SMALL_STRAIGHT: (True, 30),
            B.LARGE_STRAIGHT: (True, 40),
            B.THREE_OF_A_KIND: (True, 20),
            B.FOUR_OF_A_KIND: (True, 20),
            B.CHANCE: (True, 20),
            B.ACES: (True, 0),
        },
        True,
    ),
    (
        "free-yahtzee-zero-no-bonus-joker-still",
        FREE,
        {B.YAHTZEE: 0, B.FOURS: 12},
        (4, 4, 4, 4, 4),
        {
            B.FULL_HOUSE: (True, 25),
            B.SMALL_STRAIGHT: (True, 30),
            B.LARGE_STRAIGHT: (True, 40),
            B.CHANCE: (True, 20),
            B.ACES: (True, 0),
        },
        False,
    ),
    (
        "forced-upper-open-beats-everything-else-filled",
        FORCED,
        {B.YAHTZEE: 50, **ALL_LOWER_FILLED},
        (4, 4, 4, 4, 4),
        {B.FOURS: (True, 20), B.ACES: (False, 0), B.SIXES: (False, 0)},
        True,
    ),
    (
        "extra-yahtzees-off-no-bonus-no-joker",
        NO_EXTRA,
        {B.YAHTZEE: 50, B.FOURS: 12},
        (4, 4, 4, 4, 4),
        {
            B.FULL_HOUSE: (True, 0),
            B.SMALL_STRAIGHT: (True, 0),
            B.THREE_OF_A_KIND: (True, 20),
            B.ACES: (True, 0),
        },
        False,
    ),
    (
        "yahtzee-box-open-no-joker",
        FORCED,
        {},
        (4, 4, 4, 4, 4),
        {B.YAHTZEE: (True, 50), B.FULL_HOUSE: (True, 0), B.FOURS: (True, 20), B.ACES: (True, 0)},
        False,
    ),
    (
        "not-five-of-a-kind-no-joker",
        FORCED,
        {B.YAHTZEE: 50},
        (4, 4, 4, 4, 2),
        {B.FOURS: (True, 16), B.FULL_HOUSE: (True, 0), B.ACES: (True, 0)},
        False,
    ),
]


@pytest.mark.parametrize(
    ("options", "filled", "dice", "expected", "bonus"),
    [row[1:] for row in JOKER_TABLE],
    ids=[row[0] for row in JOKER_TABLE],
)
def test_joker_and_bonus_table(
    options: RuleOptions,
    filled: dict[Box, int],
    dice: tuple[int, ...],
    expected: dict[Box, tuple[bool, int]],
    bonus: bool,
) -> None:
    card = _card(options.rules, filled)
    previews = {p.box: p for p in box_previews(options, card, dice)}
    assert set(previews) == set(card.open_boxes())
    assert {box: (previews[box].allowed, previews[box].points) for box in expected} == expected
    assert yahtzee_bonus_due(options, card, dice) is bonus
    assert any(p.allowed for p in previews.values())


def test_yatzy_has_no_joker_and_no_bonus() -> None:
    options = RuleOptions(rules=RuleSet.YATZY)
    card = _card(RuleSet.YATZY, {B.YATZY: 50})
    previews = {p.box: p for p in box_previews(options, card, (4, 4, 4, 4, 4))}
    assert all(p.allowed for p in previews.values())
    assert previews[B.FULL_HOUSE].points == 0
    assert previews[B.TWO_PAIRS].points == 0
    assert previews[B.FOURS].points == 20
    assert not yahtzee_bonus_due(options, card, (4, 4, 4, 4, 4))


@pytest.mark.parametrize(
    ("box", "points"),
    [
        (B.FULL_HOUSE, 25),
        (B.SMALL_STRAIGHT, 30),
        (B.LARGE_STRAIGHT, 40),
        (B.THREE_OF_A_KIND, 10),
        (B.FOUR_OF_A_KIND, 10),
        (B.CHANCE, 10),
        (B.YAHTZEE, 50),
    ],
)
def test_joker_points(box: Box, points: int) -> None:
    assert joker_points(box, (2, 2, 2, 2, 2)) == points


def test_joker_points_refuse_upper_boxes() -> None:
    with pytest.raises(ValueError, match="no Joker value"):
        joker_points(B.TWOS, (2, 2, 2, 2, 2))


@pytest.mark.parametrize(
    "dice",
    [
        (1, 2, 3, 4),
        (1, 2, 3, 4, 5, 6),
        (0, 1, 2, 3, 4),
        (1, 2, 3, 4, 7),
        (1.0, 2, 3, 4, 5),
        (True, 2, 3, 4, 5),
        ("1", 2, 3, 4, 5),
        ([1], 2, 3, 4, 5),
    ],
)
def test_scoring_rejects_bad_dice(dice: tuple[int, ...]) -> None:
    with pytest.raises(InvalidDiceError):
        score_box(RuleSet.YAHTZEE, B.CHANCE, dice)


@pytest.mark.parametrize(
    ("rules", "box"),
    [(RuleSet.YAHTZEE, B.ONE_PAIR), (RuleSet.YAHTZEE, B.ONES), (RuleSet.YATZY, B.ACES)],
)
def test_scoring_rejects_boxes_of_the_other_rule_set(rules: RuleSet, box: Box) -> None:
    with pytest.raises(UnknownBoxError):
        score_box(rules, box, (1, 2, 3, 4, 5))


@pytest.mark.parametrize("rules", list(RuleSet))
def test_the_table_of_a_rolls_scores_is_what_each_box_scores(rules: RuleSet) -> None:
    # every ordered roll: the table is kept per multiset of faces, the order must not matter
    for roll in itertools.product(range(1, 7), repeat=5):
        table = box_scores(rules, roll)
        assert set(table) == set(boxes_for(rules))
        assert all(table[box] == score_box(rules, box, roll) for box in boxes_for(rules))


@pytest.mark.parametrize(
    "dice", [(True, 1, 1, 1, 1), (0, 1, 2, 3, 4), (1, 2, 3, 4), [6, 6, 6, 6, 7]]
)
def test_the_table_checks_the_dice_before_it_looks_up(dice: tuple[int, ...]) -> None:
    # True == 1 and hashes alike: a lookup before the check would score it as a Yahtzee
    with pytest.raises(InvalidDiceError):
        box_scores(RuleSet.YAHTZEE, dice)


def test_boxes_for_takes_a_rule_set_or_its_name_and_refuses_others() -> None:
    assert boxes_for(RuleSet.YAHTZEE) == boxes_for("yahtzee") == YAHTZEE_BOXES
    assert boxes_for(RuleSet.YATZY) == boxes_for("yatzy") == YATZY_BOXES
    assert len(YAHTZEE_BOXES) == 13
    assert len(YATZY_BOXES) == 15
    with pytest.raises(ValueError, match="poker"):
        boxes_for("poker")


@pytest.mark.parametrize(
    "indexes",
    [[0, 5], [-1], (True,), (0.0,), ("0",), ([0],), "01", b"\x00", 3, {0: 1}.items()],
)
def test_die_indexes_refuse_what_is_not_a_collection_of_indexes_0_to_4(indexes: object) -> None:
    with pytest.raises(InvalidDiceError):
        to_die_indexes(indexes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("indexes", "expected"),
    [
        ([], set()),
        ((0, 4), {0, 4}),
        ({1, 2}, {1, 2}),
        (frozenset({3}), {3}),
        (range(5), {0, 1, 2, 3, 4}),
        (iter([2, 2]), {2}),
        ({4: "x"}.keys(), {4}),
    ],
)
def test_die_indexes_take_any_collection_of_indexes_0_to_4(
    indexes: object, expected: set[int]
) -> None:
    assert to_die_indexes(indexes) == expected  # type: ignore[arg-type]
