"""What a finished room becomes in the archive: an :class:`ArchivedGame` with its seats, made by
:func:`archived_game` from the room's record, event log and seat fields (no I/O here;
:class:`~server.storage.archive.Archive` stores it)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import msgspec

from protocol import fairdice
from server import game
from server.domain import room
from server.domain.rating import Skill

__all__ = [
    "GAME_NO",
    "IDENTITY_FIELD",
    "ArchivedGame",
    "ArchivedSeat",
    "archived_game",
    "game_id",
    "identity_field",
    "to_ms",
    "to_utc",
]

GAME_NO = 1
"""A room holds one game (nothing follows ``finished``); the number keeps the archive's key
ready for rooms that would play again."""

IDENTITY_FIELD = "i:"
"""Seat-hash field prefix: ``i:<player id>`` -> the identity id that took the seat."""

_msgpack = msgspec.msgpack.Decoder()


def identity_field(player_id: str) -> str:
    return f"{IDENTITY_FIELD}{player_id}"


def game_id(room_id: str, game_no: int = GAME_NO) -> str:
    return f"{room_id}.{game_no}"


def to_utc(ms: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)


def to_ms(value: dt.datetime) -> int:
    return int(value.timestamp() * 1000)


@dataclass(frozen=True, slots=True)
class ArchivedSeat:
    seat: int
    player_id: str
    name: str
    computer: str | None
    identity_id: str | None
    place: int
    total: int
    forfeited: bool
    scores: list[int | None]
    yahtzee_bonuses: int
    upper_bonus: bool
    yahtzees: int
    accuracy: float | None = None
    skill: Skill | None = None
    """Skill and luck (None: not analysed, or a forfeited seat)."""


@dataclass(frozen=True, slots=True)
class ArchivedGame:
    room_id: str
    game_no: int
    outcome: str
    public: bool
    room_name: str
    options: dict[str, Any]
    seats: int
    turn_seconds: int
    hints: bool
    created_ms: int
    finished_ms: int
    dice_commitment: str
    server_seed: str | None
    player_seeds: dict[str, str]
    final_state: dict[str, Any]
    events: list[Any]
    players: list[ArchivedSeat] = field(default_factory=list)
    rated: bool = False
    """A rated room (protocol 1.4): a finished game moves its persons' result ratings."""

    @property
    def family(self) -> str:
        """The rule family ratings are kept per: ``yahtzee`` or ``yatzy``."""
        return str(self.options.get("rules", "yahtzee"))

    @property
    def id(self) -> str:
        return game_id(self.room_id, self.game_no)


def _yahtzees(card: game.Scorecard) -> int:
    boxes = game.boxes_for(card.rules)
    made = sum(
        1
        for box, score in zip(boxes, card.scores, strict=True)
        if box in (game.Box.YAHTZEE, game.Box.YATZY) and score
    )
    return made + card.yahtzee_bonuses


def archived_game(
    room_id: str,
    record: room.RoomRecord,
    log: Sequence[bytes],
    seat_fields: Mapping[str, str],
    finished_ms: int,
    accuracy: Mapping[str, float] | None = None,
    skills: Mapping[str, Skill] | None = None,
) -> ArchivedGame:
    """The archive's form of a room whose game ended (``log``: its events, MessagePack)."""
    state = record.game
    events = [_msgpack.decode(data) for data in log]
    ends = [i for i, e in enumerate(events) if isinstance(e, dict) and e.get("type") == "game_over"]
    over = bool(ends)
    if over:  # the game's log: what follows game over (disconnections) is the room's, not kept
        events = events[: ends[-1] + 1]
    people = [p for p in state.players if p.computer is None]
    abandoned = not over or not people or all(p.forfeited for p in people)
    standings = {s.player: s for s in game.standings(state)} if state.players else {}
    seats: list[ArchivedSeat] = []
    for index, p in enumerate(state.players):
        totals = p.card.totals()
        standing = standings.get(p.player_id)
        seats.append(
            ArchivedSeat(
                seat=index,
                player_id=p.player_id,
                name=p.name,
                computer=p.computer,
                identity_id=seat_fields.get(identity_field(p.player_id)) or None,
                place=standing.place if standing else index + 1,
                total=totals.grand,
                forfeited=p.forfeited,
                scores=list(p.card.scores),
                yahtzee_bonuses=p.card.yahtzee_bonuses,
                upper_bonus=totals.upper_bonus > 0,
                yahtzees=_yahtzees(p.card),
                accuracy=(accuracy or {}).get(p.player_id),
                skill=None if p.forfeited or not over else (skills or {}).get(p.player_id),
            )
        )
    seed = bytes.fromhex(record.meta.dice_seed)
    as_dict = game.to_dict(state)
    return ArchivedGame(
        room_id=room_id,
        game_no=GAME_NO,
        outcome="abandoned" if abandoned else "finished",
        public=record.meta.public,
        room_name=record.meta.name,
        options=as_dict["options"],
        seats=state.max_seats,
        turn_seconds=record.meta.turn_seconds,
        hints=record.meta.hints,
        created_ms=record.meta.created_ms,
        finished_ms=finished_ms,
        dice_commitment=fairdice.commitment(seed),
        # a tournament entry's seed is the tournament's: revealed by the tournament's close
        server_seed=seed.hex() if over and not record.meta.tournament else None,
        player_seeds=dict(record.seeds),
        final_state=as_dict,
        events=events,
        players=seats,
        rated=record.meta.rated,
    )
