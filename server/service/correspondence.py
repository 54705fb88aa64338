"""Correspondence rooms (protocol 1.4) after each commit: each remembered player's list of
games and turns, and the reminders the webhook sends (``your_turn`` when a turn begins, and
``clock_running_out`` once, at 75% of the turn's clock).

Called by the commit's hints (:mod:`server.service.hints`) for correspondence rooms only, and
only does anything when the turn moved (a new player on turn, or a new deadline): a roll or a
hold costs nothing. Then it reads the room's seat hash once (which seat is which remembered
player) and runs one script per player and, with a webhook configured, queues the outbox entries.
None of it is on a command's path to its ack (the commit is done, its events delivered), and
PostgreSQL is never asked.

A delivery's id is derived from the room and the turn's deadline, so writing the same hints
twice queues nothing twice; the id is the receiver's idempotency key.

Each such update also wakes this process's lobby streams of those players (:class:`TurnNotices`,
``GET /lobby`` with a player token, SPEC.md 13.6), which then re-read their list.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import msgspec

from server import game
from server.domain import record_format, room
from server.storage.archived_game import identity_field
from server.storage.correspondence import CorrespondenceStore, IndexEntry
from server.storage.interface import Store

__all__ = [
    "CLOCK_REMINDER_SHARE",
    "Correspondence",
    "Reminder",
    "TurnEntry",
    "TurnNotices",
    "turn_of",
]

CLOCK_REMINDER_SHARE = 0.75
"""The share of a turn's clock after which ``clock_running_out`` is sent (once a turn)."""

YOUR_TURN = "your_turn"
CLOCK_RUNNING_OUT = "clock_running_out"


class Reminder(msgspec.Struct, frozen=True, kw_only=True):
    """The JSON body the webhook posts (README: "Correspondence play")."""

    id: str
    """The delivery's id, also sent as the ``Idempotency-Key`` header."""
    event: str
    """``your_turn`` or ``clock_running_out``."""
    player: str
    """The remembered player's id (``/players/{id}``)."""
    room: str
    room_player: str
    """The player's id in the room (``current_player`` in its snapshot)."""
    round: int
    deadline_ms: int
    """When the turn's clock runs out (Unix ms)."""
    created_ms: int
    """When the reminder was queued (Unix ms)."""


@dataclass(frozen=True, slots=True)
class TurnEntry:
    """One running correspondence game of a player, as ``GET /players/{id}/turns`` lists it."""

    room: str
    my_turn: bool
    deadline_ms: int | None
    round: int
    players: list[str]
    on_turn: str | None


def turn_of(record: room.RoomRecord) -> tuple[str | None, int | None]:
    """The player on turn and the turn's deadline (``(None, None)`` outside a game)."""
    if record.game.phase not in room.TURN_PHASES:
        return None, None
    return game.current_player(record.game), record.deadline_ms


def _running(record: room.RoomRecord, player: game.PlayerState) -> bool:
    return record.game.phase in room.TURN_PHASES and not player.forfeited


def _round(record: room.RoomRecord) -> int:
    """The round of the turn being played (0 outside a game)."""
    on_turn, _ = turn_of(record)
    seat = record.game.player(on_turn) if on_turn is not None else None
    return seat.card.filled_count + 1 if seat is not None else 0


class TurnNotices:
    """This process's wake-ups of the streams that show a player their turn list.

    A push, not a poll: the commit that moves a correspondence room's turn sets the events of
    its players' streams here. Only this process's commits are heard (no pub/sub channel per
    player: the room feed's sharded subscriptions are per room), so a stream also re-reads its
    list at a bounded interval, for turns moved by other processes."""

    def __init__(self) -> None:
        self._waiting: dict[str, set[asyncio.Event]] = {}

    @contextlib.contextmanager
    def listen(self, identity: str) -> Iterator[asyncio.Event]:
        """An event set whenever ``identity``'s list may have changed (while in the block)."""
        event = asyncio.Event()
        self._waiting.setdefault(identity, set()).add(event)
        try:
            yield event
        finally:
            waiting = self._waiting.get(identity, set())
            waiting.discard(event)
            if not waiting:
                self._waiting.pop(identity, None)

    def notify(self, identities: Iterable[str]) -> None:
        """Wake the streams of these players."""
        for identity in identities:
            for event in self._waiting.get(identity, ()):
                event.set()

    @property
    def listening(self) -> int:
        """How many streams listen (for tests and metrics)."""
        return sum(len(events) for events in self._waiting.values())


class Correspondence:
    """The index and reminders of correspondence rooms (see the module docstring).

    ``webhook``: whether reminders are queued (a webhook URL is configured)."""

    def __init__(self, store: Store, index: CorrespondenceStore, *, webhook: bool) -> None:
        self.store = store
        self.index = index
        self.webhook = webhook
        #: the lobby streams of this process waiting for a player's list to change
        self.notices = TurnNotices()

    async def after_commit(
        self, room_id: str, before: room.RoomRecord, after: room.RoomRecord, now: int
    ) -> None:
        """Update the players' index and queue reminders when the room's turn moved."""
        if not after.meta.correspondence:
            return
        forfeits = sum(p.forfeited for p in after.game.players)
        moved = (
            turn_of(before) != turn_of(after)
            or before.game.phase != after.game.phase
            or forfeits != sum(p.forfeited for p in before.game.players)  # someone left
        )
        if not moved:
            return
        fields = await self.store.seat_fields(room_id)
        identities = {
            p.player_id: fields[identity_field(p.player_id)]
            for p in (*before.game.players, *after.game.players)
            if identity_field(p.player_id) in fields
        }
        if not identities:
            return
        on_turn, deadline = turn_of(after)
        seated = {p.player_id: p for p in after.game.players}
        entries = []
        for player_id, identity in identities.items():
            seat = seated.get(player_id)
            running = seat is not None and _running(after, seat)
            entries.append(
                IndexEntry(identity, running, deadline if player_id == on_turn else None)
            )
        await self.index.index(room_id, entries, now)
        self.notices.notify(identities.values())
        if self.webhook and on_turn in identities and deadline is not None:
            await self._remind(room_id, after, on_turn, identities[on_turn], deadline, now)

    async def _remind(
        self,
        room_id: str,
        record: room.RoomRecord,
        room_player: str,
        identity: str,
        deadline: int,
        now: int,
    ) -> None:
        """Queue ``your_turn`` now and ``clock_running_out`` at 75% of the turn's clock."""
        began = deadline - record.meta.turn_seconds * 1000
        late = began + int(record.meta.turn_seconds * 1000 * CLOCK_REMINDER_SHARE)
        for event, at in ((YOUR_TURN, now), (CLOCK_RUNNING_OUT, late)):
            delivery_id = f"{event}:{room_id}:{room_player}:{deadline}"
            body = Reminder(
                id=delivery_id,
                event=event,
                player=identity,
                room=room_id,
                room_player=room_player,
                round=_round(record),
                deadline_ms=deadline,
                created_ms=now,
            )
            await self.index.enqueue(delivery_id, msgspec.json.encode(body), at)

    async def still_due(self, reminder: Reminder) -> bool:
        """Whether a reminder still stands when it is sent: the same player is on turn with
        the same deadline (a turn played meanwhile makes the late reminder moot)."""
        stored = await self.store.load(reminder.room)
        if stored is None:
            return False
        on_turn, deadline = turn_of(record_format.decode_record(stored.record))
        return (on_turn, deadline) == (reminder.room_player, reminder.deadline_ms)

    async def turns(self, identity: str) -> list[TurnEntry]:
        """The player's running correspondence games, their turns first (soonest deadline
        first), each checked against its room's record; rooms that are gone or over are
        dropped from the index on the way."""
        listed: list[TurnEntry] = []
        for room_id, _ in await self.index.games_of(identity):
            stored = await self.store.load(room_id)
            record = record_format.decode_record(stored.record) if stored is not None else None
            if record is None or record.game.phase not in room.TURN_PHASES:
                await self.index.forget(identity, room_id)
                continue
            fields = await self.store.seat_fields(room_id)
            mine = [  # a seat the player left (forfeited) no longer counts
                p.player_id
                for p in record.game.players
                if fields.get(identity_field(p.player_id)) == identity and not p.forfeited
            ]
            if not mine:
                await self.index.forget(identity, room_id)
                continue
            on_turn, deadline = turn_of(record)
            names = {p.player_id: p.name for p in record.game.players}
            listed.append(
                TurnEntry(
                    room=room_id,
                    my_turn=on_turn in mine,
                    deadline_ms=deadline,
                    round=_round(record),
                    players=[p.name for p in record.game.players],
                    on_turn=names.get(on_turn) if on_turn is not None else None,
                )
            )
        listed.sort(key=lambda e: (not e.my_turn, e.deadline_ms or 0))
        return listed
