"""Seats the terminal keeps to come back to: tournament entries and correspondence games.

A seat token is what ``rejoin`` needs to take a seat back after the program ended. The web page
keeps its tokens in ``localStorage``; the terminal keeps the ones worth coming back to (an
entry of a duplicate tournament, a seat in a correspondence room) in ``seats.json`` beside the
player file (:func:`clients.players.default_player_file`), or ``$YAHTZEE_SEAT_FILE``: per server,
per room, readable by its owner only. A token is a secret: nothing here prints or logs one, and
:class:`KeptSeat`'s ``repr`` leaves it out.

A seat taken elsewhere (the web page, another machine) is not in this file: the terminal cannot
play it, only list it.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from clients.client import Client, CommandError
from clients.players import default_player_file, read_private_json, write_private_json
from protocol import RoomStatus

__all__ = [
    "KIND_CORRESPONDENCE",
    "KIND_TOURNAMENT",
    "KeptSeat",
    "default_seat_file",
    "forget_seat",
    "keep_correspondence_seat",
    "keep_seat",
    "kept_seat",
    "kept_seats",
    "seat_status",
]

KIND_TOURNAMENT = "tournament"
KIND_CORRESPONDENCE = "correspondence"

#: the newest seats kept per server; older ones are dropped (their games are long over)
MAX_SEATS_PER_SERVER = 200


@dataclass(frozen=True)
class KeptSeat:
    """A seat to come back to. ``token`` is a secret: keep it, never show it.

    ``tournament``, ``attempt`` and ``ends_ms`` describe a tournament entry (else empty/0).
    """

    room: str
    token: str
    kind: str
    tournament: str = ""
    attempt: int = 0
    ends_ms: int = 0

    def __repr__(self) -> str:  # never the token, not even in a traceback
        return f"KeptSeat(room={self.room!r}, kind={self.kind!r}, tournament={self.tournament!r})"


def default_seat_file(player_file: Path | None = None) -> Path:
    """``$YAHTZEE_SEAT_FILE``, else ``seats.json`` beside ``player_file`` (default: the
    terminal's player file, :func:`clients.players.default_player_file`)."""
    given = os.environ.get("YAHTZEE_SEAT_FILE")
    if given:
        return Path(given)
    return (player_file or default_player_file()).with_name("seats.json")


def _seat(room: str, fields: Any) -> KeptSeat | None:
    if not isinstance(fields, dict):
        return None
    try:
        return KeptSeat(
            room=room,
            token=str(fields["token"]),
            kind=str(fields["kind"]),
            tournament=str(fields.get("tournament", "")),
            attempt=int(fields.get("attempt", 0)),
            ends_ms=int(fields.get("ends_ms", 0)),
        )
    except (KeyError, TypeError, ValueError):
        return None


def kept_seats(path: Path, base_url: str) -> list[KeptSeat]:
    """The seats kept for the server at ``base_url``, oldest first."""
    rooms = read_private_json(path).get(base_url.rstrip("/"))
    if not isinstance(rooms, dict):
        return []
    seats = (_seat(room, fields) for room, fields in rooms.items())
    return [seat for seat in seats if seat is not None]


def kept_seat(path: Path, base_url: str, room: str) -> KeptSeat | None:
    """The seat kept in ``room`` on that server, or None."""
    return next((s for s in kept_seats(path, base_url) if s.room == room), None)


def keep_seat(path: Path, base_url: str, seat: KeptSeat) -> None:
    """Keep ``seat`` (replacing one kept in the same room), the newest last."""
    data = read_private_json(path)
    server = base_url.rstrip("/")
    rooms = data.get(server)
    rooms = dict(rooms) if isinstance(rooms, dict) else {}
    rooms.pop(seat.room, None)  # re-inserted last: dicts keep insertion order
    fields = asdict(seat)
    del fields["room"]
    rooms[seat.room] = fields
    data[server] = dict(list(rooms.items())[-MAX_SEATS_PER_SERVER:])
    write_private_json(path, data)


def forget_seat(path: Path, base_url: str, room: str) -> None:
    """Drop the seat kept in ``room`` (its game is over, or its token was refused)."""
    data = read_private_json(path)
    rooms = data.get(base_url.rstrip("/"))
    if isinstance(rooms, dict) and rooms.pop(room, None) is not None:
        write_private_json(path, data)


async def seat_status(ws_url: str, seat: KeptSeat) -> RoomStatus | None:
    """The status of the kept seat's room (``rejoin`` with its token, then closed), or None when
    the server refuses the seat (room expired, token refused). Closing is not leaving: the seat
    stays the player's. No answer from the server raises :class:`ConnectionFailedError` (a
    seat is never forgotten because the server was away)."""
    try:
        async with Client(ws_url) as client:
            await client.rejoin(seat.room, seat.token)
            model = await client.wait_for(lambda m: m.room == seat.room)
            return model.status
    except CommandError:
        return None


def keep_correspondence_seat(seat_file: Path, base_url: str, room: str, token: str) -> None:
    """Keep the seat token of a correspondence room to come back with ``turns --play``."""
    keep_seat(seat_file, base_url, KeptSeat(room=room, token=token, kind=KIND_CORRESPONDENCE))
