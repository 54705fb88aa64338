"""Computer players of four levels, all the same policy code looking ahead to different tables.

A decision maximises the expected value of the table the player looks ahead to (see
:mod:`server.solver.policy`); the levels differ only in that table and in deliberate mistakes:

- ``easy``: a greedy player. Its table is all zeros, so it plays each turn for the most points
  in this turn alone (re-rolls included) and never thinks of the upper bonus or later turns.
- ``medium``: a one-turn lookahead with a heuristic value of the card that is blind to the
  upper total: what the open boxes are worth (the optimal table read at upper total 0) plus a
  linear guess of the chance of the upper bonus (three of each open upper face is par). It
  plays the boxes well and the upper section poorly.
- ``hard``: the optimal policy, but on a fraction of decisions (``HARD_MISTAKE_RATE``) it takes
  the second-best option.
- ``optimal``: the exact optimal policy.

A level that needs chance takes it as an input (``luck``, a float in [0, 1) drawn by the
caller), so decisions stay pure and replayable.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from server.game import GameState, Phase, Scorecard, current_player, rolls_left, scorecard
from server.game.scoring import UPPER_BONUS_THRESHOLD

from .policy import (
    Action,
    Reroll,
    TurnPlan,
    best_box,
    box_options,
    hold_for,
    keep_options,
    turn_plan,
)
from .table import Table
from .turn import UPPER_CAP

__all__ = [
    "HARD_MISTAKE_RATE",
    "ComputerPlayer",
    "Level",
    "choose",
    "computer_player",
    "decide",
]

HARD_MISTAKE_RATE = 0.04
"""Share of the ``hard`` level's decisions that take the second-best option."""

_BONUS_SPREAD = 20.0
"""Width (in upper points) over which the medium level's bonus guess goes from 0 to 1."""


class Level(StrEnum):
    """How well a computer player plays."""

    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"
    OPTIMAL = "optimal"


@dataclass(frozen=True)
class ComputerPlayer:
    """A level, the table its decisions look ahead to, and its rate of deliberate mistakes."""

    level: Level
    table: Table
    mistake_rate: float = 0.0


def _greedy_table(optimal: Table) -> Table:
    return Table(optimal.rules, np.zeros_like(np.asarray(optimal.values)))


def _heuristic_table(optimal: Table) -> Table:
    rules = optimal.rules
    values = np.asarray(optimal.values)
    nb = rules.box_count
    # What the open boxes are worth, read at upper total 0 (the heuristic ignores the total) ...
    boxes_worth = np.nan_to_num(values[:, 0], nan=0.0)
    masks = np.arange(rules.group_count) & ((1 << nb) - 1)
    open_upper = ((masks[:, None] >> np.arange(6)) & 1) == 0
    faces = np.arange(1, 7)
    # ... plus a linear guess of the upper bonus: three of each open upper face is par.
    expected_upper = np.arange(UPPER_CAP + 1)[None, :] + (open_upper @ (3 * faces))[:, None]
    chance = np.clip((expected_upper - UPPER_BONUS_THRESHOLD) / _BONUS_SPREAD + 0.5, 0.0, 1.0)
    chance[:, UPPER_CAP] = 1.0
    return Table(rules, boxes_worth[:, None] + rules.upper_bonus * chance)


def computer_player(level: Level | str, optimal: Table) -> ComputerPlayer:
    """The computer player of ``level`` for ``optimal``'s rule set."""
    level = Level(level)
    if level is Level.OPTIMAL:
        return ComputerPlayer(level, optimal)
    if level is Level.HARD:
        return ComputerPlayer(level, optimal, HARD_MISTAKE_RATE)
    if level is Level.MEDIUM:
        return ComputerPlayer(level, _heuristic_table(optimal))
    return ComputerPlayer(level, _greedy_table(optimal))


def choose(
    player: ComputerPlayer,
    card: Scorecard,
    dice: tuple[int, ...],
    left: int,
    luck: float,
    plan: TurnPlan | None = None,
) -> Action:
    """The player's action after a roll with ``left`` rolls left. ``luck`` in [0, 1) decides
    the deliberate mistakes; ``plan`` (the turn plan of ``card``) saves its evaluation."""
    table = player.table
    if luck < player.mistake_rate:
        options = box_options(table, card, dice)
        if left > 0:
            options += keep_options(plan or turn_plan(table, card), dice, left)
        options.sort(key=lambda o: -o.expected)
        return options[1 if len(options) > 1 else 0].action
    if left > 0:
        plan = plan or turn_plan(table, card)
        keep, _ = plan.best_keep(dice, left)
        if len(keep) < len(dice):
            return Reroll(keep, hold_for(dice, keep))
        return max(box_options(table, card, dice, plan.position), key=lambda o: o.expected).action
    return best_box(table, card, dice).action


def decide(player: ComputerPlayer, state: GameState, luck: float) -> Action:
    """The action of the player on turn in ``state`` (phase awaiting_roll or rolled)."""
    on_turn = current_player(state)
    if on_turn is None:
        raise ValueError(f"no turn in progress (phase {state.phase.value})")
    if state.phase is Phase.AWAITING_ROLL:
        return Reroll((), frozenset())
    return choose(player, scorecard(state, on_turn), state.dice, rolls_left(state), luck)
