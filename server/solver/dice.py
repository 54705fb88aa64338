"""The dice multisets of one turn and the index tables the dynamic programme walks.

A multiset of 0..5 dice is a count vector ``(c1, ..., c6)``. All 462 of them are numbered by
size, then in lexicographic order of their sorted faces, so each size is one contiguous slice
of rows: 1 empty keep, 6 of one die, 21, 56, 126, and the 252 rolls of five dice (rows
210..461). Two index tables replace the keep -> roll transition matrix:

- ``KEEP_TO_ROLL``: the keep -> roll probabilities, one fixed 210 x 252 matrix (built from
  ``CHILD[k, f]``, the multiset ``k`` plus one die showing ``f + 1``); one dense product per
  re-roll is faster in numpy than the 4,368 non-zero entries taken one by one.
- ``BY_FACE_COUNT[f][c]``: the rows whose count of face ``f + 1`` is ``c`` and the rows with one
  such die less. Replacing every row by the best of its sub-multisets, face by face and count by
  count, is a max-plus zeta transform (about 1,150 row maxima).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from math import factorial

import numpy as np
import numpy.typing as npt

__all__ = [
    "BY_FACE_COUNT",
    "CHILD",
    "COUNTS",
    "FACES",
    "INDEX",
    "KEEP_TO_ROLL",
    "LEVELS",
    "MULTISETS",
    "ROLLS",
    "ROLL_PROBABILITY",
    "ROLL_ROWS",
    "YAHTZEE_ROWS",
    "keeps_of",
    "multiset_index",
    "sub_multisets",
]

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def _multisets() -> list[tuple[int, ...]]:
    found: list[tuple[int, ...]] = []
    for size in range(6):
        found.extend(itertools.combinations_with_replacement(range(1, 7), size))
    return found


MULTISETS: tuple[tuple[int, ...], ...] = tuple(_multisets())
"""All 462 multisets of 0..5 dice as sorted face tuples, in row order."""

INDEX: dict[tuple[int, ...], int] = {m: i for i, m in enumerate(MULTISETS)}
"""Row of a sorted face tuple."""

LEVELS: tuple[slice, ...] = tuple(
    slice(sum(1 for m in MULTISETS if len(m) < size), sum(1 for m in MULTISETS if len(m) <= size))
    for size in range(6)
)
"""``LEVELS[s]``: the rows of the multisets of ``s`` dice."""

ROLL_ROWS = LEVELS[5]
"""The 252 rolls of five dice."""

ROLLS: tuple[tuple[int, ...], ...] = MULTISETS[ROLL_ROWS]
"""The 252 rolls of five dice as sorted face tuples (row ``i`` of a roll array)."""

COUNTS: IntArray = np.array([[m.count(f) for f in range(1, 7)] for m in MULTISETS], dtype=np.int64)
"""``COUNTS[row, f]``: how many dice of the multiset show face ``f + 1``."""

FACES: IntArray = COUNTS[ROLL_ROWS]
"""``FACES[roll, f]``: the face counts of each of the 252 rolls."""

YAHTZEE_ROWS: IntArray = np.array([INDEX[(f,) * 5] - ROLL_ROWS.start for f in range(1, 7)])
"""Roll index (0..251) of five of a kind of face 1..6."""

# The padding row: index 462 holds -inf (values) in the arrays the turn evaluator uses.
PAD = len(MULTISETS)

CHILD: IntArray = np.array(
    [
        [INDEX[tuple(sorted((*m, f)))] if len(m) < 5 else PAD for f in range(1, 7)]
        for m in MULTISETS
    ],
    dtype=np.int64,
)
"""``CHILD[row, f]``: the row of the multiset with one more die showing ``f + 1``."""


def _by_face_count() -> tuple[tuple[tuple[IntArray, IntArray], ...], ...]:
    table = []
    for f in range(6):
        per_count = []
        for c in range(1, 6):
            rows = [i for i, m in enumerate(MULTISETS) if m.count(f + 1) == c]
            less = []
            for i in rows:
                faces = list(MULTISETS[i])
                faces.remove(f + 1)
                less.append(INDEX[tuple(faces)])
            per_count.append((np.array(rows, dtype=np.int64), np.array(less, dtype=np.int64)))
        table.append(tuple(per_count))
    return tuple(table)


BY_FACE_COUNT = _by_face_count()
"""``BY_FACE_COUNT[f][c - 1] = (rows, rows_with_one_less)`` for rows with ``c`` dice of face
``f + 1``."""


def _roll_probability() -> FloatArray:
    probability = np.empty(len(ROLLS))
    for i, roll in enumerate(ROLLS):
        ways = factorial(5)
        for f in range(1, 7):
            ways //= factorial(roll.count(f))
        probability[i] = ways / 6**5
    return probability


ROLL_PROBABILITY: FloatArray = _roll_probability()
"""Chance of each of the 252 rolls when all five dice are rolled (ordered outcomes / 7,776)."""


def _keep_to_roll() -> FloatArray:
    # Rolling m dice from keep k = one die, then m - 1 from k plus that die: build the matrix
    # size by size from the identity on the rolls.
    rolls = len(ROLLS)
    matrix = np.zeros((PAD, rolls))
    matrix[ROLL_ROWS] = np.eye(rolls)
    for size in range(4, -1, -1):
        rows = LEVELS[size]
        matrix[rows] = matrix[CHILD[rows]].sum(axis=1) / 6.0
    return matrix[: ROLL_ROWS.start]


KEEP_TO_ROLL: FloatArray = _keep_to_roll()
"""``KEEP_TO_ROLL[k, r]``: chance of roll ``r`` after re-rolling the dice not in keep ``k``
(rows 0..209: the keeps of fewer than five dice). One fixed matrix, 4,368 non-zero entries."""


def multiset_index(faces: Sequence[int]) -> int:
    """The row of the multiset of ``faces`` (any order)."""
    return INDEX[tuple(sorted(faces))]


@functools.cache
def keeps_of(roll: tuple[int, ...]) -> tuple[tuple[tuple[int, ...], ...], IntArray]:
    """The distinct sub-multisets of a sorted ``roll`` (largest first, so ``argmax`` over their
    values prefers keeping more dice on a tie) and their rows."""
    keeps = tuple(sorted(sub_multisets(roll), key=lambda m: -len(m)))
    return keeps, np.array([INDEX[k] for k in keeps], dtype=np.int64)


def sub_multisets(faces: Sequence[int]) -> list[tuple[int, ...]]:
    """Every distinct sub-multiset of ``faces`` as a sorted tuple, the empty one first."""
    counts = [list(faces).count(f) for f in range(1, 7)]
    found = []
    for choice in itertools.product(*(range(c + 1) for c in counts)):
        found.append(tuple(f + 1 for f, n in enumerate(choice) for _ in range(n)))
    return sorted(set(found), key=lambda m: (len(m), m))
