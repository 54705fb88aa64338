"""Computers' turn plans computed in batches: the solver evaluates many turns in one pass far
more cheaply than one at a time (about 4 ms for a plan alone, 0.2 ms each in a batch of 32 on
the reference machine), and a process with many computers on turn needs many plans a second.

A computer's move first asks :meth:`PlanBatcher.ready` for the plan of its turn. Requests that
arrive within :data:`WINDOW_SECONDS` of the first (or until :data:`MOST` are waiting) are
evaluated together and remembered in the table's memo (:func:`server.solver.plan_ahead`),
where the move's own decision then finds its plan. A turn's first move (the roll) only asks,
without waiting; a later move waits only when its plan is still missing; a plan already
remembered costs nothing.
"""

from __future__ import annotations

import asyncio
import logging

from server.game import Scorecard
from server.solver import Table, plan_ahead
from server.solver.policy import plan_key

__all__ = ["MOST", "WINDOW_SECONDS", "PlanBatcher"]

log = logging.getLogger("yahtzee.plans")

WINDOW_SECONDS = 0.05
"""How long the first request of a batch waits for others. Most requests are made at a turn's
first move (the roll, which needs no plan), a computer's pace (hundreds of ms) before the plan
is used: the wait seldom delays a move."""

MOST = 64
"""A batch this large is evaluated at once (larger batches save little more per plan)."""


class PlanBatcher:
    """Requests for turn plans, gathered and evaluated per table in one pass."""

    def __init__(self, window: float = WINDOW_SECONDS, most: int = MOST) -> None:
        self.window = window
        self.most = most
        self._cards: dict[int, tuple[Table, list[Scorecard]]] = {}
        self._waiting: list[asyncio.Future[None]] = []
        self._flush_at: asyncio.TimerHandle | None = None
        #: plans computed, and the batches they were computed in (for the metrics and tests)
        self.planned = 0
        self.batches = 0

    async def ready(self, table: Table, card: Scorecard) -> None:
        """Return once the plan of ``card``'s turn is in ``table``'s memo (or its evaluation
        failed: the move then computes the plan itself)."""
        waiter = self.request(table, card)
        if waiter is not None:
            await waiter

    def request(self, table: Table, card: Scorecard) -> asyncio.Future[None] | None:
        """Ask for the plan of ``card``'s turn without waiting (a turn's first move, the roll,
        needs none: its plan is computed while the computer "thinks"); the future is done
        once the plan is remembered, ``None`` when it already is."""
        if plan_key(table, card) in table.memo:
            return None
        loop = asyncio.get_running_loop()
        self._cards.setdefault(id(table), (table, []))[1].append(card)
        waiter: asyncio.Future[None] = loop.create_future()
        self._waiting.append(waiter)
        if len(self._waiting) >= self.most:
            self._flush()
        elif self._flush_at is None:
            self._flush_at = loop.call_later(self.window, self._flush)
        return waiter

    def _flush(self) -> None:
        if self._flush_at is not None:
            self._flush_at.cancel()
            self._flush_at = None
        batches, self._cards = self._cards, {}
        waiting, self._waiting = self._waiting, []
        try:
            for table, cards in batches.values():
                self.planned += plan_ahead(table, cards)
                self.batches += 1
        except Exception:  # a move must not fail for want of a batch: it plans on its own
            log.exception("turn plans not computed in a batch")
        for waiter in waiting:
            if not waiter.done():
                waiter.set_result(None)
