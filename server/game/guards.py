"""Guards shared by the engine and the preview: each raises a typed error or returns quietly.

They run in the fixed order of :data:`server.game.transitions.GUARD_ORDER`.
"""

from __future__ import annotations

from collections.abc import Iterable

from .errors import (
    ERROR_CLASSES,
    InvalidDiceError,
    NoRollsLeftError,
    NotAPlayerError,
    NothingToRollError,
    NotYourTurnError,
)
from .state import DICE_COUNT, MAX_ROLLS, GameState, PlayerState, current_player
from .transitions import TRANSITIONS, Guard, Refused

__all__ = [
    "check_table",
    "plan_roll",
    "require_member",
    "require_rolls_left",
    "require_turn",
    "to_die_indexes",
]


def check_table(state: GameState, kind: str, guard: Guard) -> None:
    """Raise the refusal the transition table gives ``kind`` in this phase, if reported by
    ``guard``."""
    cell = TRANSITIONS[state.phase][kind]
    if isinstance(cell, Refused) and cell.guard is guard:
        raise ERROR_CLASSES[cell.code](
            f"{ERROR_CLASSES[cell.code].description} ({kind} in phase {state.phase.value})"
        )


def require_member(state: GameState, player: str) -> PlayerState:
    """The seat of ``player``; ``NotAPlayerError`` if unseated or forfeited."""
    record = state.player(player)
    if record is None:
        raise NotAPlayerError(f"{player!r} has no seat in this room")
    if record.forfeited:
        raise NotAPlayerError(f"{player!r} has left this game")
    return record


def require_turn(state: GameState, player: str) -> PlayerState:
    """The seat of ``player`` if it is their turn; else ``NotAPlayerError``/``NotYourTurnError``."""
    record = require_member(state, player)
    on_turn = current_player(state)
    if player != on_turn:
        raise NotYourTurnError(f"it is {on_turn!r}'s turn, not {player!r}'s")
    return record


def require_rolls_left(state: GameState) -> None:
    """``NoRollsLeftError`` after the third roll of the turn."""
    if state.rolls_used >= MAX_ROLLS:
        raise NoRollsLeftError()


_PLAIN_COLLECTIONS = frozenset({tuple, list, set, frozenset})
_INT_ONLY = frozenset({int})
_DIE_INDEXES = frozenset(range(DICE_COUNT))


def to_die_indexes(dice: Iterable[int] | None) -> frozenset[int]:
    """``dice`` as a frozenset of die indexes 0..4; ``InvalidDiceError`` otherwise."""
    if dice is None:
        return frozenset()
    # Checked in C (a few times a command): the usual collections skip the ABC's check, and
    # the types come first (True equals 1; a set cannot hold a list).
    if type(dice) not in _PLAIN_COLLECTIONS and (
        isinstance(dice, str | bytes) or not isinstance(dice, Iterable)
    ):
        raise InvalidDiceError(f"die indexes must be a set of integers, not {dice!r}")
    indexes = tuple(dice)
    if not _INT_ONLY.issuperset(map(type, indexes)) or not _DIE_INDEXES.issuperset(indexes):
        raise InvalidDiceError(f"die indexes must be 0..{DICE_COUNT - 1}, not {indexes!r}")
    return frozenset(indexes)


def plan_roll(
    state: GameState, keep: Iterable[int] | None
) -> tuple[tuple[int, ...], frozenset[int]]:
    """The indexes a roll would roll and the held set after it (rolls guard, no turn check)."""
    if state.rolls_used == 0:
        if to_die_indexes(keep):
            raise InvalidDiceError("the first roll of a turn rolls all five dice; keep nothing")
        return tuple(range(DICE_COUNT)), frozenset()
    held = state.held if keep is None else to_die_indexes(keep)
    indexes = tuple(i for i in range(DICE_COUNT) if i not in held)
    if not indexes:
        raise NothingToRollError()
    return indexes, held
