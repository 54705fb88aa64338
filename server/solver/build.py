"""Build a table: the expected points to come under optimal play, for every position.

Dynamic programming backwards over the number of filled boxes. A position one box later always
has one more filled box, so all positions with ``n`` filled boxes ("a layer") depend only on
layer ``n + 1`` and are evaluated together, in batches of columns (:mod:`server.solver.turn`).
Only reachable positions are evaluated: the upper totals a set of upper boxes can sum to, the
masks allowed by ``upper_first``, the supersets of the start position's mask. The rest of the
table is NaN, so a bug that reads one shows up.

The last layer's value is the upper bonus of its upper total (so the bonus is counted once, at
the end, and never needs tracking when it is earned).

``bonus_turn``: taking the +100 leads back to the same position, so its value ``x`` solves
``x = f(x)``, where ``f`` (a turn with ``x`` as the take option's continuation) is convex and
piecewise linear with slope ``f'(x)`` < 1 (the chance of taking the bonus). Newton's method from
below (``x = 0``) converges in a few steps; the slope comes as the third component of the turn
evaluation. The second moment then solves ``m = a + f'(x) m`` exactly.
"""

from __future__ import annotations

import mmap
import multiprocessing
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from .rules import SolverRules
from .turn import MOMENT2, SLOPE, UPPER_CAP, VALUE, Columns, evaluate

__all__ = ["Start", "build_values", "reachable_columns"]

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

CHUNK = 2048
"""Columns per batch: large enough to amortise numpy's per-call cost, small enough for cache."""

UPPER_MASK = 0b111111
NEWTON_STEPS = 30
NEWTON_TOLERANCE = 1e-9

Progress = Callable[[int, int], None]
"""Called with (positions done, positions in all) after each batch."""


@dataclass(frozen=True)
class Start:
    """Where a table starts: the filled-box mask, the upper total and the 50 flag (see
    :meth:`server.solver.table.Table.position`). The default is an empty card."""

    mask: int = 0
    upper: int = 0
    yahtzee_50: int = 0


def _upper_reach(start: Start) -> dict[int, int]:
    """For every upper mask containing the start's, the reachable upper totals as a bit set."""
    first = start.mask & UPPER_MASK
    reach = {first: 1 << min(start.upper, UPPER_CAP)}
    for mask in sorted(range(64), key=lambda m: bin(m).count("1")):
        if mask & first != first or mask == first:
            continue
        bits = 0
        for f in range(6):
            if mask >> f & 1 and (mask ^ (1 << f)) in reach:
                before = reach[mask ^ (1 << f)]
                for count in range(6):
                    bits |= _shift_capped(before, (f + 1) * count)
        reach[mask] = bits
    return reach


def _shift_capped(bits: int, by: int) -> int:
    """The totals in ``bits`` plus ``by``, capped at 63."""
    full = bits << by
    capped = full & ((1 << UPPER_CAP) - 1)
    if full >> UPPER_CAP:
        capped |= 1 << UPPER_CAP
    return capped


def _masks_of_layer(rules: SolverRules, start: Start, filled: int) -> list[int]:
    nb = rules.box_count
    lower_start = start.mask & ~UPPER_MASK
    found = []
    for mask in range(1 << nb):
        if mask & start.mask != start.mask or bin(mask).count("1") != filled:
            continue
        if (
            rules.upper_first
            and mask & UPPER_MASK != UPPER_MASK
            and mask & ~UPPER_MASK != lower_start
        ):
            continue
        found.append(mask)
    return found


def bonus_out_of_reach(mask: int) -> int:
    """Upper totals below this can no longer reach 63 with the open upper boxes of ``mask``:
    they all have the same value, that of total 0 (the class's representative)."""
    room = sum(5 * (f + 1) for f in range(6) if not mask >> f & 1)
    return max(0, UPPER_CAP - room)


def reachable_columns(rules: SolverRules, start: Start, filled: int) -> Columns:
    """The reachable positions with ``filled`` boxes filled, from ``start``; upper totals that
    can no longer earn the bonus are represented by total 0 (see :func:`bonus_out_of_reach`)."""
    reach = _upper_reach(start)
    nb = rules.box_count
    y_bit = 1 << rules.yahtzee_box
    groups: list[int] = []
    uppers: list[int] = []
    for mask in _masks_of_layer(rules, start, filled):
        low = bonus_out_of_reach(mask)
        reached = [u for u in range(UPPER_CAP + 1) if reach[mask & UPPER_MASK] >> u & 1]
        totals = ([0] if any(u < low for u in reached) else []) + [u for u in reached if u >= low]
        if not rules.tracks_yahtzee_50 or not mask & y_bit:
            flags = [0]
        elif start.mask & y_bit:
            flags = [start.yahtzee_50]
        else:
            flags = [0, 1]
        for flag in flags:
            groups.extend([mask | (flag << nb)] * len(totals))
            uppers.extend(totals)
    return Columns(np.array(groups, dtype=np.int64), np.array(uppers, dtype=np.int64))


def _solve_chunk(
    rules: SolverRules, values: FloatArray, moments: FloatArray | None, columns: Columns
) -> tuple[FloatArray, FloatArray | None]:
    if moments is None:
        result = evaluate(rules, values, None, columns, components=1).start
        return result[VALUE], None
    value = np.empty(len(columns))
    moment = np.empty(len(columns))
    # Only a position whose YAHTZEE box holds 50 can take the bonus and come back to itself.
    loops = (columns.group >> rules.box_count) & 1 == 1 if rules.bonus_turn else None
    plain = np.ones(len(columns), dtype=bool) if loops is None else ~loops
    if plain.any():
        part = Columns(columns.group[plain], columns.upper[plain])
        result = evaluate(rules, values, moments, part, components=2).start
        value[plain], moment[plain] = result[VALUE], result[MOMENT2]
    if loops is not None and loops.any():
        part = Columns(columns.group[loops], columns.upper[loops])
        value[loops], moment[loops] = _fixed_point(rules, values, moments, part)
    return value, moment


def _fixed_point(
    rules: SolverRules, values: FloatArray, moments: FloatArray, columns: Columns
) -> tuple[FloatArray, FloatArray]:
    """``bonus_turn``: Newton on ``x = f(x)`` per column, from below (``x = 0``)."""
    own = np.zeros(len(columns))
    for _ in range(NEWTON_STEPS):
        result = evaluate(rules, values, moments, columns, components=3, own=own).start
        step = (result[VALUE] - own) / (1.0 - result[SLOPE])
        own = own + step
        if np.all(np.abs(step) <= NEWTON_TOLERANCE * np.maximum(1.0, np.abs(own))):
            # The last evaluation was at the fixed point (to the tolerance): its second
            # moment left out the position's own, which enters with the slope as weight.
            return own, result[MOMENT2] / (1.0 - result[SLOPE])
    raise RuntimeError("the bonus_turn fixed point did not converge")  # pragma: no cover


def _spread_out_of_reach(values: FloatArray, moments: FloatArray | None, chunk: Columns) -> None:
    """Copy each representative (total 0) to every total that can no longer earn the bonus."""
    low = np.array([bonus_out_of_reach(int(g) & UPPER_MASK) for g in chunk.group])
    for column in np.flatnonzero((chunk.upper == 0) & (low > 0)):
        group = chunk.group[column]
        values[group, : low[column]] = values[group, 0]
        if moments is not None:
            moments[group, : low[column]] = moments[group, 0]


def _shared(shape: tuple[int, int], workers: int) -> FloatArray:
    """A NaN-filled array; with several workers in anonymous shared memory, so the forked
    workers write their columns straight into the parent's table."""
    if workers <= 1:
        return np.full(shape, np.nan)
    buffer = mmap.mmap(-1, shape[0] * shape[1] * 8)
    array = np.frombuffer(buffer, dtype=np.float64).reshape(shape)
    array[:] = np.nan
    return array


def _solve_chunks(
    rules: SolverRules,
    values: FloatArray,
    moments: FloatArray | None,
    chunks: list[Columns],
    progress: Callable[[int], None] | None,
) -> None:
    for chunk in chunks:
        value, moment = _solve_chunk(rules, values, moments, chunk)
        values[chunk.group, chunk.upper] = value
        if moments is not None and moment is not None:
            moments[chunk.group, chunk.upper] = moment
        _spread_out_of_reach(values, moments, chunk)
        if progress is not None:
            progress(len(chunk))


def _solve_layer(
    rules: SolverRules,
    values: FloatArray,
    moments: FloatArray | None,
    chunks: list[Columns],
    workers: int,
    progress: Callable[[int], None] | None,
) -> None:
    """All chunks of one layer; with several workers, forked processes take every n-th chunk
    (a layer only reads the layers after it, so the workers never race)."""
    if workers <= 1 or len(chunks) < 2:
        _solve_chunks(rules, values, moments, chunks, progress)
        return
    context = multiprocessing.get_context("fork")
    children = [
        context.Process(
            target=_solve_chunks, args=(rules, values, moments, chunks[i::workers], None)
        )
        for i in range(1, workers)
    ]
    for child in children:
        child.start()
    _solve_chunks(rules, values, moments, chunks[::workers], progress)
    for child in children:
        child.join()
        if child.exitcode != 0:
            raise RuntimeError(f"a table worker failed (exit code {child.exitcode})")


def build_values(
    rules: SolverRules,
    *,
    start: Start | None = None,
    with_moments: bool = False,
    workers: int = 1,
    progress: Progress | None = None,
) -> tuple[FloatArray, FloatArray | None]:
    """The table of ``rules``: ``values[group, upper]`` (and, ``with_moments``, the second
    moments of the points to come), NaN where not reachable from ``start``.

    ``bonus_turn`` rule sets always compute the moments (the fixed point carries them).
    ``workers`` > 1 forks that many processes per layer (POSIX only; not from a process with
    running threads that hold locks, such as a server: build there in a subprocess).
    """
    start = start or Start()
    shape = (rules.group_count, UPPER_CAP + 1)
    values = _shared(shape, workers)
    moments = _shared(shape, workers) if with_moments or rules.bonus_turn else None
    full = (1 << rules.box_count) - 1
    bonus = np.where(np.arange(UPPER_CAP + 1) >= UPPER_CAP, float(rules.upper_bonus), 0.0)
    for flag in range(2 if rules.tracks_yahtzee_50 else 1):
        values[full | (flag << rules.box_count)] = bonus
        if moments is not None:
            moments[full | (flag << rules.box_count)] = bonus**2
    first = bin(start.mask).count("1")
    layers = [reachable_columns(rules, start, n) for n in range(rules.box_count - 1, first - 1, -1)]
    total = sum(len(c) for c in layers)
    done = 0

    def advance(count: int) -> None:
        nonlocal done
        done += count * max(1, workers)  # the parent's share stands for every worker's
        if progress is not None:
            progress(min(done, total), total)

    for columns in layers:
        chunks = [
            Columns(columns.group[i : i + CHUNK], columns.upper[i : i + CHUNK])
            for i in range(0, len(columns), CHUNK)
        ]
        _solve_layer(rules, values, moments, chunks, workers, advance)
    if progress is not None:
        progress(total, total)
    if workers > 1:  # private copies: the shared buffers go with the workers
        return values.copy(), None if moments is None else moments.copy()
    return values, moments
