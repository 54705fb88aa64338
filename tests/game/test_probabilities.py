"""The probability table: counts checked by an independent enumeration, and the file is fresh."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction
from pathlib import Path

from server.game import RuleSet
from server.game.probabilities import OUTCOMES, chances, main, render_markdown

Y, S = RuleSet.YAHTZEE, RuleSet.YATZY

GENERATED = Path(__file__).parents[2] / "server" / "game" / "PROBABILITIES.md"


def _independent_counts() -> dict[tuple[RuleSet, str], int]:
    """Count by the 252 multisets of five dice, each weighted by its number of orderings."""
    counts: Counter[tuple[RuleSet, str]] = Counter()
    total = 0
    for hand in itertools.combinations_with_replacement(range(1, 7), 5):
        multiplicity = Counter(hand)
        weight = math.factorial(5)
        for c in multiplicity.values():
            weight //= math.factorial(c)
        total += weight
        shape = sorted(multiplicity.values(), reverse=True)
        faces = set(hand)
        runs4 = any({s, s + 1, s + 2, s + 3} <= faces for s in (1, 2, 3))
        facts = {
            (Y, "Yahtzee"): shape == [5],
            (Y, "Large"): faces in ({1, 2, 3, 4, 5}, {2, 3, 4, 5, 6}),
            (Y, "Small"): runs4,
            (Y, "Full"): shape == [3, 2],
            (Y, "Four"): shape[0] >= 4,
            (Y, "Three"): shape[0] >= 3,
            (S, "Yatzy"): shape == [5],
            (S, "Large"): faces == {2, 3, 4, 5, 6},
            (S, "Small"): faces == {1, 2, 3, 4, 5},
            (S, "Full"): shape == [3, 2],
            (S, "Four"): shape[0] >= 4,
            (S, "Three"): shape[0] >= 3,
            (S, "Two"): len([c for c in shape if c >= 2]) >= 2,
            (S, "One"): shape[0] >= 2,
        }
        for key, met in facts.items():
            counts[key] += weight * met
    assert total == 6**5 == OUTCOMES == 7776
    return dict(counts)


def test_counts_match_an_independent_enumeration() -> None:
    expected = _independent_counts()
    table = chances()
    assert len(table) == len(expected)
    for row in table:
        key = (row.rules, row.label.split()[0])
        assert row.count == expected[key], row
        assert row.probability == Fraction(row.count, 7776)


def test_headline_figures() -> None:
    by_label = {(row.rules, row.label.split()[0]): row for row in chances()}
    assert by_label[(RuleSet.YAHTZEE, "Yahtzee")].count == 6
    assert by_label[(RuleSet.YAHTZEE, "Large")].count == 240
    assert by_label[(RuleSet.YAHTZEE, "Large")].probability == Fraction(240, 7776)
    # small straights include large ones; three of a kind includes four and five
    assert by_label[(RuleSet.YAHTZEE, "Small")].count > 240
    assert (
        by_label[(RuleSet.YAHTZEE, "Three")].count
        > by_label[(RuleSet.YAHTZEE, "Four")].count
        > by_label[(RuleSet.YAHTZEE, "Yahtzee")].count
    )


def test_generated_file_is_up_to_date() -> None:
    assert GENERATED.read_text(encoding="utf-8") == render_markdown(), (
        "run: python -m server.game.probabilities"
    )
    assert main(["--check"]) == 0
