"""The policy of a table: the best dice to keep, the best box, the options ranked.

All expected values here are **expected final scores** (the points on the card plus the
table's expectation of the points to come), so they compare across decisions and players.

A turn's numbers come from one evaluation of the turn at its start position
(:func:`plan_turns`, batched over any number of cards); a :class:`TurnPlan` then answers every
decision of that turn by lookups. Box values are computed through the engine's own ruling
(:func:`server.game.preview.box_previews`), so the advice can never name an illegal box.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from server.game import Box, Command, Roll, Score, Scorecard, TakeBonus
from server.game.preview import bonus_take_allowed, box_previews, yahtzee_bonus_due
from server.game.scoring import YAHTZEE_BONUS, check_dice

from .dice import INDEX, ROLL_ROWS, keeps_of
from .table import PlanMemo, Position, Table, position_of
from .turn import UPPER_CAP, VALUE, Columns, evaluate

__all__ = [
    "Action",
    "Option",
    "Reroll",
    "ScoreBox",
    "TakeBonusAction",
    "TurnPlan",
    "best_box",
    "best_keep",
    "box_options",
    "hold_for",
    "keep_options",
    "plan_ahead",
    "plan_key",
    "plan_turns",
    "rank_options",
    "remembered_plans",
    "to_command",
    "turn_plan",
]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Reroll:
    """Roll again, holding the dice at ``hold`` (indexes 0..4), which show ``keep``."""

    keep: tuple[int, ...]
    hold: frozenset[int]


@dataclass(frozen=True)
class ScoreBox:
    """Fill ``box`` with the current dice."""

    box: Box


@dataclass(frozen=True)
class TakeBonusAction:
    """Take the +100 and fill no box (``bonus_turn``)."""


Action = Reroll | ScoreBox | TakeBonusAction
"""One decision of a turn."""


@dataclass(frozen=True)
class Option:
    """An action and the expected final score after it (under optimal play from then on)."""

    action: Action
    expected: float


def to_command(action: Action, player: str, faces: Sequence[int] = ()) -> Command:
    """The engine command for ``action``; a :class:`Reroll` needs the drawn ``faces`` of the
    dice not held (see :func:`server.game.dice_to_roll`)."""
    if isinstance(action, Reroll):
        return Roll(player, tuple(faces), keep=action.hold)
    if isinstance(action, ScoreBox):
        return Score(player, action.box)
    return TakeBonus(player)


@dataclass(frozen=True)
class TurnPlan:
    """One turn of ``table``'s policy from ``position``: points to come for scoring each roll
    now (252) and for every keep with 1 and 2 rolls left (462 each)."""

    table: Table
    position: Position
    score_now: FloatArray
    keep_1: FloatArray
    keep_2: FloatArray

    def best_keep(self, dice: Sequence[int], rolls_left: int) -> tuple[tuple[int, ...], float]:
        """The best keep of ``dice`` (all five: score now) and its points to come."""
        keeps, rows = keeps_of(tuple(sorted(check_dice(dice))))
        values = self.keep_values(rolls_left)[rows]
        best = int(np.argmax(values))
        return keeps[best], float(values[best])

    def keep_values(self, rolls_left: int) -> FloatArray:
        """The keep values for ``rolls_left`` (1 or 2)."""
        if rolls_left == 1:
            return self.keep_1
        if rolls_left == 2:
            return self.keep_2
        raise ValueError(f"keeps need 1 or 2 rolls left, not {rolls_left}")


def plan_turns(table: Table, cards: Sequence[Scorecard]) -> list[TurnPlan]:
    """The turn plans of ``cards``, in one batched evaluation."""
    positions = [position_of(table.rules, card) for card in cards]
    if not positions:
        return []
    group = np.array([p.group for p in positions], dtype=np.int64)
    upper = np.array([p.upper for p in positions], dtype=np.int64)
    own = np.asarray(table.values[group, upper], dtype=np.float64)
    turn = evaluate(
        table.rules, np.asarray(table.values), None, Columns(group, upper), own=own, keep_all=True
    )
    assert turn.score_now is not None
    assert turn.keep is not None
    score_now, (keep_1, keep_2) = turn.score_now[VALUE], turn.keep
    # Each plan gets copies of its columns: a column is a view, and a view keeps the whole
    # batch's arrays alive (32 x the plan's size in a batch of 32) while the memo holds it.
    return [
        TurnPlan(
            table,
            p,
            score_now[:, c].copy(),
            keep_1[VALUE, :, c].copy(),
            keep_2[VALUE, :, c].copy(),
        )
        for c, p in enumerate(positions)
    ]


MEMO_PLANS = 1024
"""Turn plans a process remembers, the most recently used, across ALL its tables (about 10 KiB
each: some 10 MiB). A plan serves the three decisions and the hints of one turn, and the first
turns of every game share their positions; beyond that a position seldom comes back, so a larger
memo holds memory (a process's RSS grew by 50 MiB an hour of play with 4,096) for few hits. One
budget, not one a table: each computer level plays from its own table (the medium and easy
levels' are derived from the optimal one), and with a budget per table a process's memory grew
for hours by up to three memos' worth, as slowly as the weaker levels' positions came (what the
chaos soak measured as memory that was not flat)."""

#: every plan in a table's memo, least recently used first: (id of the memo, key) -> the memo,
#: weakly (a table dropped is freed; an entry of a memo that is gone is skipped)
_RECENT: OrderedDict[tuple[int, tuple[int, int]], weakref.ref[PlanMemo]] = OrderedDict()
#: the memos are used by the event loop and by game reviews in worker threads
_MEMO_LOCK = threading.Lock()


def plan_key(table: Table, card: Scorecard) -> tuple[int, int]:
    """The key of ``card``'s turn in ``table``'s memo: its position."""
    at = position_of(table.rules, card)
    return (at.group, at.upper)


def _used(table: Table, key: tuple[int, int]) -> None:
    memo, recent = table.memo, (id(table.memo), key)
    with _MEMO_LOCK:  # (a game review in a worker thread may evict the plan meanwhile)
        if key in memo:
            memo.move_to_end(key)
        if recent in _RECENT:
            _RECENT.move_to_end(recent)


def _remember(table: Table, key: tuple[int, int], plan: TurnPlan) -> None:
    memo = table.memo
    with _MEMO_LOCK:
        memo[key] = plan
        # (a memo freed since may have left its id to this one: the entry is simply replaced)
        _RECENT[(id(memo), key)] = weakref.ref(memo)
        _RECENT.move_to_end((id(memo), key))
        while len(_RECENT) > MEMO_PLANS:  # the least recently used plan of any table goes
            (_, oldest), held_by = _RECENT.popitem(last=False)
            holder = held_by()
            if holder is not None:
                holder.pop(oldest, None)


def remembered_plans() -> int:
    """How many turn plans the process's tables hold (at most :data:`MEMO_PLANS`)."""
    with _MEMO_LOCK:
        return sum(1 for (_, key), held_by in _RECENT.items() if key in (held_by() or ()))


def plan_ahead(table: Table, cards: Sequence[Scorecard]) -> int:
    """Remember the turn plans of ``cards`` that the table's memo does not hold, computed in
    ONE batched evaluation (a plan alone costs about 20 times its share of a batch of 32);
    :func:`turn_plan` then finds them. Returns how many plans were computed."""
    memo = table.memo
    missing: dict[tuple[int, int], Scorecard] = {}
    for card in cards:
        key = plan_key(table, card)
        if key in memo:
            _used(table, key)
        else:
            missing.setdefault(key, card)
    plans = plan_turns(table, list(missing.values()))
    for key, plan in zip(missing, plans, strict=True):
        _remember(table, key, plan)
    return len(plans)


def turn_plan(table: Table, card: Scorecard) -> TurnPlan:
    """The plan of one card's turn (remembered per position in the table's memo)."""
    at = position_of(table.rules, card)
    key = (at.group, at.upper)
    memo = table.memo
    plan = memo.get(key)
    if isinstance(plan, TurnPlan):
        _used(table, key)
    else:
        plan = plan_turns(table, [card])[0]
        _remember(table, key, plan)
    return TurnPlan(plan.table, at, plan.score_now, plan.keep_1, plan.keep_2)


def hold_for(dice: Sequence[int], keep: tuple[int, ...]) -> frozenset[int]:
    """Die indexes of ``dice`` that show the faces of ``keep`` (the first ones of each face)."""
    wanted = list(keep)
    hold = []
    for index, face in enumerate(dice):
        if face in wanted:
            wanted.remove(face)
            hold.append(index)
    return frozenset(hold)


def keep_options(plan: TurnPlan, dice: Sequence[int], rolls_left: int) -> list[Option]:
    """Every distinct re-roll (keeps of 0..4 dice) with its expected final score."""
    faces = check_dice(dice)
    keeps, rows = keeps_of(tuple(sorted(faces)))
    values = plan.keep_values(rolls_left)[rows]
    return [
        Option(Reroll(keep, hold_for(faces, keep)), plan.position.banked + float(value))
        for keep, value in zip(keeps, values, strict=True)
        if len(keep) < len(faces)
    ]


def box_options(
    table: Table, card: Scorecard, dice: Sequence[int], at: Position | None = None
) -> list[Option]:
    """Every allowed box (and the bonus take, when allowed) with its expected final score.

    ``at`` is ``card``'s position, if the caller has it already."""
    faces = check_dice(dice)
    rules = table.rules
    options = rules.options()
    at = at or position_of(rules, card)
    bonus = YAHTZEE_BONUS if yahtzee_bonus_due(options, card, faces) else 0
    values = table.values
    found = []
    for preview in box_previews(options, card, faces):
        if not preview.allowed:
            continue
        index = rules.boxes.index(preview.box)
        group, upper = at.group | (1 << index), at.upper
        if index < 6:
            upper = min(UPPER_CAP, upper + preview.points)
        elif index == rules.yahtzee_box and rules.tracks_yahtzee_50 and preview.points:
            group |= 1 << rules.box_count  # the YAHTZEE box now holds 50
        future = float(values[group, upper])
        found.append(Option(ScoreBox(preview.box), at.banked + preview.points + bonus + future))
    if bonus_take_allowed(options, card, faces):
        future = float(values[at.group, at.upper])
        found.append(Option(TakeBonusAction(), at.banked + YAHTZEE_BONUS + future))
    return found


def rank_options(
    table: Table, card: Scorecard, dice: Sequence[int], rolls_left: int, top: int | None = 3
) -> list[Option]:
    """The options after a roll, best first (``top`` of them; all with ``None``): re-rolls
    while rolls are left, and the allowed boxes."""
    found = box_options(table, card, dice)
    if rolls_left > 0:
        found += keep_options(turn_plan(table, card), dice, rolls_left)
    found.sort(key=lambda o: -o.expected)
    return found if top is None else found[:top]


def best_keep(
    table: Table, card: Scorecard, dice: Sequence[int], rolls_left: int
) -> tuple[tuple[int, ...], float]:
    """The best dice to keep and the expected final score; keeping all five means "score now"
    (then ask :func:`best_box`)."""
    plan = turn_plan(table, card)
    keep, value = plan.best_keep(dice, rolls_left)
    return keep, plan.position.banked + value


def best_box(table: Table, card: Scorecard, dice: Sequence[int]) -> Option:
    """The best box (or the bonus take) for ``dice``, with the expected final score."""
    return max(box_options(table, card, dice), key=lambda o: o.expected)


def score_now_value(plan: TurnPlan, dice: Sequence[int]) -> float:
    """Expected final score of scoring ``dice`` in the best box (from the turn evaluation)."""
    return plan.position.banked + float(
        plan.score_now[INDEX[tuple(sorted(dice))] - ROLL_ROWS.start]
    )
