"""Ratings that separate skill from luck: pure arithmetic, no I/O (see README "Ratings").

Three numbers per player and rule family (``yahtzee`` or ``yatzy``):

- the **result rating**: who beat whom in rated rooms, a Weng-Lin (OpenSkill, Plackett-Luce)
  free-for-all rating with an uncertainty ``sigma``; shown as ``round(mu)``, provisional
  (with a "?") while ``sigma > PROVISIONAL_SIGMA``;
- the **skill** of one game: from the solver's analysis, ``V0`` the optimal expected final
  score of a new card, ``loss`` the expected points the player's decisions lost (the sum of
  :attr:`server.solver.PlayerReview.total_loss`), ``final`` the player's score. Then exactly
  ``final = V0 - loss + luck``, so ``luck = final - V0 + loss``; ``accuracy = 100 * (1 -
  loss / V0)`` (percent, at least 0: a game can lose more than ``V0`` when the dice were kind);
- the **decision rating**: each analysed game gives a performance from its mean loss per
  decision alone (:func:`decision_performance`), and the rating is their average weighted by
  ``DECAY ** age`` (the newest game weighs 1, the one before ``DECAY``, ...).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

__all__ = [
    "DECAY",
    "DECISION_PROVISIONAL_GAMES",
    "INITIAL_MU",
    "INITIAL_SIGMA",
    "PROVISIONAL_SIGMA",
    "DecisionRating",
    "ResultRating",
    "Skill",
    "decision_performance",
    "display",
    "rate_results",
    "skill_of",
]

INITIAL_MU = 1500.0
"""A new player's result rating (OpenSkill's defaults 25 and 25/3, scaled by 60)."""
INITIAL_SIGMA = 500.0
"""A new player's uncertainty."""
PROVISIONAL_SIGMA = 400.0
"""A result rating is provisional (shown with "?") while its sigma is above this: eight
two-player games (OpenSkill's sigma shrinks slowly: 500, 484, 469, 455, ...)."""

DECAY = 0.9
"""Weight of a game one game older in the decision rating (a half-life of about 6.6 games)."""
DECISION_PROVISIONAL_GAMES = 5
"""A decision rating is provisional over fewer analysed games than this."""

PERFECT = 3000.0
"""The decision performance of a game without a single expected point lost."""
SCALE = 400.0
"""Performance points per doubling of ``1 + mean_loss / LOSS_UNIT``."""
LOSS_UNIT = 0.1
"""Mean loss per decision (expected points) that costs the first ``SCALE`` points."""

_MODEL = PlackettLuce(
    mu=INITIAL_MU, sigma=INITIAL_SIGMA, beta=INITIAL_SIGMA / 2, tau=INITIAL_SIGMA / 100
)


@dataclass(frozen=True, slots=True)
class ResultRating:
    """A player's result rating in one family."""

    mu: float = INITIAL_MU
    sigma: float = INITIAL_SIGMA
    games: int = 0

    @property
    def shown(self) -> int:
        return display(self.mu)

    @property
    def provisional(self) -> bool:
        return self.sigma > PROVISIONAL_SIGMA


def display(mu: float) -> int:
    """The rating as shown (an integer)."""
    return round(mu)


def rate_results(ratings: Sequence[ResultRating], places: Sequence[int]) -> list[ResultRating]:
    """The ratings after one free-for-all game (``places``: 1 = first, equal places = a tie),
    in the same order. Each player is a team of one."""
    if len(ratings) < 2:
        return list(ratings)
    teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]
    rated = _MODEL.rate(teams, ranks=[float(p) for p in places])
    return [
        ResultRating(float(team[0].mu), float(team[0].sigma), r.games + 1)
        for team, r in zip(rated, ratings, strict=True)
    ]


@dataclass(frozen=True, slots=True)
class Skill:
    """One player's skill and luck in one game (see the module docstring)."""

    decisions: int
    total_loss: float
    expected_start: float
    final: int

    @property
    def mean_loss(self) -> float:
        """Expected points lost per decision."""
        return self.total_loss / self.decisions if self.decisions else 0.0

    @property
    def luck(self) -> float:
        """Points the dice gave above an average game played the same way (negative: fewer)."""
        return self.final - self.expected_start + self.total_loss

    @property
    def accuracy(self) -> float:
        """Percent of the optimal expectation kept: ``100 * (1 - loss / V0)``, at least 0.

        The losses of one game can add up to more than ``V0`` (every decision is measured
        against the dice actually rolled, and kind dice leave more to lose), and a
        percentage below zero means nothing to a player: such a game shows 0 %."""
        if self.expected_start <= 0:
            return 100.0
        return max(0.0, 100.0 * (1.0 - self.total_loss / self.expected_start))

    @property
    def performance(self) -> float:
        """This game's decision performance (:func:`decision_performance`)."""
        return decision_performance(self.mean_loss)


def skill_of(decisions: int, total_loss: float, expected_start: float, final: int) -> Skill:
    """A :class:`Skill` (a named constructor for callers outside this module)."""
    return Skill(decisions, total_loss, expected_start, final)


def decision_performance(mean_loss: float) -> float:
    """``PERFECT - SCALE * log2(1 + mean_loss / LOSS_UNIT)``: 3000 for a flawless game, 2600
    at 0.1 expected points lost per decision, 1616 at 1.0, 1016 at 3.0."""
    return PERFECT - SCALE * math.log2(1.0 + max(0.0, mean_loss) / LOSS_UNIT)


@dataclass(frozen=True, slots=True)
class DecisionRating:
    """The decaying weighted average of a player's game performances in one family, kept as
    its weighted sum and total weight so that one more game is one step."""

    weighted_sum: float = 0.0
    weight: float = 0.0
    games: int = 0

    @property
    def value(self) -> float | None:
        return self.weighted_sum / self.weight if self.weight > 0 else None

    @property
    def shown(self) -> int | None:
        value = self.value
        return None if value is None else round(value)

    @property
    def provisional(self) -> bool:
        return self.games < DECISION_PROVISIONAL_GAMES

    def after(self, performance: float) -> DecisionRating:
        """The rating with one more (the newest) game."""
        return DecisionRating(
            DECAY * self.weighted_sum + performance, DECAY * self.weight + 1.0, self.games + 1
        )
