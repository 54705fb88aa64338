"""The rating arithmetic of server.domain.rating: skill and luck add up exactly, the decision
performance and its decaying average, the result ratings of a free-for-all."""

from __future__ import annotations

import pytest

from server.domain.rating import (
    DECAY,
    INITIAL_MU,
    DecisionRating,
    ResultRating,
    decision_performance,
    rate_results,
    skill_of,
)


def test_luck_closes_the_identity_final_equals_v0_minus_loss_plus_luck() -> None:
    skill = skill_of(decisions=41, total_loss=3.28, expected_start=254.59, final=231)
    assert skill.final == pytest.approx(skill.expected_start - skill.total_loss + skill.luck)
    assert skill.luck == pytest.approx(-20.31)
    assert skill.accuracy == pytest.approx(100 * (1 - 3.28 / 254.59))
    assert skill.mean_loss == pytest.approx(3.28 / 41)
    assert round(skill.performance) == 2661  # the worked example of SPEC.md 13.17


def test_accuracy_never_falls_below_zero() -> None:
    """Kind dice leave more to lose: one game's losses can exceed V0 (seen in a random game)."""
    skill = skill_of(decisions=39, total_loss=269.4, expected_start=254.59, final=40)
    assert skill.accuracy == 0.0
    assert skill_of(39, 254.59, 254.59, 40).accuracy == 0.0
    assert skill_of(39, 127.295, 254.59, 40).accuracy == pytest.approx(50.0)


def test_the_decision_performance_falls_with_the_mean_loss() -> None:
    assert decision_performance(0.0) == 3000
    assert decision_performance(0.1) == pytest.approx(2600)
    assert round(decision_performance(1.0)) == 1616
    assert decision_performance(-1.0) == 3000  # never above a flawless game
    assert decision_performance(0.5) > decision_performance(0.6)


def test_the_decision_rating_is_a_decaying_average() -> None:
    rating = DecisionRating()
    assert rating.value is None
    for performance in (2000.0, 2500.0, 3000.0):
        rating = rating.after(performance)
    weights = (DECAY**2, DECAY, 1.0)
    expected = (2000 * weights[0] + 2500 * weights[1] + 3000 * weights[2]) / sum(weights)
    assert rating.value == pytest.approx(expected)
    assert (rating.games, rating.provisional) == (3, True)
    for _ in range(2):
        rating = rating.after(3000.0)
    assert not rating.provisional


def test_a_free_for_all_moves_the_winner_up_and_the_loser_down() -> None:
    first, second, third = rate_results([ResultRating()] * 3, [1, 2, 3])
    assert first.mu > INITIAL_MU > third.mu
    assert first.mu > second.mu > third.mu
    assert all(r.games == 1 and r.provisional for r in (first, second, third))
    tied = rate_results([ResultRating()] * 2, [1, 1])
    assert tied[0].mu == pytest.approx(tied[1].mu)
    assert tied[0].sigma < ResultRating().sigma  # a game always teaches something
    assert rate_results([ResultRating()], [1]) == [ResultRating()]  # nobody to compare with
