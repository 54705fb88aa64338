"""When a room's clocks fire, as pure functions of its record (no clock: ``now`` is an argument).

A room wakes up for three reasons: its turn timer (``deadline_ms``), an absent player who
blocks it (``absent_ms``: the server plays for them, or removes an absent host from the lobby)
and a computer player's next move (``computer_ms``); :func:`wake_at` is the earliest. Also here:
how long a room's keys live (:func:`room_ttl`) and when a lobby becomes a ghost.
"""

from __future__ import annotations

from server import game
from server.domain.room import TURN_PHASES, RoomRecord

__all__ = [
    "absent_at",
    "computer_at",
    "computer_on_turn",
    "ghost_at",
    "room_ttl",
    "turn_began_at",
    "wake_at",
]


def absent_at(record: RoomRecord, grace_seconds: float) -> int | None:
    """When the server acts for an absent player (``None``: nobody absent blocks the room).

    In a game without a turn timer it is the player on turn; in the lobby it is a host who is
    away while another player waits. Never in a correspondence room: there everyone is away
    most of the time, and the clock alone moves the game on.
    """
    if (
        grace_seconds <= 0
        or not record.away_ms
        or record.meta.correspondence
        or record.meta.tournament  # a tournament entry waits for its player (until the end)
    ):
        return None
    state = record.game
    blocker: str | None = None
    if state.phase in TURN_PHASES and not record.meta.turn_seconds:
        blocker = game.current_player(state)
    elif state.phase == game.Phase.LOBBY:
        others = [p for p in state.players if p.player_id != state.host]
        if any(record.connected.get(p.player_id, False) for p in others):
            blocker = state.host
    if blocker is None or blocker not in record.away_ms:
        return None
    return int(record.away_ms[blocker] + grace_seconds * 1000)


def ghost_at(record: RoomRecord, grace_seconds: float) -> int | None:
    """When a room in the lobby becomes a ghost, left out of the lobby: every person seated
    has been disconnected for longer than the grace (``None``: not in the lobby, nobody
    seated, somebody connected, or the grace off)."""
    state = record.game
    if grace_seconds <= 0 or state.phase != game.Phase.LOBBY:
        return None
    people = [p.player_id for p in state.players if p.computer is None]
    if not people or any(record.connected.get(p, False) for p in people):
        return None
    last = max(record.away_ms.get(p, record.meta.created_ms) for p in people)
    return int(last + grace_seconds * 1000)


def computer_on_turn(state: game.GameState) -> tuple[str, str] | None:
    """The computer player on turn and its level, or ``None``."""
    # asked a few times at every commit and computer's move: the seat found in one pass
    if state.phase not in TURN_PHASES:
        return None
    current = state.order[state.turn]
    for seat in state.players:
        if seat.player_id == current:
            return None if seat.computer is None else (current, seat.computer)
    return None


def computer_at(record: RoomRecord, now: int) -> int | None:
    """When the computer on turn moves next: the time already set, else ``now`` plus the
    room's delay (a move clears the time, so the next one waits again); ``None`` when a person
    is on turn. A change that is not a move (a spectator count) does not push the time."""
    if computer_on_turn(record.game) is None:
        return None
    if record.computer_ms is not None:
        return record.computer_ms
    return now + record.meta.computer_delay_ms


def room_ttl(record: RoomRecord, idle_seconds: int, retention_seconds: int, now: int) -> int:
    """Seconds the room's keys live after this commit: the retention once the game is over,
    else the idle time; a correspondence room's clock is added to it, so that a room whose
    players take their time never expires while its game runs (each move, or the clock
    playing it, refreshes the TTL). A tournament entry lives until its tournament's close has
    read it, and then for the retention (its log is what ``yahtzee verify`` checks after the
    end time)."""
    if record.game.phase == game.Phase.FINISHED:
        ttl = retention_seconds
    elif record.meta.correspondence:
        ttl = idle_seconds + record.meta.turn_seconds
    else:
        ttl = idle_seconds
    if record.meta.closes_ms is not None:
        ttl = max(ttl, (record.meta.closes_ms - now) // 1000 + retention_seconds)
    return ttl


def turn_began_at(record: RoomRecord, now: int) -> int:
    """The clock reading that set the turn's deadline (``now`` when the room has none)."""
    if record.deadline_ms is None:
        return now
    return record.deadline_ms - record.meta.turn_seconds * 1000


def wake_at(record: RoomRecord) -> int | None:
    """The room's next deadline: its turn timer, its absent-player time or a computer's
    move."""
    times = [t for t in (record.deadline_ms, record.absent_ms, record.computer_ms) if t is not None]
    return min(times) if times else None
