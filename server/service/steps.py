"""The pure parts of a room's step that the service shares between its commands: engine
commands applied with the dice they need (drawn from the room's fair sequence), a room that
starts by itself when full, computers that leave when every person has left, and a new room's
record."""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from protocol.errors import ErrorCode
from server import game
from server.domain import room
from server.domain.dice import Dice, Draws, new_seed
from server.domain.events import Occurred, occurred
from server.service.outcomes import ServiceError
from server.settings import Settings

__all__ = [
    "apply_commands",
    "computers_leave_alone",
    "new_invite",
    "new_room_id",
    "new_room_record",
    "no_computers",
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


def apply_commands(
    record: room.RoomRecord, commands: Sequence[game.Command], dice: Dice | None, now: int
) -> tuple[room.RoomRecord, list[Occurred]]:
    """Apply engine commands to ``record``, finishing any roll-off; the new record and what
    happened. Dice are drawn from the room's fair sequence (``dice``: dice a test chose). The
    turn timer restarts when a turn began. In an ``auto_start`` room the command that takes
    the last seat also starts the game (as the host)."""
    state = record.game
    events: list[Occurred] = []
    turn_began = False
    draw = Draws(record, dice)
    commands = list(commands)
    while commands:
        command = commands.pop(0)
        state, new = game.apply(state, with_dice(state, command, draw))
        events += occurred(new, state)
        turn_began |= any(isinstance(e, game.TurnChanged | game.GameStarted) for e in new)
        while state.phase == game.Phase.ROLL_OFF:
            faces = {player: draw(5) for player in state.contenders}
            state, new = game.apply(state, game.RollOff(faces))
            events += occurred(new, state)
            turn_began |= any(isinstance(e, game.TurnChanged) for e in new)
        if not commands and starts_by_itself(record, state):
            assert state.host is not None
            commands.append(game.Start(state.host))
    state, events = computers_leave_alone(state, events)
    return room.after_game(record, state, turn_began, now, draws=draw.count), events


def new_room_record(
    settings: Settings,
    now: int,
    *,
    options: game.RuleOptions,
    seats: int,
    public: bool,
    turn_seconds: int,
    invite: str | None,
    hints: bool,
    computer_delay_ms: int | None,
    auto_start: bool,
    correspondence_seconds: int | None,
    dice_seed: str | None,
    rated: bool,
    tournament: tuple[str, str, int] | None,
) -> tuple[room.RoomRecord, str | None]:
    """A new room's record and its invite code (a private room gets one if none is given);
    the arguments are those of :meth:`server.service.rooms.GameService.create_room`. Refuses a
    correspondence clock beside a turn timer and a timer beyond the server's maximum."""
    if correspondence_seconds is not None:
        if turn_seconds:
            raise ServiceError(
                ErrorCode.INVALID_FIELD, "a correspondence room has no turn_seconds timer"
            )
        turn_seconds = correspondence_seconds
    elif not 0 <= turn_seconds <= settings.max_turn_seconds:
        raise ServiceError(
            "unsupported", f"turn_seconds must be 0..{settings.max_turn_seconds} here"
        )
    state = game.new_game(options, seats)  # raises GameError on bad seats/options
    if not public and invite is None:
        invite = new_invite()
    record = room.new_record(
        state,
        public=public,
        invite_hash=room.hash_secret(invite) if invite else None,
        turn_seconds=turn_seconds,
        now=now,
        dice_seed=tournament[1] if tournament else (dice_seed or new_seed()),
        hints=hints,
        computer_delay_ms=(
            settings.computer_delay_ms if computer_delay_ms is None else computer_delay_ms
        ),
        auto_start=auto_start,
        correspondence=correspondence_seconds is not None,
        rated=rated,
        tournament=tournament[0] if tournament else "",
        closes_ms=tournament[2] if tournament else None,
    )
    return record, invite


def no_computers() -> ServiceError:
    """A computer may not sit in a rated room: it has no rating and would make the result
    ratings measure the computer's level (README "Ratings")."""
    return ServiceError(ErrorCode.RATED_NO_COMPUTERS, "computers cannot sit in a rated room")
