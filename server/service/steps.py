"""The pure parts of a room's step that the service shares between its commands: the dice a
command needs, a room that starts by itself when full, computers that leave when every person
has left."""

from __future__ import annotations

import secrets

from server import game
from server.domain import room
from server.domain.dice import Draws
from server.domain.events import Occurred, occurred

__all__ = [
    "computers_leave_alone",
    "new_invite",
    "new_room_id",
    "starts_by_itself",
    "with_dice",
]


def starts_by_itself(record: room.RoomRecord, state: game.GameState) -> bool:
    """An ``auto_start`` room in the lobby whose seats are all taken, with a host."""
    return (
        record.meta.auto_start
        and state.phase == game.Phase.LOBBY
        and len(state.players) >= state.max_seats
        and state.host is not None
    )


def computers_leave_alone(
    state: game.GameState, events: list[Occurred]
) -> tuple[game.GameState, list[Occurred]]:
    """Once every person has left a game in progress, the computers leave too (the game
    ends): nobody would be playing against them."""
    playing = [p for p in state.players if not p.forfeited]
    started = state.phase not in (game.Phase.LOBBY, game.Phase.FINISHED)
    if not started or not playing or any(p.computer is None for p in playing):
        return state, events
    for seat in playing:
        if state.phase is game.Phase.FINISHED:
            break
        state, new = game.apply(state, game.Leave(seat.player_id))
        events = events + occurred(new, state)
    return state, events


def with_dice(state: game.GameState, command: game.Command, draw: Draws) -> game.Command:
    """The command with the randomness it needs: faces for a roll, a choice for a start."""
    if isinstance(command, game.Roll) and not command.faces:
        slots = game.dice_to_roll(state, command.keep)
        return game.Roll(command.player, draw.roll(state, slots), command.keep)
    if isinstance(command, game.Start):
        return game.Start(command.player, random_choice=secrets.randbelow(2**32))
    return command


def new_room_id() -> str:
    """A fresh random room id (8 characters of A-Z, a-z, 0-9)."""
    return secrets.token_urlsafe(6).replace("-", "x").replace("_", "y")


def new_invite() -> str:
    """A fresh invite code for a private room."""
    return secrets.token_urlsafe(12)
