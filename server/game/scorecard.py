"""A player's score card: one slot per box of the rule set, plus the extra-Yahtzee bonus checks."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress, repeat
from operator import is_
from typing import NamedTuple

from .boxes import UPPER_BOX_COUNT, Box, boxes_for
from .errors import CategoryTakenError, UnknownBoxError
from .options import RuleSet
from .scoring import YAHTZEE_BONUS, upper_bonus_for

__all__ = ["Scorecard", "Totals"]


class Totals(NamedTuple):
    """The sums of a card. RULES.md section 4: grand = upper + bonus + lower + 100 x checks.

    A named tuple: compare with a plain tuple, or ``._asdict()`` for a JSON object.
    """

    upper: int
    upper_bonus: int
    lower: int
    yahtzee_bonus: int
    grand: int


@dataclass(frozen=True)
class Scorecard:
    """Immutable score card.

    ``scores[i]`` is the points written in ``boxes_for(rules)[i]``, or ``None`` while open.
    ``yahtzee_bonuses`` counts the +100 bonus checks (always 0 in Yatzy).
    """

    rules: RuleSet
    scores: tuple[int | None, ...]
    yahtzee_bonuses: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "rules", RuleSet(self.rules))
        if len(self.scores) != len(boxes_for(self.rules)):
            raise ValueError(f"a {self.rules} card has {len(boxes_for(self.rules))} boxes")

    @classmethod
    def empty(cls, rules: RuleSet) -> Scorecard:
        """A card with every box open."""
        return cls(RuleSet(rules), (None,) * len(boxes_for(rules)))

    @property
    def boxes(self) -> tuple[Box, ...]:
        """The boxes of this card, in order."""
        return boxes_for(self.rules)

    def _index(self, box: Box) -> int:
        try:
            return self.boxes.index(box)
        except ValueError:
            raise UnknownBoxError(f"{box!s} is not a box of {self.rules!s}") from None

    def get(self, box: Box) -> int | None:
        """Points in ``box``, or ``None`` if it is open; ``UnknownBoxError`` if not in this card."""
        return self.scores[self._index(box)]

    def is_open(self, box: Box) -> bool:
        """Whether ``box`` is still open."""
        return self.get(box) is None

    def open_boxes(self) -> tuple[Box, ...]:
        """The open boxes, in card order."""
        # every roll's preview asks: chosen in C
        return tuple(compress(self.boxes, map(is_, self.scores, repeat(None))))

    def filled(self) -> dict[Box, int]:
        """The filled boxes and their points, in card order."""
        return {b: s for b, s in zip(self.boxes, self.scores, strict=True) if s is not None}

    @property
    def filled_count(self) -> int:
        """How many boxes are filled."""
        return sum(s is not None for s in self.scores)

    @property
    def is_complete(self) -> bool:
        """Whether every box is filled."""
        return None not in self.scores

    def with_score(self, box: Box, points: int, yahtzee_bonus: bool = False) -> Scorecard:
        """A new card with ``points`` in the open ``box`` (and one more bonus check if asked)."""
        index = self._index(box)
        if self.scores[index] is not None:
            raise CategoryTakenError(f"{box!s} is already filled")
        scores = (*self.scores[:index], points, *self.scores[index + 1 :])
        return Scorecard(self.rules, scores, self.yahtzee_bonuses + int(yahtzee_bonus))

    def totals(self) -> Totals:
        """Upper, upper bonus, lower, extra-Yahtzee bonus and grand total."""
        # read at every commit (the record's totals) and by every roll's events: sums in C
        scores = self.scores
        upper = sum(filter(None, scores[:UPPER_BOX_COUNT]))
        lower = sum(filter(None, scores[UPPER_BOX_COUNT:]))
        bonus = upper_bonus_for(self.rules, upper)
        checks = YAHTZEE_BONUS * self.yahtzee_bonuses
        return Totals(upper, bonus, lower, checks, upper + bonus + lower + checks)
