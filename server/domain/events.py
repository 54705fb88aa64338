"""What one step of a room made happen, in the domain's own terms: each engine or room event
with the game state right after it. Steps (the service's commands, seats, upkeep) return these;
the boundary turns a commit's worth into protocol events once, numbered, at the commit
(:func:`server.boundary.translate.wire_events`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from server import game
from server.domain.room import RoomEvent

__all__ = ["Occurred", "occurred"]


class Occurred(NamedTuple):
    """One event and the game right after it (a ``rolled`` event's preview is of that state)."""

    event: game.Event | RoomEvent
    state: game.GameState


def occurred(events: Iterable[game.Event | RoomEvent], state: game.GameState) -> list[Occurred]:
    """``events`` that all happened before ``state``."""
    return [Occurred(event, state) for event in events]
