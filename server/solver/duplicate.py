"""A computer player's solitaire game on duplicate dice (a tournament's dice function).

With duplicate dice every rolled slot's face depends only on (turn, throw, slot), so the game a
player would play on a tournament's dice is well defined whatever it holds: the optimal player's
total is the tournament's reference line ("the dice allowed 287"). Pure: the dice function is
an argument (the service passes :func:`protocol.duplicate.duplicate_roll` bound to the seed).
"""

from __future__ import annotations

from collections.abc import Callable

from server.game import (
    GameState,
    Join,
    Phase,
    Roll,
    Start,
    apply,
    dice_to_roll,
    new_game,
    rolls_left,
    scorecard,
    totals,
)

from .players import ComputerPlayer, choose
from .policy import Reroll, to_command

__all__ = ["DiceFunction", "play_on_dice", "total_on_dice"]

PLAYER = "reference"

DiceFunction = Callable[[int, int, tuple[int, ...]], tuple[int, ...]]
"""(turn from 1, throw from 1, rolled slots) -> their faces."""


def play_on_dice(player: ComputerPlayer, dice: DiceFunction, luck: float = 0.0) -> GameState:
    """The finished solitaire game ``player`` plays on ``dice`` (``luck``: the fixed draw that
    decides a mistake-making level's slips; the optimal level makes none)."""
    state = new_game(player.table.rules.options(), 1)
    state, _ = apply(state, Join(PLAYER, "Reference"))
    state, _ = apply(state, Start(PLAYER))
    while state.phase is not Phase.FINISHED:
        turn = scorecard(state, PLAYER).filled_count + 1
        state, _ = apply(state, Roll(PLAYER, dice(turn, 1, (0, 1, 2, 3, 4))))
        while state.phase is Phase.ROLLED:
            card = scorecard(state, PLAYER)
            action = choose(player, card, state.dice, rolls_left(state), luck)
            if isinstance(action, Reroll):
                slots = dice_to_roll(state, action.hold)
                faces = dice(turn, state.rolls_used + 1, slots)
                state, _ = apply(state, to_command(action, PLAYER, faces))
                continue
            state, _ = apply(state, to_command(action, PLAYER))
            break
    return state


def total_on_dice(player: ComputerPlayer, dice: DiceFunction) -> int:
    """The grand total of :func:`play_on_dice`."""
    return totals(play_on_dice(player, dice), PLAYER).grand
