"""The transition table: phase x command -> allowed (with the possible next phases) or refused.

This is plain data. The engine's phase guard reads it, tests check every cell against real play,
and docs print it with :func:`transition_table_markdown`. A refusal names the guard that reports
it: most are reported by the phase guard, but ``must_roll_first`` is reported by the rolls guard,
after the turn check, so a player who is not on turn hears ``not_your_turn`` first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from .commands import COMMAND_TYPES
from .state import Phase

__all__ = [
    "COMMAND_KINDS",
    "GUARD_ORDER",
    "TRANSITIONS",
    "Allowed",
    "Cell",
    "Guard",
    "Refused",
    "transition_table_markdown",
]


class Guard(StrEnum):
    """The guards, run in this fixed order for every command."""

    PHASE = "phase"
    PLAYER = "player"
    ROLLS = "rolls"
    BOX = "box"


GUARD_ORDER: tuple[Guard, ...] = (Guard.PHASE, Guard.PLAYER, Guard.ROLLS, Guard.BOX)
"""phase (this table), player (seat, host, turn), rolls (roll count, dice), box (Score)."""

COMMAND_KINDS: tuple[str, ...] = tuple(c.kind for c in COMMAND_TYPES)
"""The table's columns: every command's ``kind``."""


@dataclass(frozen=True)
class Allowed:
    """The command may run in this phase (later guards may still refuse it); afterwards the game
    is in one of ``next_phases``."""

    next_phases: tuple[Phase, ...]


@dataclass(frozen=True)
class Refused:
    """The command is refused in this phase with error ``code``, reported by ``guard``."""

    code: str
    guard: Guard = Guard.PHASE


Cell = Allowed | Refused

_P = Phase
_NOT_STARTED = Refused("game_not_started")
_STARTED = Refused("game_already_started")
_WRONG = Refused("wrong_phase")
_OVER = Refused("game_over")
_ROLL_FIRST = Refused("must_roll_first", Guard.ROLLS)

TRANSITIONS: Mapping[Phase, Mapping[str, Cell]] = MappingProxyType(
    {
        _P.LOBBY: MappingProxyType(
            {
                "join": Allowed((_P.LOBBY,)),
                "leave": Allowed((_P.LOBBY,)),
                "start": Allowed((_P.ROLL_OFF, _P.AWAITING_ROLL)),
                "roll_off": _NOT_STARTED,
                "roll": _NOT_STARTED,
                "hold": _NOT_STARTED,
                "release": _NOT_STARTED,
                "score": _NOT_STARTED,
                "take_bonus": _NOT_STARTED,
            }
        ),
        _P.ROLL_OFF: MappingProxyType(
            {
                "join": _STARTED,
                "leave": Allowed((_P.ROLL_OFF, _P.AWAITING_ROLL)),
                "start": _STARTED,
                "roll_off": Allowed((_P.ROLL_OFF, _P.AWAITING_ROLL)),
                "roll": _WRONG,
                "hold": _WRONG,
                "release": _WRONG,
                "score": _WRONG,
                "take_bonus": _WRONG,
            }
        ),
        _P.AWAITING_ROLL: MappingProxyType(
            {
                "join": _STARTED,
                "leave": Allowed((_P.AWAITING_ROLL, _P.FINISHED)),
                "start": _STARTED,
                "roll_off": _WRONG,
                "roll": Allowed((_P.ROLLED,)),
                "hold": _ROLL_FIRST,
                "release": _ROLL_FIRST,
                "score": _ROLL_FIRST,
                "take_bonus": _ROLL_FIRST,
            }
        ),
        _P.ROLLED: MappingProxyType(
            {
                "join": _STARTED,
                "leave": Allowed((_P.ROLLED, _P.AWAITING_ROLL, _P.FINISHED)),
                "start": _STARTED,
                "roll_off": _WRONG,
                "roll": Allowed((_P.ROLLED,)),
                "hold": Allowed((_P.ROLLED,)),
                "release": Allowed((_P.ROLLED,)),
                "score": Allowed((_P.AWAITING_ROLL, _P.FINISHED)),
                "take_bonus": Allowed((_P.AWAITING_ROLL,)),
            }
        ),
        _P.FINISHED: MappingProxyType(dict.fromkeys(COMMAND_KINDS, _OVER)),
    }
)
"""``TRANSITIONS[phase][command_kind]`` for every phase and every command kind."""


def _cell_text(cell: Cell) -> str:
    if isinstance(cell, Allowed):
        return "-> " + ", ".join(p.value for p in cell.next_phases)
    suffix = "" if cell.guard is Guard.PHASE else f" ({cell.guard.value} guard)"
    return f"`{cell.code}`{suffix}"


def transition_table_markdown() -> str:
    """The table as Markdown: one row per phase, one column per command."""
    lines = [
        "| phase | " + " | ".join(COMMAND_KINDS) + " |",
        "|---" * (len(COMMAND_KINDS) + 1) + "|",
    ]
    for phase, row in TRANSITIONS.items():
        cells = " | ".join(_cell_text(row[kind]) for kind in COMMAND_KINDS)
        lines.append(f"| {phase.value} | {cells} |")
    return "\n".join(lines) + "\n"
