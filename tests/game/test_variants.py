"""The house variants of RULES.md section 5: ``upper_first`` and ``bonus_turn``."""

from __future__ import annotations

import pytest

from server.game import (
    BonusTaken,
    Box,
    BoxPreview,
    GameError,
    GameOver,
    Phase,
    Roll,
    RuleOptions,
    Score,
    Scorecard,
    TakeBonus,
    TurnChanged,
    apply,
    bonus_turn_available,
    boxes_for,
    preview,
    totals,
)
from server.game.preview import box_previews

from ._support import play, started, turn

B = Box
UPPER = (B.ACES, B.TWOS, B.THREES, B.FOURS, B.FIVES, B.SIXES)
LOWER = boxes_for("yahtzee")[6:]
UPPER_FIRST = RuleOptions(upper_first="on")
BONUS_TURN = RuleOptions(bonus_turn="on")


def _card(filled: dict[Box, int], bonuses: int = 0) -> Scorecard:
    card = Scorecard.empty("yahtzee")
    for box, points in filled.items():
        card = card.with_score(box, points)
    return Scorecard(card.rules, card.scores, bonuses)


def _allowed(previews: tuple[BoxPreview, ...]) -> dict[Box, int]:
    return {p.box: p.points for p in previews if p.allowed}


# -- upper_first -------------------------------------------------------------------------------


def test_upper_first_allows_only_upper_boxes_while_one_is_open() -> None:
    state = started(["a"], UPPER_FIRST)
    state, _ = apply(state, Roll("a", (2, 3, 4, 5, 6)))
    shown = preview(state)
    assert _allowed(shown) == {
        B.ACES: 0,
        B.TWOS: 2,
        B.THREES: 3,
        B.FOURS: 4,
        B.FIVES: 5,
        B.SIXES: 6,
    }
    assert {p.box: (p.allowed, p.points) for p in shown if p.box in LOWER} == dict.fromkeys(
        LOWER, (False, 0)
    )
    with pytest.raises(GameError) as refused:
        apply(state, Score("a", B.LARGE_STRAIGHT))
    assert refused.value.code == "box_not_allowed"


def test_upper_first_opens_the_lower_section_when_the_upper_is_full() -> None:
    state = started(["a"], UPPER_FIRST)
    for box in UPPER[:5]:
        state, _ = turn(state, "a", box, (1, 2, 3, 4, 5))
    state, _ = apply(state, Roll("a", (2, 3, 4, 5, 6)))
    assert set(_allowed(preview(state))) == {B.SIXES}
    state, _ = play(state, Score("a", B.SIXES), Roll("a", (2, 3, 4, 5, 6)))
    assert _allowed(preview(state)) == {
        B.THREE_OF_A_KIND: 0,
        B.FOUR_OF_A_KIND: 0,
        B.FULL_HOUSE: 0,
        B.SMALL_STRAIGHT: 30,
        B.LARGE_STRAIGHT: 40,
        B.YAHTZEE: 0,
        B.CHANCE: 20,
    }


@pytest.mark.parametrize(
    ("filled", "allowed"),
    [
        # the matching upper box (Fours) is open: it is the only legal box
        ({B.YAHTZEE: 50}, {B.FOURS: 20}),
        # Fours filled: any other open upper box, scoring its face sum (0); no lower box
        (
            {B.YAHTZEE: 50, B.FOURS: 8, B.ACES: 3},
            {B.TWOS: 0, B.THREES: 0, B.FIVES: 0, B.SIXES: 0},
        ),
        # the upper section full: the lower boxes at full value, as in the official rules
        (
            {B.YAHTZEE: 0, **dict.fromkeys(UPPER, 3)},
            {
                B.THREE_OF_A_KIND: 20,
                B.FOUR_OF_A_KIND: 20,
                B.FULL_HOUSE: 25,
                B.SMALL_STRAIGHT: 30,
                B.LARGE_STRAIGHT: 40,
                B.CHANCE: 20,
            },
        ),
    ],
)
@pytest.mark.parametrize("joker", ["forced", "free"])
def test_upper_first_joker_table(
    filled: dict[Box, int], allowed: dict[Box, int], joker: str
) -> None:
    options = RuleOptions(upper_first="on", joker=joker)
    shown = _allowed(box_previews(options, _card(filled), (4, 4, 4, 4, 4)))
    if joker == "forced" or B.FOURS not in allowed:
        assert shown == allowed
    else:  # free Joker: any open upper box, the matching one included
        assert shown == {B.ACES: 0, B.TWOS: 0, B.THREES: 0, B.FOURS: 20, B.FIVES: 0, B.SIXES: 0}


def test_upper_first_pays_the_extra_yahtzee_bonus() -> None:
    state = started(["a"], UPPER_FIRST)
    # Under upper_first the YAHTZEE box can be filled only after the six upper boxes.
    for box in UPPER:
        state, _ = turn(state, "a", box, (1, 1, 2, 2, 3))
    state, _ = turn(state, "a", B.YAHTZEE, (5, 5, 5, 5, 5))
    state, events = turn(state, "a", B.FULL_HOUSE, (5, 5, 5, 5, 5))
    scored = [e for e in events if e.type == "scored"]
    assert scored[0].points == 25
    assert scored[0].yahtzee_bonus == 100
    assert scored[0].joker


# -- bonus_turn --------------------------------------------------------------------------------


def test_bonus_turn_takes_the_bonus_and_fills_no_box() -> None:
    state = started(["a", "b"], BONUS_TURN)
    state, _ = turn(state, "a", B.YAHTZEE, (3, 3, 3, 3, 3))
    state, _ = turn(state, "b", B.CHANCE, (1, 2, 3, 4, 6))
    state, _ = apply(state, Roll("a", (6, 6, 6, 6, 6)))
    assert bonus_turn_available(state)
    card_before = state.players[0].card
    state, events = apply(state, TakeBonus("a"))
    assert events == (BonusTaken("a", 100, False, 150), TurnChanged("b", 2))
    card = state.players[0].card
    assert card.scores == card_before.scores
    assert card.yahtzee_bonuses == 1
    assert totals(state, "a").grand == 150
    assert state.phase is Phase.AWAITING_ROLL


def test_bonus_turn_game_goes_on_until_every_card_is_full() -> None:
    state = started(["a", "b"], BONUS_TURN)
    boxes = list(boxes_for("yahtzee"))
    a_boxes = [B.YAHTZEE, *(b for b in boxes if b is not B.YAHTZEE)]
    state, _ = turn(state, "a", a_boxes[0], (2, 2, 2, 2, 2))
    state, _ = turn(state, "b", boxes[0], (1, 2, 3, 4, 6))
    state, _ = play(state, Roll("a", (1, 1, 1, 1, 1)), TakeBonus("a"))
    for index in range(1, 13):  # b fills one box each round, a one box per turn after the take
        state, _ = turn(state, "b", boxes[index], (1, 2, 3, 4, 6))
        if index < 12:
            state, _ = turn(state, "a", a_boxes[index], (1, 2, 3, 4, 6))
    # b's card is full; a still has one open box: b is skipped, a plays on
    assert state.players[1].card.is_complete
    assert state.phase is Phase.AWAITING_ROLL
    assert state.order[state.turn] == "a"
    state, events = turn(state, "a", a_boxes[12], (1, 2, 3, 4, 6))
    assert isinstance(events[-1], GameOver)
    assert state.players[0].card.yahtzee_bonuses == 1


@pytest.mark.parametrize(
    ("options", "yahtzee_faces"),
    [
        (BONUS_TURN, (1, 2, 3, 4, 6)),  # YAHTZEE box holds 0: no bonus, nothing to take
        (RuleOptions(), (3, 3, 3, 3, 3)),  # option off
        (RuleOptions(bonus_turn="on", extra_yahtzees="off"), (3, 3, 3, 3, 3)),
    ],
)
def test_take_bonus_is_refused_without_a_due_bonus(
    options: RuleOptions, yahtzee_faces: tuple[int, ...]
) -> None:
    state = started(["a"], options)
    state, _ = turn(state, "a", B.YAHTZEE, yahtzee_faces)
    state, _ = apply(state, Roll("a", (6, 6, 6, 6, 6)))
    assert not bonus_turn_available(state)
    with pytest.raises(GameError) as refused:
        apply(state, TakeBonus("a"))
    assert refused.value.code == "box_not_allowed"


def test_take_bonus_needs_a_roll_and_the_turn() -> None:
    state = started(["a", "b"], BONUS_TURN)
    for command, code in ((TakeBonus("a"), "must_roll_first"), (TakeBonus("b"), "not_your_turn")):
        with pytest.raises(GameError) as refused:
            apply(state, command)
        assert refused.value.code == code
