"""Tables shared by the solver tests: each built once per test session.

The full official table (the only full build, about 10-30 s) and small tables of every rule
set that start from a game already under way (a few open boxes: built in well under a second,
and still the same code path as a full build).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from server.game import Box, Scorecard
from server.solver import ALL_RULES, SolverRules, Table, build_table

OFFICIAL = SolverRules()


def late_card(rules: SolverRules) -> Scorecard:
    """A card with five or six boxes open that exercises the rule set's special cases.

    Yahtzee: YAHTZEE holds 50 (extra Yahtzees, Joker and bonus take all matter), upper boxes
    and lower boxes open (upper_first matters), Fours open (the forced Joker's matching box).
    Yatzy: the five-of-a-kind box open, a pair, full house and two upper boxes open.
    """
    card = Scorecard.empty(rules.rules)
    if rules.rules.value == "yatzy":
        open_boxes = {Box.FOURS, Box.SIXES, Box.ONE_PAIR, Box.FULL_HOUSE, Box.CHANCE, Box.YATZY}
    else:
        open_boxes = {Box.FOURS, Box.SIXES, Box.FULL_HOUSE, Box.LARGE_STRAIGHT, Box.CHANCE}
    fills = {Box.ACES: 3, Box.TWOS: 6, Box.THREES: 9, Box.FIVES: 15, Box.YAHTZEE: 50}
    for box in card.boxes:
        if box not in open_boxes:
            card = card.with_score(box, fills.get(box, 0))
    return card


@pytest.fixture(scope="session")
def cache_dir(solver_cache: Path) -> Path:
    return solver_cache


@pytest.fixture(scope="session")
def official(official_table: Table) -> Table:
    """The full table of the official rules (built once, through the disk cache)."""
    return official_table


@pytest.fixture(scope="session")
def late_tables() -> dict[str, Table]:
    """Per rule set, the table of everything reachable from :func:`late_card`."""
    return {r.name: build_table(r, start=late_card(r), with_moments=True) for r in ALL_RULES}
