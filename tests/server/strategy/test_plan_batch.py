"""Computers' turn plans computed in batches (server/strategy/plan_batch.py)."""

from __future__ import annotations

import asyncio

import pytest

from server.game import Box, Scorecard
from server.solver import Table, position_of
from server.strategy import plan_batch
from server.strategy.plan_batch import PlanBatcher


def cards(count: int) -> list[Scorecard]:
    """``count`` cards at different positions (the upper boxes' points differ)."""
    boxes = (Box.ACES, Box.TWOS, Box.THREES, Box.FOURS, Box.FIVES, Box.SIXES)
    out = []
    for n in range(count):
        card = Scorecard.empty("yahtzee")
        for i, box in enumerate(boxes[: 1 + n % 6]):
            card = card.with_score(box, (i + 1) * (1 + n // 6 % 4))
        out.append(card)
    return out


def keys(table: Table, some: list[Scorecard]) -> set[tuple[int, int]]:
    return {(p.group, p.upper) for p in (position_of(table.rules, c) for c in some)}


async def test_plans_asked_for_at_once_are_computed_in_one_batch(official_table: Table) -> None:
    official_table.memo.clear()
    batcher = PlanBatcher(window=0.05)
    wanted = cards(12)
    await asyncio.gather(*(batcher.ready(official_table, c) for c in wanted))
    assert batcher.batches == 1
    assert batcher.planned == len(keys(official_table, wanted)) == 12
    assert keys(official_table, wanted) <= set(official_table.memo)
    await batcher.ready(official_table, wanted[0])  # remembered: no batch, no wait
    assert batcher.batches == 1


async def test_a_full_batch_is_computed_without_waiting_for_the_window(
    official_table: Table,
) -> None:
    official_table.memo.clear()
    batcher = PlanBatcher(window=3600.0, most=4)  # only a full batch can end these waits
    async with asyncio.timeout(60):
        await asyncio.gather(*(batcher.ready(official_table, c) for c in cards(4)))
    assert (batcher.batches, batcher.planned) == (1, 4)


async def test_a_failed_batch_lets_the_moves_go_on(
    official_table: Table, monkeypatch: pytest.MonkeyPatch
) -> None:
    official_table.memo.clear()

    def broken(table: Table, some: list[Scorecard]) -> int:
        raise MemoryError("no room for the batch")

    monkeypatch.setattr(plan_batch, "plan_ahead", broken)
    batcher = PlanBatcher(window=0.01)
    async with asyncio.timeout(60):  # every waiting move is let go
        await asyncio.gather(*(batcher.ready(official_table, c) for c in cards(3)))
    assert batcher.planned == 0  # the moves compute their plans themselves


async def test_a_request_does_not_wait_and_its_plan_is_ready_by_the_next_move(
    official_table: Table,
) -> None:
    official_table.memo.clear()
    batcher = PlanBatcher(window=0.01)
    card = cards(1)[0]
    asked = batcher.request(official_table, card)  # the turn's roll: asks and goes on
    assert asked is not None
    assert not asked.done()
    await asked
    assert batcher.request(official_table, card) is None  # the next move finds the plan
    await batcher.ready(official_table, card)
    assert (batcher.batches, batcher.planned) == (1, 1)
