"""A built strategy table and the position of a score card in it."""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from server.game import Scorecard
from server.game.boxes import UPPER_BOX_COUNT
from server.game.scoring import YAHTZEE_BONUS, YAHTZEE_POINTS

from .build import Progress, Start, build_values
from .rules import SolverRules
from .turn import UPPER_CAP

__all__ = ["TABLE_VERSION", "Position", "Table", "build_table", "position_of"]

FloatArray = npt.NDArray[np.float64]

TABLE_VERSION = 1
"""Bumped whenever a change to the solver changes a table's numbers (part of the cache key)."""


class Position(NamedTuple):
    """Where a card is at the start of a turn: table row ``group`` and ``upper`` total (capped
    at 63), plus the points already on the card that the table does not count (everything but
    the upper bonus, which the table counts at the end). A named tuple: a computer's every
    decision makes one."""

    group: int
    upper: int
    banked: int


def position_of(rules: SolverRules, card: Scorecard) -> Position:
    """The table position of ``card`` under ``rules``."""
    # Asked at every decision of a computer and every hint: sums in C, not through the card's
    # totals (the upper boxes are the first six of every card, UPPER_BOX_COUNT).
    scores = card.scores
    mask = 0
    for index, points in enumerate(scores):
        if points is not None:
            mask |= 1 << index
    if rules.tracks_yahtzee_50 and scores[rules.yahtzee_box] == YAHTZEE_POINTS:
        mask |= 1 << rules.box_count
    upper = sum(filter(None, scores[:UPPER_BOX_COUNT]))
    banked = sum(filter(None, scores)) + YAHTZEE_BONUS * card.yahtzee_bonuses
    return Position(group=mask, upper=min(upper, UPPER_CAP), banked=banked)


class PlanMemo(OrderedDict[tuple[int, int], object]):
    """A table's remembered turn plans by position, least recently used first; the process's
    one budget of plans (:data:`server.solver.policy.MEMO_PLANS`) refers to it weakly, so a
    table nobody uses any more is freed with its plans."""


@dataclass(frozen=True)
class Table:
    """Expected points still to come under optimal play, ``values[group, upper]``.

    ``moments`` (optional) holds the second moments, for the standard deviation.
    ``build_seconds`` is how long the build took (0 when loaded from disk without that record).
    """

    rules: SolverRules
    values: FloatArray
    moments: FloatArray | None = None
    build_seconds: float = 0.0
    memo: PlanMemo = field(default_factory=lambda: PlanMemo(), compare=False, repr=False)

    def future(self, card: Scorecard) -> float:
        """Expected points still to come for ``card`` (at the start of a turn)."""
        at = position_of(self.rules, card)
        return float(self.values[at.group, at.upper])

    def expected_final(self, card: Scorecard) -> float:
        """Expected final grand total of ``card`` under optimal play from here."""
        at = position_of(self.rules, card)
        return at.banked + float(self.values[at.group, at.upper])

    @property
    def expected(self) -> float:
        """Expected final score of a new game."""
        return float(self.values[0, 0])

    @property
    def standard_deviation(self) -> float | None:
        """Standard deviation of a new game's final score (``None`` without moments)."""
        if self.moments is None:
            return None
        return math.sqrt(max(0.0, float(self.moments[0, 0]) - self.expected**2))


def build_table(
    rules: SolverRules,
    *,
    start: Scorecard | None = None,
    with_moments: bool = False,
    workers: int = 1,
    progress: Progress | None = None,
) -> Table:
    """Build the table of ``rules`` (from an empty card, or only what ``start`` can reach:
    a small table for tests and for games already under way). ``workers``: see
    :func:`server.solver.build.build_values`."""
    origin = Start()
    if start is not None:
        at = position_of(rules, start)
        mask = at.group & ((1 << rules.box_count) - 1)
        origin = Start(mask, at.upper, at.group >> rules.box_count)
    values, moments = build_values(
        rules, start=origin, with_moments=with_moments, workers=workers, progress=progress
    )
    return Table(rules, values, moments)
