"""The rules of the game as a pure state machine (no I/O, no randomness, no clocks).

Usage::

    state = new_game(RuleOptions(), max_seats=4)
    state, events = apply(state, Join("p1", "Ada"))
    state, events = apply(state, Start("p1"))
    state, events = apply(state, Roll("p1", faces=(3, 3, 5, 2, 6)))
    state, events = apply(state, Score("p1", Box.THREES))

Rule questions are decided by RULES.md; see :mod:`server.game.engine` for the theory of
operation and :mod:`server.game.transitions` for the phase x command table.
"""

from . import commands, engine, errors, events, options
from .boxes import YAHTZEE_BOXES, YATZY_BOXES, Box, boxes_for
from .commands import *  # noqa: F403
from .engine import *  # noqa: F403
from .errors import *  # noqa: F403
from .events import *  # noqa: F403
from .options import *  # noqa: F403
from .preview import (
    BoxPreview,
    RollView,
    best_auto_score,
    bonus_turn_available,
    joker_active,
    preview,
    roll_view,
    yahtzee_bonus_pending,
)
from .scorecard import Scorecard, Totals
from .scoring import qualifies, score_box
from .serialize import from_dict, to_dict
from .state import (
    MAX_ROLLS,
    MAX_SEATS,
    GameState,
    Phase,
    PlayerState,
    current_player,
    new_game,
    rolls_left,
    scorecard,
    standings,
    totals,
)
from .transitions import TRANSITIONS, Allowed, Guard, Refused, transition_table_markdown

# Everything public of commands, engine, errors, events and options (their ``__all__``), plus
# the names below from the other modules.
__all__ = [
    "MAX_ROLLS",
    "MAX_SEATS",
    "TRANSITIONS",
    "YAHTZEE_BOXES",
    "YATZY_BOXES",
    "Allowed",
    "Box",
    "BoxPreview",
    "GameState",
    "Guard",
    "Phase",
    "PlayerState",
    "Refused",
    "RollView",
    "Scorecard",
    "Totals",
    "best_auto_score",
    "bonus_turn_available",
    "boxes_for",
    "current_player",
    "from_dict",
    "joker_active",
    "new_game",
    "preview",
    "qualifies",
    "roll_view",
    "rolls_left",
    "score_box",
    "scorecard",
    "standings",
    "to_dict",
    "totals",
    "transition_table_markdown",
    "yahtzee_bonus_pending",
]
__all__ += commands.__all__
__all__ += engine.__all__
__all__ += errors.__all__
__all__ += events.__all__
__all__ += options.__all__
