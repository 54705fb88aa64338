"""One turn of optimal play, evaluated for many positions at once (the columns).

A *position* is where a turn starts: a group (filled-box mask, plus whether the YAHTZEE box
holds 50 when that matters) and the upper total capped at 63. The table holds, for every
position, the expected points still to come under optimal play (the upper bonus counted at the
end). Given the table's values for the positions one box later, :func:`evaluate` computes a whole
turn backwards for a batch of columns:

1. ``score_now[r]``: the best box for roll ``r`` (RULES.md sections 4-5: Joker, bonus, variants);
2. for 1 and then 2 rolls left: the value of every keep (the average over one more die, size by
   size, see :mod:`server.solver.dice`; keeping all five means scoring now), then the best keep
   of every roll (a max-plus zeta transform over sub-multisets);
3. the turn's value: the average over the first roll.

Every array carries ``K`` components along axis 0: the value, and optionally the second moment
of the points to come (for the standard deviation) and the derivative with respect to the
position's own value (the ``bonus_turn`` fixed point, see :mod:`server.solver.build`). Chance
nodes average every component; decisions pick the option with the best value and carry its
other components along.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .dice import (
    BY_FACE_COUNT,
    CHILD,
    FACES,
    LEVELS,
    ROLL_PROBABILITY,
    ROLL_ROWS,
    YAHTZEE_ROWS,
)
from .rules import SolverRules

__all__ = ["UPPER_CAP", "Columns", "TurnValues", "evaluate"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

UPPER_CAP = 63
NEG = -np.inf
VALUE, MOMENT2, SLOPE = 0, 1, 2


@dataclass(frozen=True)
class Columns:
    """A batch of positions: ``group[c]`` and ``upper[c]`` (0..63) for each column ``c``."""

    group: IntArray
    upper: IntArray

    def __len__(self) -> int:
        return len(self.group)


@dataclass(frozen=True)
class TurnValues:
    """What :func:`evaluate` computed; arrays are ``(K, rows, columns)``.

    ``score_now``: the best score of each roll (252 rows). ``keep[n]`` (n = 1, 2): the value of
    every keep (462 rows) with ``n`` rolls left; a five-dice keep means scoring now.
    ``best[n]``: the best decision for each roll with ``n`` rolls left. ``start``: ``(K, C)``.
    Only ``start`` is kept unless ``keep_all``.
    """

    start: FloatArray
    score_now: FloatArray | None = None
    keep: tuple[FloatArray, FloatArray] | None = None
    best: tuple[FloatArray, FloatArray] | None = None


class _Tables:
    """The table of values (and second moments) the turn reads its successors from."""

    def __init__(self, values: FloatArray, moments: FloatArray | None) -> None:
        self.values = values.reshape(-1)
        self.moments = None if moments is None else moments.reshape(-1)

    def successor(self, flat: IntArray, allowed: BoolArray, components: int) -> FloatArray:
        """``(components, *flat.shape)``: value (and second moment) at flat positions, value
        -inf where not ``allowed``; the slope is 0 (a successor does not depend on this
        position's own value)."""
        out = np.zeros((components, *flat.shape))
        out[VALUE] = np.where(allowed, self.values[flat], NEG)
        if components > MOMENT2:
            assert self.moments is not None
            out[MOMENT2] = self.moments[flat]
        return out


def _candidate(points: FloatArray, successor: FloatArray) -> FloatArray:
    """Components of ``points + X`` where ``successor`` holds those of ``X`` (broadcast)."""
    value: FloatArray = points + successor[VALUE]
    components = successor.shape[0]
    if components == 1:
        return value[None]
    out = np.empty((components, *value.shape))
    out[VALUE] = value
    out[MOMENT2] = points * (points + 2 * successor[VALUE]) + successor[MOMENT2]
    if components > SLOPE:
        out[SLOPE] = successor[SLOPE]
    return out


def _select(best: FloatArray, candidate: FloatArray) -> None:
    """Where ``candidate`` has the better value, take all its components (in place)."""
    if best.shape[0] == 1:
        np.maximum(best, candidate, out=best)
    else:
        np.copyto(best, candidate, where=candidate[VALUE] > best[VALUE])


class _Position:
    """Per-column facts of a batch: open boxes, successor rows, Joker state."""

    def __init__(self, rules: SolverRules, columns: Columns) -> None:
        nb = rules.box_count
        self.rules = rules
        self.group = columns.group
        self.upper = columns.upper
        self.mask = columns.group & ((1 << nb) - 1)
        self.y50 = (columns.group >> nb) & 1
        self.open = [(self.mask >> b) & 1 == 0 for b in range(nb)]
        self.any_upper_open = np.logical_or.reduce(self.open[:6])
        self.lower_allowed = (
            ~self.any_upper_open if rules.upper_first else np.ones_like(self.any_upper_open)
        )
        self.any_lower_open = np.logical_or.reduce(self.open[6:])
        yahtzee_filled = ~self.open[rules.yahtzee_box]
        self.joker = yahtzee_filled if rules.extra_yahtzees else np.zeros_like(yahtzee_filled)

    def flat(self, box: int, upper: IntArray, y50: int = 0) -> IntArray:
        """Flat table index of the position after filling ``box`` with upper total ``upper``."""
        group = self.group | (1 << box) | (y50 << self.rules.box_count)
        return group * (UPPER_CAP + 1) + np.minimum(upper, UPPER_CAP)


def _empty(components: int, *shape: int) -> FloatArray:
    out = np.zeros((components, *shape))
    out[VALUE] = NEG
    return out


def _score_now(
    pos: _Position, tables: _Tables, components: int, own: FloatArray | None
) -> FloatArray:
    """``(K, 252, C)``: the best allowed box for every roll."""
    rules = pos.rules
    best = _empty(components, len(FACES), len(pos.group))
    counts = np.arange(6)[:, None]
    for b in range(6):
        face = b + 1
        points = (face * counts).astype(np.float64)
        after = tables.successor(pos.flat(b, pos.upper + face * counts), pos.open[b], components)
        _select(best, _candidate(points, after)[:, FACES[:, b], :])
    for b in range(6, rules.box_count):
        points = rules.scores[b][:, None]
        allowed = pos.open[b] & pos.lower_allowed
        after = tables.successor(pos.flat(b, pos.upper), allowed, components)
        candidate = _candidate(points, after[:, None, :])
        if b == rules.yahtzee_box and rules.tracks_yahtzee_50:
            after_50 = tables.successor(pos.flat(b, pos.upper, 1), allowed, components)
            candidate[:, YAHTZEE_ROWS, :] = _candidate(points[YAHTZEE_ROWS], after_50[:, None, :])
        _select(best, candidate)
    if rules.extra_yahtzees and pos.joker.any():
        _joker_rows(pos, tables, components, best, own)
    return best


def _joker_rows(
    pos: _Position, tables: _Tables, components: int, best: FloatArray, own: FloatArray | None
) -> None:
    """Replace the five-of-a-kind rows of the columns where the Joker is in force."""
    rules = pos.rules
    forced = rules.joker.value == "forced"
    bonus = 100.0 * pos.y50
    for f in range(6):
        face = f + 1
        matching_open = pos.open[f]
        row = _empty(components, len(pos.group))
        for b in range(6):
            points = 5.0 * face if b == f else 0.0
            if forced and b != f:
                other = (
                    ~matching_open & pos.any_upper_open
                    if rules.upper_first
                    else ~matching_open & ~pos.any_lower_open
                )
                allowed = pos.open[b] & other
            else:
                allowed = pos.open[b]
            after = tables.successor(pos.flat(b, pos.upper + int(points)), allowed, components)
            _select(row, _candidate(np.asarray(points + bonus, dtype=np.float64), after))
        with_open = rules.joker_scores(face, True)
        with_filled = rules.joker_scores(face, False)
        for b in range(6, rules.box_count):
            lower_points = np.where(matching_open, with_open[b], with_filled[b])
            allowed = pos.open[b] & pos.lower_allowed
            if forced:
                allowed = allowed & ~matching_open
            after = tables.successor(pos.flat(b, pos.upper), allowed, components)
            _select(row, _candidate(lower_points + bonus, after))
        if rules.bonus_turn and own is not None:
            _select(row, _take_bonus_option(pos, own, components))
        best[:, YAHTZEE_ROWS[f], :] = np.where(pos.joker, row, best[:, YAHTZEE_ROWS[f], :])


def _take_bonus_option(pos: _Position, own: FloatArray, components: int) -> FloatArray:
    """``bonus_turn``: +100 and the same position again, worth ``own`` (the current guess).

    The second moment of the position itself is left out (0) and the slope is 1; the build
    adds it back as a linear fixed point (see :mod:`server.solver.build`).
    """
    again = np.zeros((components, len(pos.group)))
    again[VALUE] = np.where(pos.y50 == 1, own, NEG)
    if components > SLOPE:
        again[SLOPE] = 1.0
    return _candidate(np.full(len(pos.group), 100.0), again)


def _keep_values(after: FloatArray, score_now: FloatArray) -> FloatArray:
    """``(K, 462, C)``: the value of every keep given the values ``after`` the re-roll.

    This is ``KEEP_TO_ROLL @ after`` factorised die by die: a keep of ``s`` dice averages the
    keeps of ``s + 1`` dice it grows into (1,260 row additions instead of 52,920 products).
    """
    components, _, width = after.shape
    keep = np.empty((components, LEVELS[5].stop, width))
    keep[:, ROLL_ROWS] = after
    for size in range(4, -1, -1):
        rows = LEVELS[size]
        children = CHILD[rows]
        total = np.take(keep, children[:, 0], axis=1)
        for f in range(1, 6):
            total += np.take(keep, children[:, f], axis=1)
        total *= 1.0 / 6.0
        keep[:, rows] = total
    keep[:, ROLL_ROWS] = score_now  # keeping all five dice is scoring now
    return keep


def _best_sub_keep(keep: FloatArray, *, in_place: bool) -> FloatArray:
    """``(K, 252, C)``: for each roll, its best sub-multiset keep (a max-plus zeta transform)."""
    best = keep if in_place else keep.copy()
    for per_count in BY_FACE_COUNT:
        for rows, less in per_count:
            here = np.take(best, rows, axis=1)
            _select(here, np.take(best, less, axis=1))
            best[:, rows] = here
    return best[:, ROLL_ROWS]


def evaluate(
    rules: SolverRules,
    values: FloatArray,
    moments: FloatArray | None,
    columns: Columns,
    *,
    components: int = 1,
    own: FloatArray | None = None,
    keep_all: bool = False,
) -> TurnValues:
    """A whole turn for ``columns``, reading successors from ``values`` (and ``moments``).

    ``components``: 1 (value), 2 (and second moment; needs ``moments``), 3 (and slope).
    ``own``: for ``bonus_turn`` rules, the value of each column's own position (the build's
    current guess, or the table's value once built).
    """
    with np.errstate(invalid="ignore"):  # -inf * 0 in blocked options' second moments
        return _evaluate(rules, _Tables(values, moments), columns, components, own, keep_all)


def _evaluate(
    rules: SolverRules,
    tables: _Tables,
    columns: Columns,
    components: int,
    own: FloatArray | None,
    keep_all: bool,
) -> TurnValues:
    pos = _Position(rules, columns)
    score_now = _score_now(pos, tables, components, own)
    after = score_now
    keeps: list[FloatArray] = []
    bests: list[FloatArray] = []
    for _ in range(2):
        keep = _keep_values(after, score_now)
        after = _best_sub_keep(keep, in_place=not keep_all)
        if keep_all:
            keeps.append(keep)
            bests.append(after)
    start = np.einsum("r,krc->kc", ROLL_PROBABILITY, after)
    if not keep_all:
        return TurnValues(start)
    return TurnValues(start, score_now, (keeps[0], keeps[1]), (bests[0], bests[1]))
