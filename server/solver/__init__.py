"""The optimal solitaire strategy, computed by our own code, and what is built on it.

Pure functions of a :class:`Table` (numpy arrays) and :mod:`server.game` values; only
:mod:`server.solver.cache` touches the disk and :mod:`server.solver.cli` the terminal.

Usage::

    rules = SolverRules.of(room_options)
    table = table_for(rules)                       # cached on disk, built if missing
    keep, expected = best_keep(table, card, dice, rolls_left)
    options = rank_options(table, card, dice, rolls_left)   # the hint: top 3
    action = decide(computer_player("hard", table), state, luck=random_float)
    review = analyse_game(table, events)           # post-game analysis

See :mod:`server.solver.turn` for the dynamic programme and :mod:`server.solver.build` for the
table.
"""

from .analysis import Choice, DecisionReview, GameAnalysis, PlayerReview, analyse_game
from .build import Start
from .cache import default_cache_dir, load_table, save_table, table_for
from .players import HARD_MISTAKE_RATE, ComputerPlayer, Level, choose, computer_player, decide
from .policy import (
    Action,
    Option,
    Reroll,
    ScoreBox,
    TakeBonusAction,
    TurnPlan,
    best_box,
    best_keep,
    box_options,
    hold_for,
    keep_options,
    plan_ahead,
    plan_turns,
    rank_options,
    to_command,
    turn_plan,
)
from .rules import ALL_RULES, SolverRules
from .simulate import Summary, play_games, play_room, summarise
from .table import TABLE_VERSION, Position, Table, build_table, position_of

__all__ = [
    "ALL_RULES",
    "HARD_MISTAKE_RATE",
    "TABLE_VERSION",
    "Action",
    "Choice",
    "ComputerPlayer",
    "DecisionReview",
    "GameAnalysis",
    "Level",
    "Option",
    "PlayerReview",
    "Position",
    "Reroll",
    "ScoreBox",
    "SolverRules",
    "Start",
    "Summary",
    "Table",
    "TakeBonusAction",
    "TurnPlan",
    "analyse_game",
    "best_box",
    "best_keep",
    "box_options",
    "build_table",
    "choose",
    "computer_player",
    "decide",
    "default_cache_dir",
    "hold_for",
    "keep_options",
    "load_table",
    "plan_ahead",
    "plan_turns",
    "play_games",
    "play_room",
    "position_of",
    "rank_options",
    "save_table",
    "summarise",
    "table_for",
    "to_command",
    "turn_plan",
]
