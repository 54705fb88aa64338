"""The bot's greedy strategy: pure functions over what the server sends.

The server tells a player, after every roll, which boxes are allowed and what each would score
(the ``preview``). The strategy needs no copy of the scoring rules: it scores from the preview and
chooses which dice to keep from simple dice-count heuristics (pairs and sets, runs, high faces).

- :func:`choose_box` picks the allowed box whose points beat that box's typical value ("par")
  by the most, so a 0 goes where it hurts least.
- :func:`choose_keep` picks the dice to keep for the next roll, aiming at the best open box.
- :func:`decide` puts both together: score now or roll again keeping some dice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

__all__ = [
    "PAR",
    "Decision",
    "PreviewEntry",
    "choose_box",
    "choose_keep",
    "decide",
]

UPPER_FACE = {
    "aces": 1,
    "ones": 1,
    "twos": 2,
    "threes": 3,
    "fours": 4,
    "fives": 5,
    "sixes": 6,
}

PAR: dict[str, float] = {
    # A rough typical score of each box for a greedy player: scoring above par is good, a zero
    # costs par. Upper boxes are worth three of the face (that is what the upper bonus needs).
    "aces": 3,
    "ones": 3,
    "twos": 6,
    "threes": 9,
    "fours": 12,
    "fives": 15,
    "sixes": 18,
    "one_pair": 8,
    "two_pairs": 14,
    "three_of_a_kind": 20,
    "four_of_a_kind": 10,
    "full_house": 18,
    "small_straight": 22,
    "large_straight": 20,
    "yahtzee": 12,
    "yatzy": 12,
    "chance": 22,
}

# Scores that are about as good as the box gets: take them at once, even with rolls left.
GREAT = {"yahtzee": 50, "yatzy": 50, "large_straight": 20, "full_house": 25}


class PreviewEntry(Protocol):
    """One box of a ``rolled`` event's preview (the protocol's preview entries fit)."""

    @property
    def box(self) -> str: ...

    @property
    def allowed(self) -> bool: ...

    @property
    def points(self) -> int: ...


@dataclass(frozen=True)
class Entry:
    """A plain preview entry, for tests and callers without protocol objects."""

    box: str
    allowed: bool
    points: int


@dataclass(frozen=True)
class Decision:
    """Either ``score`` a box or roll again keeping the dice at ``keep`` (indexes)."""

    score: str | None = None
    keep: tuple[int, ...] = ()


def _name(box: object) -> str:
    return str(getattr(box, "value", box))


def choose_box(preview: Iterable[PreviewEntry]) -> str:
    """The allowed box with the largest ``points - par`` (ties: the one listed first)."""
    best: tuple[float, str] | None = None
    for entry in preview:
        if not entry.allowed:
            continue
        name = _name(entry.box)
        value = entry.points - PAR.get(name, 10.0)
        if best is None or value > best[0]:
            best = (value, name)
    if best is None:
        raise ValueError("no allowed box in the preview")
    return best[1]


def _indexes(dice: Sequence[int], faces: Iterable[int]) -> tuple[int, ...]:
    """Indexes of ``dice`` that show ``faces`` (a multiset: each face once per occurrence)."""
    wanted = Counter(faces)
    keep: list[int] = []
    for i, face in enumerate(dice):
        if wanted[face] > 0:
            wanted[face] -= 1
            keep.append(i)
    return tuple(keep)


def _longest_run(dice: Sequence[int]) -> list[int]:
    """The longest run of consecutive distinct faces (the higher one on a tie)."""
    faces = sorted(set(dice))
    best: list[int] = []
    run: list[int] = []
    for face in faces:
        run = [*run, face] if run and face == run[-1] + 1 else [face]
        if len(run) >= len(best):
            best = run
    return best


def choose_keep(dice: Sequence[int], open_boxes: Iterable[str]) -> tuple[int, ...]:
    """Which dice to keep for the next roll (indexes into ``dice``), by simple heuristics.

    In order: a set of three or more of a face that some open box wants; a run of four (or of
    three) when a straight is open; two pairs for an open full house or two pairs; the best pair
    or single face for an open box that wants it; otherwise the high dice for chance.
    """
    open_set = {_name(b) for b in open_boxes}
    counts = Counter(dice)
    kinds = {"three_of_a_kind", "four_of_a_kind", "yahtzee", "yatzy", "full_house"}

    def face_wanted(face: int) -> bool:
        upper = {name for name, f in UPPER_FACE.items() if f == face}
        return bool(open_set & upper) or bool(open_set & kinds)

    # Most common face first, higher face on ties.
    ranked = sorted(counts.items(), key=lambda fc: (fc[1], fc[0]), reverse=True)
    face, count = ranked[0]
    if count >= 3 and face_wanted(face):
        if count == 3 and "full_house" in open_set and len(ranked) > 1 and ranked[1][1] == 2:
            return tuple(range(len(dice)))  # a full house already: keep all
        return _indexes(dice, [face] * count)

    straights = {"small_straight", "large_straight"} & open_set
    run = _longest_run(dice)
    if straights and len(run) >= 4:
        return _indexes(dice, run)

    pairs = [f for f, c in ranked if c >= 2]
    if len(pairs) >= 2 and {"full_house", "two_pairs"} & open_set:
        return _indexes(dice, [pairs[0]] * 2 + [pairs[1]] * 2)

    if straights and len(run) >= 3 and not (count >= 2 and face >= 4 and face_wanted(face)):
        return _indexes(dice, run)

    if count >= 2 and face_wanted(face):
        return _indexes(dice, [face] * count)
    if count >= 2:
        for other, c in ranked[1:]:
            if c >= 2 and face_wanted(other):
                return _indexes(dice, [other] * c)

    # Nothing to build on: aim at the highest open upper box we hold a die for, else chance.
    for target in sorted(set(dice), reverse=True):
        if open_set & {name for name, f in UPPER_FACE.items() if f == target}:
            return _indexes(dice, [target] * counts[target])
    if "chance" in open_set:
        return tuple(i for i, f in enumerate(dice) if f >= 5)
    return ()


def decide(dice: Sequence[int], rolls_left: int, preview: Sequence[PreviewEntry]) -> Decision:
    """Score now (no rolls left, or a great score is on the table) or roll again keeping dice."""
    allowed = [e for e in preview if e.allowed]
    if rolls_left <= 0 or not allowed:
        return Decision(score=choose_box(preview))
    for entry in allowed:
        name = _name(entry.box)
        if name in GREAT and entry.points >= GREAT[name]:
            return Decision(score=name)
    # Joker turns (only some boxes allowed, e.g. the matching upper box) gain nothing by rolling.
    open_boxes = [_name(e.box) for e in preview]
    if len(allowed) < len(preview) and all(e.points > 0 for e in allowed):
        return Decision(score=choose_box(preview))
    keep = choose_keep(dice, open_boxes)
    if len(keep) == len(dice):
        return Decision(score=choose_box(preview))
    return Decision(keep=keep)
