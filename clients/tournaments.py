"""Duplicate tournaments over HTTP (protocol 1.4, SPEC.md 13.18-13.22), standard library only.

Every entrant of a tournament plays a solitaire game on the same dice. :func:`enter` (with a
remembered player's token, :mod:`clients.players`) returns the entry's room and a seat token:
play it with :class:`clients.client.Client` (``await client.rejoin(entry.room, entry.token)``)
like any room, stop and come back until the end time. :func:`fetch_standings` reads the live
leaderboard; once the tournament is over it is final, with every entry's room and invite code,
its accuracy and the optimal player's total on the same dice, and :func:`verify` checks an entry's
dice against the revealed seed.

A terminal keeps its entries' seats (:func:`keep_entry`, in :mod:`clients.seats`' file, readable
by its owner only) and comes back to the newest one not played to the end with
:func:`unfinished_entry`.

The HTTP functions block (``urllib``): call them from asyncio code with ``asyncio.to_thread``.
Refusals raise :class:`clients.players.PlayersError` with the server's code
(``tournament_not_found``, ``already_entered``, ``tournament_closed``, ...).
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clients.players import _quote, _request
from clients.seats import KIND_TOURNAMENT, KeptSeat, forget_seat, keep_seat, kept_seats, seat_status
from clients.verify import fetch_events, http_url, verify_entry
from protocol import RoomStatus
from protocol.fairdice import Verdict

__all__ = [
    "Entry",
    "create",
    "enter",
    "fetch",
    "fetch_standings",
    "keep_entry",
    "kept_entries",
    "listing",
    "unfinished_entry",
    "verify",
    "watch_entry",
]


@dataclass(frozen=True)
class Entry:
    """An entry: its room and the seat token (a secret: keep it, never show it)."""

    tournament: str
    room: str
    player: str
    token: str
    attempt: int
    dice_commitment: str
    ends_ms: int

    def __repr__(self) -> str:  # never the token, not even in a traceback
        return f"Entry(tournament={self.tournament!r}, room={self.room!r})"


def create(base_url: str, credential: str, **spec: Any) -> dict[str, Any]:
    """``POST /tournaments`` with ``spec`` (``name``, ``ends_ms``, ``options``, ``starts_ms``,
    ``entry_limit``, ``public``, ``attempts``, ``rated``); ``credential``: the operator's admin
    token, or a player token where players may create tournaments."""
    answer: dict[str, Any] = _request(base_url, "POST", "/tournaments", token=credential, body=spec)
    return answer


def listing(base_url: str) -> list[dict[str, Any]]:
    """``GET /tournaments``: the public tournaments, soonest end first."""
    answer = _request(base_url, "GET", "/tournaments")
    return list(answer["tournaments"])


def fetch(base_url: str, tournament: str, *, invite_code: str | None = None) -> dict[str, Any]:
    """``GET /tournaments/{id}``: its commitment, and its seed once it is over."""
    path = f"/tournaments/{_quote(tournament)}"
    answer: dict[str, Any] = _request(base_url, "GET", path, invite_code=invite_code)
    return answer


def enter(
    base_url: str, tournament: str, player_token: str, *, invite_code: str | None = None
) -> Entry:
    """``POST /tournaments/{id}/entries`` as the player of ``player_token``."""
    path = f"/tournaments/{_quote(tournament)}/entries"
    answer = _request(base_url, "POST", path, token=player_token, invite_code=invite_code)
    return Entry(
        tournament=answer["tournament"],
        room=answer["room"],
        player=answer["player"],
        token=answer["token"],
        attempt=answer["attempt"],
        dice_commitment=answer["dice_commitment"],
        ends_ms=answer["ends_ms"],
    )


def fetch_standings(
    base_url: str, tournament: str, *, limit: int = 100, invite_code: str | None = None
) -> dict[str, Any]:
    """``GET /tournaments/{id}/standings``: best first; ``final`` once the results are
    archived (then with rooms, invite codes, accuracy and ``optimal_score``)."""
    query = urllib.parse.urlencode({"limit": limit})
    path = f"/tournaments/{_quote(tournament)}/standings?{query}"
    answer: dict[str, Any] = _request(base_url, "GET", path, invite_code=invite_code)
    return answer


def verify(
    base_url: str,
    tournament: str,
    room: str,
    invite_code: str,
    *,
    seed: str | None = None,
    tournament_invite: str | None = None,
) -> Verdict:
    """The verdict on one entry (``invite_code``: the room's, from the final standings): every
    die recomputed from the tournament's revealed seed (or ``seed``); ``unverifiable`` before
    the end time. ``tournament_invite``: the code of an invite-only tournament."""
    about = fetch(base_url, tournament, invite_code=tournament_invite)
    return verify_entry(fetch_events(base_url, room, invite_code=invite_code), about, seed)


def keep_entry(seat_file: Path, base_url: str, entry: Entry) -> KeptSeat:
    """Keep the entry's seat in ``seat_file`` (for the server at ``base_url``) to come back to."""
    seat = KeptSeat(
        room=entry.room,
        token=entry.token,
        kind=KIND_TOURNAMENT,
        tournament=entry.tournament,
        attempt=entry.attempt,
        ends_ms=entry.ends_ms,
    )
    keep_seat(seat_file, base_url, seat)
    return seat


def kept_entries(seat_file: Path, base_url: str, tournament: str) -> list[KeptSeat]:
    """The kept entries of ``tournament`` on that server, the newest first."""
    seats = kept_seats(seat_file, base_url)
    return [s for s in reversed(seats) if s.kind == KIND_TOURNAMENT and s.tournament == tournament]


async def unfinished_entry(ws_url: str, seat_file: Path, tournament: str) -> KeptSeat | None:
    """The newest kept entry of ``tournament`` whose game is not over yet, or None. Entries
    played to the end, or whose seat the server no longer knows, are forgotten on the way."""
    base = http_url(ws_url)
    for seat in kept_entries(seat_file, base, tournament):
        status = await seat_status(ws_url, seat)
        if status is not None and status is not RoomStatus.FINISHED:
            return seat
        forget_seat(seat_file, base, seat.room)
    return None


def watch_entry(
    base_url: str,
    tournament: str,
    room: str,
    *,
    after: int = 0,
    invite_code: str | None = None,
) -> list[dict[str, Any]]:
    """Every event of entry ``room`` after seq ``after`` that may be shown now
    (``GET /tournaments/{id}/entries/{room}/events``, SPEC.md 13.23, all its pages): while the
    tournament is open, those committed at least its ``watch_delay_seconds`` ago (refused with
    ``watch_not_allowed`` when it sets none); after its end, every one. To follow the entry,
    ask again later with ``after`` = the last ``seq`` seen. ``invite_code``: the tournament's."""
    events: list[dict[str, Any]] = []
    base = f"/tournaments/{_quote(tournament)}/entries/{_quote(room)}/events"
    while True:
        path = f"{base}?{urllib.parse.urlencode({'after': after})}"
        page = _request(base_url, "GET", path, invite_code=invite_code)
        events.extend(page["events"])
        if page["next_after"] is None:
            return events
        after = page["next_after"]
