"""The policy in hand-made positions, the computer levels, and the post-game analysis."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

from server.game import (
    Box,
    Event,
    Join,
    Roll,
    RuleOptions,
    Score,
    Scorecard,
    Start,
    apply,
    new_game,
)
from server.solver import (
    Level,
    Reroll,
    ScoreBox,
    SolverRules,
    Table,
    analyse_game,
    best_box,
    best_keep,
    build_table,
    computer_player,
    play_games,
    play_room,
    rank_options,
    summarise,
    turn_plan,
)

OFFICIAL = SolverRules()


def _only_open(*open_boxes: Box) -> Scorecard:
    """A card with every other box scratched (0), so nothing else can score."""
    card = Scorecard.empty("yahtzee")
    for box in card.boxes:
        if box not in open_boxes:
            card = card.with_score(box, 0)
    return card


@pytest.fixture(scope="module")
def yahtzee_only() -> tuple[Table, Scorecard]:
    card = _only_open(Box.YAHTZEE)
    return build_table(OFFICIAL, start=card), card


@pytest.fixture(scope="module")
def chance_only() -> tuple[Table, Scorecard]:
    card = _only_open(Box.CHANCE)
    return build_table(OFFICIAL, start=card), card


@pytest.mark.parametrize("rolls_left", [1, 2])
def test_four_of_a_kind_chases_the_yahtzee(
    yahtzee_only: tuple[Table, Scorecard], rolls_left: int
) -> None:
    table, card = yahtzee_only
    keep, expected = best_keep(table, card, (3, 1, 3, 3, 3), rolls_left)
    assert keep == (3, 3, 3, 3)
    # the last die matches with chance 1 - (5/6)^rolls
    assert expected == pytest.approx(50 * float(1 - Fraction(5, 6) ** rolls_left))


@pytest.mark.parametrize(("rolls_left", "die_worth"), [(1, 3.5), (2, 4.25)])
def test_chance_keeps_the_dice_above_a_rerolled_die(
    chance_only: tuple[Table, Scorecard], rolls_left: int, die_worth: float
) -> None:
    """One re-roll makes a die worth 3.5; two re-rolls 4.25 (keep 4+ then, else 3.5)."""
    table, card = chance_only
    keep, expected = best_keep(table, card, (6, 1, 5, 2, 6), rolls_left)
    assert keep == (5, 6, 6)
    assert expected == pytest.approx(17 + 2 * die_worth)


def test_obvious_scores(official: Table) -> None:
    card = Scorecard.empty("yahtzee")
    keep, _ = best_keep(official, card, (6, 6, 6, 6, 6), 2)
    assert keep == (6, 6, 6, 6, 6)  # keeping all five: score now
    assert best_box(official, card, (6, 6, 6, 6, 6)).action == ScoreBox(Box.YAHTZEE)
    assert best_box(official, card, (2, 3, 1, 5, 4)).action == ScoreBox(Box.LARGE_STRAIGHT)
    top = rank_options(official, card, (6, 6, 6, 6, 6), 2)
    assert len(top) == 3
    assert top[0].action == ScoreBox(Box.YAHTZEE)
    assert [o.expected for o in top] == sorted((o.expected for o in top), reverse=True)


def test_rank_options_lists_rerolls_and_boxes_consistently(official: Table) -> None:
    card = Scorecard.empty("yahtzee")
    dice = (1, 3, 3, 4, 6)
    every = rank_options(official, card, dice, 1, top=None)
    rerolls = [o for o in every if isinstance(o.action, Reroll)]
    boxes = [o for o in every if isinstance(o.action, ScoreBox)]
    assert len(boxes) == 13
    assert len(rerolls) == 2 * 3 * 2 * 2 - 1  # sub-multisets of 1,3,3,4,6 but the whole
    keep, expected = best_keep(official, card, dice, 1)
    assert every[0].expected == pytest.approx(expected)
    best = every[0].action
    if isinstance(best, Reroll):
        assert best.keep == keep
        assert sorted(dice[i] for i in best.hold) == list(keep)


# -- computer levels ---------------------------------------------------------------------------


def test_levels_are_ordered_by_mean_score(official: Table) -> None:
    means = {}
    for level in (Level.EASY, Level.MEDIUM, Level.OPTIMAL):
        scores = play_games(computer_player(level, official), 400, random.Random(3))
        means[level] = summarise(scores)
    print(
        "\n"
        + "\n".join(f"{lv.value}: {s.mean:.1f} +/- {s.half_width:.1f}" for lv, s in means.items())
    )
    assert means[Level.EASY].mean + means[Level.EASY].half_width < (
        means[Level.MEDIUM].mean - means[Level.MEDIUM].half_width
    )
    assert means[Level.MEDIUM].mean < means[Level.OPTIMAL].mean


def test_levels_are_ordered_by_expected_loss(official: Table) -> None:
    """Four levels in one room, several games: the analysis ranks them by points lost."""
    levels = list(Level)
    players = [computer_player(level, official) for level in levels]
    losses = dict.fromkeys(levels, 0.0)
    rng = random.Random(5)
    for game in range(6):
        events = play_room(players, rng, start_random=game)
        for level, review in zip(levels, analyse_game(official, events).players, strict=True):
            losses[level] += review.total_loss
    print("\n" + ", ".join(f"{lv.value} lost {loss:.1f}" for lv, loss in losses.items()))
    assert losses[Level.OPTIMAL] == pytest.approx(0.0, abs=1e-9)
    assert 0 < losses[Level.HARD] < losses[Level.MEDIUM] < losses[Level.EASY]


def test_computer_players_play_whole_rooms_under_every_variant() -> None:
    """Every level's commands are legal under the variants (bonus take included)."""
    rules = SolverRules.of(RuleOptions(upper_first="on", bonus_turn="on", joker="free"))
    card = _only_open(Box.ACES, Box.SIXES, Box.FULL_HOUSE, Box.CHANCE)
    card = Scorecard(card.rules, (*card.scores[:11], 50, card.scores[12]))
    table = build_table(rules, start=card)
    scores = play_games(computer_player(Level.HARD, table), 50, random.Random(9), start=card)
    assert len(scores) == 50
    assert all(s >= 50 for s in scores)


# -- analysis ----------------------------------------------------------------------------------


def test_optimal_players_lose_nothing(official: Table) -> None:
    players = [computer_player(Level.OPTIMAL, official)] * 4
    events = play_room(players, random.Random(12))
    analysis = analyse_game(official, events)
    assert [r.player for r in analysis.players] == ["cpu0", "cpu1", "cpu2", "cpu3"]
    for review in analysis.players:
        assert review.total_loss == pytest.approx(0.0, abs=1e-9)
        assert sum(d.kind == "box" for d in review.decisions) == 13
        assert review.mean_loss == pytest.approx(0.0, abs=1e-9)
        for decision in review.decisions:
            assert decision.chosen_expected == pytest.approx(decision.best_expected, abs=1e-9)


def _bad_game() -> list[Event]:
    state = new_game(RuleOptions(first_player="seat_order"), 1)
    events: list[Event] = []
    for command in (
        Join("p", "Pat"),
        Start("p"),
        Roll("p", (6, 6, 6, 6, 1)),
        Roll("p", (2, 3, 4, 5, 5), keep=frozenset()),  # re-rolls four sixes: a bad keep
        Roll("p", (6, 6, 6, 6, 6), keep=frozenset()),
        Score("p", Box.CHANCE),  # five sixes in Chance, YAHTZEE open: a bad box
    ):
        state, new = apply(state, command)
        events.extend(new)
    return events


def test_bad_moves_show_a_loss(official: Table) -> None:
    (review,) = analyse_game(official, _bad_game()).players
    keep_1, keep_2, box = review.decisions
    assert (keep_1.kind, keep_1.chosen, keep_1.roll) == ("keep", (), 1)
    assert keep_1.best == (6, 6, 6, 6)
    assert keep_1.loss > 10
    assert (keep_2.kind, keep_2.chosen) == ("keep", ())
    assert keep_2.loss > 0
    assert (box.kind, box.chosen, box.best) == ("box", Box.CHANCE, Box.YAHTZEE)
    assert box.loss > 20
    assert review.total_loss == pytest.approx(keep_1.loss + keep_2.loss + box.loss)
    assert review.mean_loss == pytest.approx(review.total_loss / 3)


def test_the_turn_plan_memo_keeps_the_most_recently_used_plans(
    official: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    from server.solver import policy

    monkeypatch.setattr(policy, "MEMO_PLANS", 2)
    official.memo.clear()
    aces, twos, threes = (Scorecard.empty("yahtzee").with_score(b, 1) for b in
                          (Box.ACES, Box.TWOS, Box.THREES))  # fmt: skip
    first = turn_plan(official, aces)
    turn_plan(official, twos)
    assert turn_plan(official, aces).keep_1 is first.keep_1  # remembered, and now the newest
    turn_plan(official, threes)  # one too many: the least recently used (twos) goes
    assert len(official.memo) == 2
    kept = {policy.position_of(official.rules, c) for c in (aces, threes)}
    assert {(p.group, p.upper) for p in kept} == set(official.memo)
    assert turn_plan(official, aces).keep_1 is first.keep_1


def test_plans_computed_ahead_in_one_batch_are_the_plans_a_turn_finds(official: Table) -> None:
    from server.solver import plan_ahead, plan_turns

    official.memo.clear()
    aces, twos = (Scorecard.empty("yahtzee").with_score(b, 1) for b in (Box.ACES, Box.TWOS))
    aces = aces.with_score(Box.CHANCE, 12)
    same_as_aces = Scorecard.empty("yahtzee").with_score(Box.ACES, 1).with_score(Box.CHANCE, 25)
    assert plan_ahead(official, [aces, twos, same_as_aces]) == 2
    assert plan_ahead(official, [aces, twos]) == 0  # remembered: nothing computed again
    planned = turn_plan(official, twos)
    alone = plan_turns(official, [twos])[0]
    assert planned.keep_1 is official.memo[(planned.position.group, planned.position.upper)].keep_1
    for field in ("score_now", "keep_1", "keep_2"):
        assert np.allclose(getattr(planned, field), getattr(alone, field), equal_nan=True)


def test_a_plan_of_a_batch_holds_its_own_columns_not_the_batch(official: Table) -> None:
    from server.solver import plan_turns

    boxes = (Box.ACES, Box.TWOS, Box.THREES, Box.FOURS, Box.FIVES, Box.SIXES, Box.CHANCE)
    cards = [Scorecard.empty("yahtzee").with_score(box, 0) for box in boxes]
    plans = plan_turns(official, cards)
    for plan in plans:
        for field in ("score_now", "keep_1", "keep_2"):
            values = getattr(plan, field)
            # its own memory: a view would keep the batch's eight columns alive in the memo
            assert values.base is None
            assert values.flags.owndata
            assert values.nbytes == values.size * values.itemsize
    one = plan_turns(official, [cards[3]])[0]
    assert np.allclose(plans[3].keep_2, one.keep_2, equal_nan=True)


def test_every_table_of_a_process_shares_one_budget_of_plans(
    official: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The medium and easy computers play from tables of their own: their plans count against
    the same budget as the optimal table's, so a process holds MEMO_PLANS plans in all."""
    import gc
    import weakref

    from server.solver import Level, computer_player, policy

    monkeypatch.setattr(policy, "MEMO_PLANS", 3)
    tables = [official] + [computer_player(level, official).table
                           for level in (Level.MEDIUM, Level.EASY)]  # fmt: skip
    assert len({id(t) for t in tables}) == 3
    cards = [Scorecard.empty("yahtzee").with_score(b, 1) for b in (Box.ACES, Box.TWOS)]
    first = turn_plan(tables[0], cards[0])
    gone = weakref.ref(first.keep_1)
    del first
    for table in tables:
        for card in cards:
            turn_plan(table, card)
    assert sum(len(t.memo) for t in tables) == 3 == policy.remembered_plans()
    assert len(tables[2].memo) == 2  # the newest three
    assert len(tables[1].memo) == 1
    assert len(tables[0].memo) == 0
    gc.collect()
    assert gone() is None  # an evicted plan's arrays are freed


def test_a_table_dropped_is_freed_with_its_plans(official: Table) -> None:
    """The budget refers to the tables' memos weakly: the plans of a table nobody uses any
    more neither keep it alive nor count."""
    import gc
    import weakref

    from server.solver import Level, computer_player, policy

    gc.collect()  # the tables earlier tests dropped
    easy = computer_player(Level.EASY, official).table
    turn_plan(easy, Scorecard.empty("yahtzee").with_score(Box.SIXES, 18))
    before = policy.remembered_plans()
    gone = weakref.ref(easy)
    del easy
    gc.collect()
    assert gone() is None
    assert policy.remembered_plans() == before - 1
