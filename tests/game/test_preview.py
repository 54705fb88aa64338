"""The per-box preview after a roll, the bonus flag and the turn timer's automatic choice."""

from __future__ import annotations

import pytest

from server.game import (
    Box,
    BoxPreview,
    GameError,
    JokerMode,
    Roll,
    RuleOptions,
    RuleSet,
    Score,
    Scored,
    Start,
    apply,
    best_auto_score,
    joker_active,
    preview,
    roll_view,
    yahtzee_bonus_pending,
)

from ._support import seated, started, turn

B = Box


def test_preview_lists_every_open_box_in_card_order() -> None:
    state = started(["a"])
    state, _ = turn(state, "a", B.CHANCE, (1, 2, 3, 4, 6))
    state, _ = apply(state, Roll("a", (3, 3, 3, 5, 5)))
    assert preview(state) == (
        BoxPreview(B.ACES, True, 0),
        BoxPreview(B.TWOS, True, 0),
        BoxPreview(B.THREES, True, 9),
        BoxPreview(B.FOURS, True, 0),
        BoxPreview(B.FIVES, True, 10),
        BoxPreview(B.SIXES, True, 0),
        BoxPreview(B.THREE_OF_A_KIND, True, 19),
        BoxPreview(B.FOUR_OF_A_KIND, True, 0),
        BoxPreview(B.FULL_HOUSE, True, 25),
        BoxPreview(B.SMALL_STRAIGHT, True, 0),
        BoxPreview(B.LARGE_STRAIGHT, True, 0),
        BoxPreview(B.YAHTZEE, True, 0),
    )
    assert best_auto_score(state) == B.FULL_HOUSE
    assert not yahtzee_bonus_pending(state)
    assert not joker_active(state)


def test_preview_distinguishes_not_allowed_from_zero() -> None:
    state = started(["a"])
    state, _ = turn(state, "a", B.YAHTZEE, (2, 2, 2, 2, 2))
    state, _ = apply(state, Roll("a", (6, 6, 6, 6, 6)))
    rows = {p.box: p for p in preview(state)}
    assert rows[B.SIXES] == BoxPreview(B.SIXES, True, 30)
    assert rows[B.ACES] == BoxPreview(B.ACES, False, 0)
    assert rows[B.CHANCE] == BoxPreview(B.CHANCE, False, 0)
    assert [p.box for p in rows.values() if p.allowed] == [B.SIXES]
    assert yahtzee_bonus_pending(state)
    assert joker_active(state)
    assert best_auto_score(state) == B.SIXES
    # the preview and the Score command agree
    _, events = apply(state, Score("a", best_auto_score(state), automatic=True))
    assert events[0] == Scored("a", B.SIXES, 30, 0, 100, True, True, 50 + 30 + 100)


def test_allowed_zero_box_when_joker_forces_upper_zero() -> None:
    # YAHTZEE 0, Twos and every lower box filled, then 2-2-2-2-2: a zero in any open upper box
    state = started(["a"])
    fills = [
        (B.YAHTZEE, (1, 2, 3, 4, 6)),
        (B.TWOS, (2, 2, 3, 4, 6)),
        (B.THREE_OF_A_KIND, (1, 2, 3, 4, 6)),
        (B.FOUR_OF_A_KIND, (1, 2, 3, 4, 6)),
        (B.FULL_HOUSE, (1, 2, 3, 4, 6)),
        (B.SMALL_STRAIGHT, (1, 2, 3, 4, 6)),
        (B.LARGE_STRAIGHT, (1, 2, 3, 4, 6)),
        (B.CHANCE, (1, 2, 3, 4, 6)),
    ]
    for box, dice in fills:
        state, _ = turn(state, "a", box, dice)
    state, _ = apply(state, Roll("a", (2, 2, 2, 2, 2)))
    assert preview(state) == tuple(
        BoxPreview(b, True, 0) for b in (B.ACES, B.THREES, B.FOURS, B.FIVES, B.SIXES)
    )
    assert joker_active(state)
    assert not yahtzee_bonus_pending(state)
    assert best_auto_score(state) == B.ACES  # ties: first in card order


def test_free_joker_preview() -> None:
    state = started(["a"], RuleOptions(joker=JokerMode.FREE))
    state, _ = turn(state, "a", B.YAHTZEE, (5, 5, 5, 5, 5))
    state, _ = apply(state, Roll("a", (5, 5, 5, 5, 5)))
    rows = {p.box: p for p in preview(state)}
    assert all(p.allowed for p in rows.values())
    assert rows[B.FULL_HOUSE].points == 0  # Fives still open: scores as usual
    assert best_auto_score(state) == B.FIVES  # 25, ties with 3K/4K/chance: first in order
    state, events = apply(state, Score("a", B.CHANCE))
    assert events[0] == Scored("a", B.CHANCE, 25, 0, 100, True, False, 50 + 25 + 100)


def test_yatzy_preview() -> None:
    state = started(["a"], RuleOptions(rules=RuleSet.YATZY))
    state, _ = apply(state, Roll("a", (6, 6, 5, 5, 5)))
    rows = {p.box: p.points for p in preview(state)}
    assert rows[B.ONE_PAIR] == 12
    assert rows[B.TWO_PAIRS] == 22
    assert rows[B.FULL_HOUSE] == 27
    assert len(rows) == 15
    assert best_auto_score(state) == B.FULL_HOUSE


@pytest.mark.parametrize(
    ("make", "code"),
    [
        (lambda: seated(["a"]), "game_not_started"),
        (lambda: started(["a"]), "must_roll_first"),
        (lambda: apply(seated(["a", "b"]), Start("a"))[0], "wrong_phase"),
    ],
)
def test_preview_needs_a_roll(make: object, code: str) -> None:
    state = make()  # type: ignore[operator]
    for query in (preview, best_auto_score, yahtzee_bonus_pending, joker_active, roll_view):
        with pytest.raises(GameError) as info:
            query(state)
        assert info.value.code == code


@pytest.mark.parametrize(
    "options",
    [RuleOptions(), RuleOptions(joker=JokerMode.FREE), RuleOptions(rules=RuleSet.YATZY)],
)
def test_the_roll_view_is_the_three_queries_in_one(options: RuleOptions) -> None:
    # a whole game of Yahtzees and near misses: the Joker, the bonus and plain rolls
    state = started(["a"], options)
    rolls = [(5, 5, 5, 5, 5), (2, 2, 2, 2, 2), (1, 2, 3, 4, 5), (6, 6, 6, 6, 6), (3, 3, 3, 4, 4)]
    for number in range(len(state.player("a").card.boxes)):
        state, _ = apply(state, Roll("a", rolls[number % len(rolls)]))
        shown = roll_view(state)
        assert shown.boxes == preview(state)
        assert shown.yahtzee_bonus_pending == yahtzee_bonus_pending(state)
        assert shown.joker == joker_active(state)
        state, _ = apply(state, Score("a", best_auto_score(state)))
