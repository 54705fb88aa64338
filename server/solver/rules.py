"""Which rule set a table is for, and its scoring tables over the 252 rolls.

Only the options that change the best play are part of a :class:`SolverRules`: the first-player
option does not, and options without effect are normalised away (in Yatzy, or with extra
Yahtzees off, the Joker mode and ``bonus_turn`` do nothing), so equal games share one table.
Every score comes from :mod:`server.game.scoring`, the engine's own functions.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from server.game import Box, FirstPlayer, JokerMode, RuleOptions, RuleSet, Toggle, boxes_for
from server.game.boxes import five_of_a_kind_box, is_upper
from server.game.scoring import joker_points, score_box, upper_bonus_value

from .dice import ROLLS

__all__ = ["ALL_RULES", "SolverRules"]

FloatArray = npt.NDArray[np.float64]

_JOKER_FIXED = (Box.FULL_HOUSE, Box.SMALL_STRAIGHT, Box.LARGE_STRAIGHT)


@dataclass(frozen=True)
class SolverRules:
    """The strategy-relevant part of :class:`~server.game.RuleOptions`, normalised.

    Build one with :meth:`of`; ``name`` is a stable key (for the cache and the command line).
    """

    rules: RuleSet = RuleSet.YAHTZEE
    extra_yahtzees: bool = True
    joker: JokerMode = JokerMode.FORCED
    upper_first: bool = False
    bonus_turn: bool = False

    @classmethod
    def of(cls, options: RuleOptions) -> SolverRules:
        """The rule set of a room's options."""
        extra = options.extra_yahtzee_rules
        return cls(
            rules=options.rules,
            extra_yahtzees=extra,
            joker=options.joker if extra else JokerMode.FORCED,
            upper_first=options.upper_first_rule,
            bonus_turn=options.bonus_turn_rule,
        )

    @classmethod
    def from_name(cls, name: str) -> SolverRules:
        """Parse :attr:`name` (``ValueError`` for an unknown one)."""
        for rules in ALL_RULES:
            if rules.name == name:
                return rules
        known = ", ".join(r.name for r in ALL_RULES)
        raise ValueError(f"unknown rule set {name!r}; known: {known}")

    def options(self) -> RuleOptions:
        """Room options that play this rule set (first player by seat order)."""
        return self._options

    @cached_property
    def _options(self) -> RuleOptions:
        return RuleOptions(
            rules=self.rules,
            extra_yahtzees=Toggle.ON if self.extra_yahtzees else Toggle.OFF,
            joker=self.joker,
            first_player=FirstPlayer.SEAT_ORDER,
            upper_first=Toggle.ON if self.upper_first else Toggle.OFF,
            bonus_turn=Toggle.ON if self.bonus_turn else Toggle.OFF,
        )

    @cached_property
    def name(self) -> str:
        """``yahtzee`` (official, forced Joker), ``yahtzee-free-joker``, ``yahtzee-no-extra``,
        ``yatzy``, each with ``+upper-first`` / ``+bonus-turn`` appended when on."""
        if self.rules is RuleSet.YATZY:
            base = "yatzy"
        elif not self.extra_yahtzees:
            base = "yahtzee-no-extra"
        elif self.joker is JokerMode.FREE:
            base = "yahtzee-free-joker"
        else:
            base = "yahtzee"
        return (
            base
            + ("+upper-first" if self.upper_first else "")
            + ("+bonus-turn" if self.bonus_turn else "")
        )

    # -- the tables the dynamic programme reads ----------------------------------------------

    @cached_property
    def boxes(self) -> tuple[Box, ...]:
        """The boxes of the card, in card order (bit ``i`` of a mask is ``boxes[i]``)."""
        return boxes_for(self.rules)

    @property
    def box_count(self) -> int:
        """13 or 15."""
        return len(self.boxes)

    @cached_property
    def yahtzee_box(self) -> int:
        """Index of the five-of-a-kind box."""
        return self.boxes.index(five_of_a_kind_box(self.rules))

    @property
    def tracks_yahtzee_50(self) -> bool:
        """Whether the value depends on the YAHTZEE box holding 50 (bonus) or 0."""
        return self.extra_yahtzees

    @property
    def group_count(self) -> int:
        """Table rows: one per filled-box mask, twice over when the 50 / 0 state matters."""
        return (2 if self.tracks_yahtzee_50 else 1) << self.box_count

    @property
    def upper_bonus(self) -> int:
        """35 (Yahtzee) or 50 (Yatzy)."""
        return upper_bonus_value(self.rules)

    @cached_property
    def scores(self) -> FloatArray:
        """``scores[b, r]``: points of roll ``r`` in box ``b`` under the normal rules."""
        return np.array(
            [[score_box(self.rules, box, roll) for roll in ROLLS] for box in self.boxes],
            dtype=np.float64,
        )

    def joker_scores(self, face: int, matching_open: bool) -> FloatArray:
        """Points of five ``face``s in each box when the Joker is in force (both modes)."""
        dice = (face,) * 5
        points = []
        for box in self.boxes:
            if (
                is_upper(box)
                or box is Box.YAHTZEE
                or (self.joker is JokerMode.FREE and box in _JOKER_FIXED and matching_open)
            ):
                points.append(score_box(self.rules, box, dice))
            else:
                points.append(joker_points(box, dice))
        return np.array(points, dtype=np.float64)

    def __str__(self) -> str:
        return self.name


def _all_rules() -> tuple[SolverRules, ...]:
    found: dict[str, SolverRules] = {}
    on_off = (Toggle.ON, Toggle.OFF)
    off_on = (Toggle.OFF, Toggle.ON)
    for rules, extra, joker, upper_first, bonus_turn in itertools.product(
        RuleSet, on_off, JokerMode, off_on, off_on
    ):
        options = RuleOptions(rules, extra, joker, FirstPlayer.SEAT_ORDER, upper_first, bonus_turn)
        solver_rules = SolverRules.of(options)
        found.setdefault(solver_rules.name, solver_rules)
    return tuple(found.values())


ALL_RULES: tuple[SolverRules, ...] = _all_rules()
"""Every distinct rule set rooms can have (12), the official one first."""
