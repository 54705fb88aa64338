"""The tables: dice combinatorics, agreement with the engine, simulation, the disk cache."""

from __future__ import annotations

import itertools
import random
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from server.game import RuleSet, Scorecard, boxes_for
from server.game.boxes import UPPER_BOX_COUNT, is_upper
from server.solver import (
    ALL_RULES,
    Level,
    Position,
    SolverRules,
    Table,
    box_options,
    computer_player,
    load_table,
    plan_turns,
    play_games,
    position_of,
    summarise,
)
from server.solver.build import build_values
from server.solver.dice import INDEX, KEEP_TO_ROLL, MULTISETS, ROLL_PROBABILITY, ROLLS
from server.solver.rules import SolverRules as Rules

from .conftest import late_card

FAMILY_Z = 2.87
"""Normal quantile of a 1 - 0.05 / 12 two-sided interval."""


def _enumerated(keep: tuple[int, ...]) -> dict[tuple[int, ...], Fraction]:
    """Chance of each roll after re-rolling the dice not in ``keep``, by enumeration."""
    free = 5 - len(keep)
    found: dict[tuple[int, ...], Fraction] = {}
    for faces in itertools.product(range(1, 7), repeat=free):
        roll = tuple(sorted((*keep, *faces)))
        found[roll] = found.get(roll, Fraction(0)) + Fraction(1, 6**free)
    return found


@pytest.mark.parametrize("keep", [(), (6,), (2, 5), (1, 1, 4), (3, 3, 3, 6)])
def test_keep_to_roll_matrix_matches_enumeration(keep: tuple[int, ...]) -> None:
    row = KEEP_TO_ROLL[INDEX[keep]]
    expected = _enumerated(keep)
    for r, roll in enumerate(ROLLS):
        assert row[r] == pytest.approx(float(expected.get(roll, 0)), abs=1e-15)


def test_dice_tables_are_complete() -> None:
    assert len(MULTISETS) == 462
    assert len(ROLLS) == 252
    assert ROLL_PROBABILITY.sum() == pytest.approx(1.0)
    assert np.allclose(KEEP_TO_ROLL.sum(axis=1), 1.0)
    assert np.count_nonzero(KEEP_TO_ROLL) == 4368 - 252


def test_every_room_rule_set_has_a_distinct_name() -> None:
    names = [r.name for r in ALL_RULES]
    assert len(set(names)) == len(names) == 12
    assert ALL_RULES[0] == SolverRules()
    assert names[0] == "yahtzee"
    for rules in ALL_RULES:
        assert Rules.from_name(rules.name) == rules
        assert Rules.of(rules.options()) == rules


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: r.name)
def test_scoring_now_agrees_with_the_engine_for_every_roll(
    rules: SolverRules, late_tables: dict[str, Table]
) -> None:
    """The turn evaluation's "score now" value of each of the 252 rolls equals the best box the
    engine's own ruling allows (Joker, bonus, variants), valued through the same table."""
    table = late_tables[rules.name]
    card = late_card(rules)
    plan = plan_turns(table, [card])[0]
    for r, roll in enumerate(ROLLS):
        engine_best = max(o.expected for o in box_options(table, card, roll))
        assert plan.position.banked + plan.score_now[r] == pytest.approx(engine_best, abs=1e-9)


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: r.name)
def test_simulation_agrees_with_the_expectation_and_deviation(
    rules: SolverRules, late_tables: dict[str, Table]
) -> None:
    """Games from the late card, played by the optimal policy through the engine: the
    confidence interval of the mean contains the table's expectation, and the sample standard
    deviation is within 10 % of the second-moment DP's (the sampling error of a standard
    deviation over 1,000 games is about 2-4 %).

    Twelve rule sets are twelve trials: each uses a 99.6 % interval (z = 2.87, Bonferroni for
    a 95 % family), so a correct solver fails this test one run in twenty at most, not one in
    two."""
    table = late_tables[rules.name]
    card = late_card(rules)
    at = position_of(rules, card)
    assert table.moments is not None
    future = float(table.values[at.group, at.upper])
    deviation = float(np.sqrt(table.moments[at.group, at.upper] - future**2))
    scores = play_games(computer_player(Level.OPTIMAL, table), 1000, random.Random(7), start=card)
    summary = summarise(scores)
    assert summary.contains(table.expected_final(card), z=FAMILY_Z), (
        summary,
        table.expected_final(card),
    )
    assert summary.standard_deviation == pytest.approx(deviation, rel=0.1)


def test_official_full_game_simulation_contains_the_expectation(official: Table) -> None:
    scores = play_games(computer_player(Level.OPTIMAL, official), 600, random.Random(11))
    summary = summarise(scores)
    print(
        f"\nofficial rules: expected {official.expected:.3f}; "
        f"simulated {summary.mean:.2f} +/- {summary.half_width:.2f}"
    )
    assert summary.contains(official.expected), (summary, official.expected)


def test_cache_round_trips(official: Table, cache_dir: Path) -> None:
    began = time.perf_counter()
    loaded = load_table(official.rules, cache_dir)
    print(f"\nloaded the official table in {1000 * (time.perf_counter() - began):.1f} ms")
    assert loaded is not None
    assert np.array_equal(np.asarray(loaded.values), np.asarray(official.values), equal_nan=True)
    assert loaded.expected == official.expected
    assert load_table(Rules.from_name("yatzy"), cache_dir) is None
    assert load_table(official.rules, cache_dir, with_moments=True) is None  # built without


def test_unreachable_positions_stay_unset(late_tables: dict[str, Table]) -> None:
    table = late_tables["yahtzee"]
    assert np.isnan(table.values[0, 0])  # an empty card is not reachable from a late one
    assert not np.isnan(table.future(late_card(table.rules)))


def test_parallel_build_equals_the_serial_one() -> None:
    rules = Rules.from_name("yatzy+upper-first")
    serial = build_values(rules, with_moments=True, workers=1)
    forked = build_values(rules, with_moments=True, workers=2)
    for one, other in zip(serial, forked, strict=True):
        assert one is not None
        assert other is not None
        assert np.array_equal(one, other, equal_nan=True)


def _position_by_totals(rules: Rules, card: Scorecard) -> tuple[int, int, int]:
    """position_of as first written: the card's own totals and filled boxes."""
    mask = sum(1 << i for i, points in enumerate(card.scores) if points is not None)
    if rules.tracks_yahtzee_50 and card.scores[rules.yahtzee_box] == 50:
        mask |= 1 << rules.box_count
    totals = card.totals()
    upper = sum(p for b, p in card.filled().items() if is_upper(b))
    return mask, min(upper, 63), totals.grand - totals.upper_bonus


def test_the_upper_boxes_are_the_first_of_every_card() -> None:
    for rule_set in RuleSet:
        uppers = [is_upper(b) for b in boxes_for(rule_set)]
        assert uppers == [True] * UPPER_BOX_COUNT + [False] * (len(uppers) - UPPER_BOX_COUNT)


@pytest.mark.parametrize("rules", ALL_RULES, ids=lambda r: r.name)
def test_the_position_of_a_card_is_its_mask_upper_total_and_banked_points(rules: Rules) -> None:
    rng = random.Random(rules.name)
    boxes = boxes_for(rules.rules)
    for _ in range(400):
        scores = [
            None if rng.random() < 0.4 else rng.choice((0, 1, 3, 12, 25, 30, 50)) for _ in boxes
        ]
        bonuses = rng.choice((0, 0, 1, 3)) if rules.rules is RuleSet.YAHTZEE else 0
        card = Scorecard(rules.rules, tuple(scores), bonuses)
        at = position_of(rules, card)
        assert (at.group, at.upper, at.banked) == _position_by_totals(rules, card)
        assert at == Position(*_position_by_totals(rules, card))
