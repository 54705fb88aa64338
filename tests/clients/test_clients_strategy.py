"""The bot's greedy strategy, on dice and previews chosen by hand."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clients.strategy import Decision, Entry, choose_box, choose_keep, decide

YAHTZEE_OPEN = [
    "aces",
    "twos",
    "threes",
    "fours",
    "fives",
    "sixes",
    "three_of_a_kind",
    "four_of_a_kind",
    "full_house",
    "small_straight",
    "large_straight",
    "yahtzee",
    "chance",
]


def preview(points: dict[str, int], *, not_allowed: tuple[str, ...] = ()) -> list[Entry]:
    return [Entry(box, box not in not_allowed, points.get(box, 0)) for box in points]


def test_choose_box_prefers_the_score_furthest_above_par() -> None:
    entries = preview({"sixes": 24, "chance": 24, "three_of_a_kind": 24, "fours": 0})
    assert choose_box(entries) == "sixes"


def test_choose_box_puts_a_zero_where_it_costs_least() -> None:
    entries = preview({"aces": 0, "yahtzee": 0, "large_straight": 0, "chance": 0})
    assert choose_box(entries) == "aces"


def test_choose_box_skips_boxes_that_are_not_allowed() -> None:
    entries = preview({"fours": 20, "chance": 20, "yahtzee": 0}, not_allowed=("chance",))
    assert choose_box(entries) == "fours"


def test_choose_box_without_an_allowed_box_is_an_error() -> None:
    with pytest.raises(ValueError, match="no allowed box"):
        choose_box(preview({"chance": 20}, not_allowed=("chance",)))


@pytest.mark.parametrize(
    ("dice", "open_boxes", "keep"),
    [
        pytest.param([6, 6, 6, 2, 1], YAHTZEE_OPEN, (0, 1, 2), id="three-sixes"),
        pytest.param([1, 2, 3, 4, 6], YAHTZEE_OPEN, (0, 1, 2, 3), id="run-of-four"),
        pytest.param([2, 2, 5, 5, 1], YAHTZEE_OPEN, (0, 1, 2, 3), id="two-pairs-full-house"),
        pytest.param([3, 3, 3, 5, 5], YAHTZEE_OPEN, (0, 1, 2, 3, 4), id="full-house-kept"),
        pytest.param([1, 4, 4, 2, 6], YAHTZEE_OPEN, (1, 2), id="pair-of-fours"),
        pytest.param([1, 2, 3, 6, 6], ["small_straight", "aces"], (0, 1, 2), id="run-of-three"),
        pytest.param([1, 2, 4, 5, 6], ["chance"], (3, 4), id="chance-keeps-high"),
        pytest.param([1, 3, 3, 5, 6], ["fives", "sixes"], (4,), id="highest-upper-face"),
    ],
)
def test_choose_keep(dice: list[int], open_boxes: list[str], keep: tuple[int, ...]) -> None:
    assert choose_keep(dice, open_boxes) == keep


def test_choose_keep_ignores_a_set_nobody_wants() -> None:
    # Three aces, but only the straights are open: keep the run instead.
    assert choose_keep([1, 1, 1, 2, 3], ["small_straight", "large_straight"]) == (0, 3, 4)


def test_decide_scores_after_the_last_roll() -> None:
    entries = preview({"chance": 25, "aces": 0})
    assert decide([4, 5, 5, 5, 6], 0, entries) == Decision(score="chance")


def test_decide_takes_a_yahtzee_at_once() -> None:
    entries = preview({"yahtzee": 50, "sixes": 30, "chance": 30})
    assert decide([6] * 5, 2, entries) == Decision(score="yahtzee")


def test_decide_rolls_again_keeping_a_set() -> None:
    entries = preview(dict.fromkeys(YAHTZEE_OPEN, 0) | {"fives": 15, "chance": 20})
    assert decide([5, 5, 5, 2, 3], 2, entries) == Decision(keep=(0, 1, 2))


def test_decide_takes_the_only_box_a_forced_joker_allows() -> None:
    entries = preview(
        {"fours": 20, "chance": 20, "full_house": 25},
        not_allowed=("chance", "full_house"),
    )
    assert decide([4] * 5, 2, entries) == Decision(score="fours")


@given(
    dice=st.lists(st.integers(1, 6), min_size=5, max_size=5),
    rolls_left=st.integers(0, 2),
    boxes=st.lists(st.sampled_from(YAHTZEE_OPEN), min_size=1, unique=True),
    data=st.data(),
)
def test_decide_always_makes_a_legal_move(
    dice: list[int], rolls_left: int, boxes: list[str], data: st.DataObject
) -> None:
    entries = [Entry(box, data.draw(st.booleans()), data.draw(st.integers(0, 50))) for box in boxes]
    if not any(e.allowed for e in entries):
        entries[0] = Entry(entries[0].box, True, entries[0].points)
    decision = decide(dice, rolls_left, entries)
    if decision.score is not None:
        assert decision.score in {e.box for e in entries if e.allowed}
    else:
        assert rolls_left > 0
        assert len(decision.keep) < 5
        assert len(set(decision.keep)) == len(decision.keep)
        assert all(0 <= i < 5 for i in decision.keep)
