"""A room as the lobby lists it: its status and the summary kept in the store's lobby index
(the fields of ``protocol.messages.RoomSummary``, and ``ghost_at``, which is not on the wire).
Pure: no I/O."""

from __future__ import annotations

from typing import Any

from server import game
from server.domain.deadlines import ghost_at
from server.domain.room import RoomRecord

__all__ = ["status", "summary"]


def status(state: game.GameState) -> str:
    """``lobby``, ``playing`` or ``finished``."""
    if state.phase == game.Phase.LOBBY:
        return "lobby"
    if state.phase == game.Phase.FINISHED:
        return "finished"
    return "playing"


def summary(room_id: str, record: RoomRecord, grace_seconds: float = 0.0) -> dict[str, Any]:
    """The room as the lobby lists it (the fields of ``protocol.messages.RoomSummary``, and
    ``ghost_at``, :func:`ghost_at`, which is not on the wire)."""
    state = record.game
    players = [p.name for p in state.players]
    in_lobby = state.phase == game.Phase.LOBBY
    options = game.to_dict(state)["options"]
    return {
        "room": room_id,
        "status": status(state),
        "public": record.meta.public,
        "players": players,
        "seats": state.max_seats,
        "open_seats": max(0, state.max_seats - len(players)) if in_lobby else 0,
        "spectators": record.spectators,
        "options": options,
        # a correspondence clock exceeds the 1.3 bound of turn_seconds: it has a field of its own
        "turn_seconds": 0 if record.meta.correspondence else record.meta.turn_seconds,
        "correspondence": (
            {"seconds_per_move": record.meta.turn_seconds} if record.meta.correspondence else None
        ),
        "hints": record.meta.hints,
        "auto_start": record.meta.auto_start,
        "rated": record.meta.rated,
        "computer_delay_ms": record.meta.computer_delay_ms,
        "ghost_at": ghost_at(record, grace_seconds),
    }
