"""Duplicate tournaments over HTTP (protocol 1.4, SPEC.md 13.18-13.22), standard library only.

Every entrant of a tournament plays a solitaire game on the same dice. :func:`enter` (with a
remembered player's token, :mod:`clients.players`) returns the entry's room and a seat token:
play it with :class:`clients.client.Client` (``await client.rejoin(entry.room, entry.token)``)
like any room, stop and come back until the end time. :func:`fetch_standings` reads the live
leaderboard; once the tournament is over it is final, with every entry's room and invite code,
its accuracy and the optimal player's total on the same dice, and :func:`verify` checks an entry's
dice against the revealed seed.

The functions block (``urllib``): call them from asyncio code with ``asyncio.to_thread``.
Refusals raise :class:`clients.players.PlayersError` with the server's code
(``tournament_not_found``, ``already_entered``, ``tournament_closed``, ...).
"""

from __future__ import annotations

import argparse
import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from clients.players import PlayersError, _quote, _request
from clients.verify import DEFAULT_URL, fetch_events, http_url, verify_entry
from protocol.fairdice import Verdict

__all__ = [
    "Entry",
    "create",
    "enter",
    "fetch",
    "fetch_standings",
    "listing",
    "register",
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
    base_url: str, tournament: str, room: str, invite_code: str, *, seed: str | None = None
) -> Verdict:
    """The verdict on one entry: every die recomputed from the tournament's revealed seed (or
    ``seed``); ``unverifiable`` before the end time."""
    about = fetch(base_url, tournament)
    return verify_entry(fetch_events(base_url, room, invite_code=invite_code), about, seed)


# ------------------------------------------------------------------ yahtzee tournament


def _print_tournament(t: Mapping[str, Any]) -> None:
    print(
        f"{t['tournament']}  {t['name']}  {t['status']}  entries {t['entries']}"
        f"  ends {t['ends_ms']}  commitment {t['dice_commitment'][:16]}..."
        + (f"  seed {t['seed']}" if t.get("seed") else "")
    )


def _run_command(args: argparse.Namespace) -> int:
    base = http_url(args.url)
    try:
        if args.action == "list":
            for t in listing(base):
                _print_tournament(t)
        elif args.action == "show":
            _print_tournament(fetch(base, args.tournament, invite_code=args.invite_code))
        else:
            board = fetch_standings(base, args.tournament, invite_code=args.invite_code)
            title = "final" if board["final"] else "live"
            print(f"{board['tournament']} ({title}); the dice allowed {board['optimal_score']}")
            for row in board["entries"]:
                extra = f"  accuracy {row['accuracy']:.0%}" if row.get("accuracy") else ""
                print(f"{row['place']:>4}. {row['name']:<24} {row['score']:>4}{extra}")
    except PlayersError as exc:
        print(f"yahtzee tournament: {exc}")
        return 2
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``tournament list|show ID|standings ID`` to the ``yahtzee`` command line."""
    parser = subparsers.add_parser(
        "tournament",
        help="duplicate tournaments: list, show one, its standings",
        description="Read the server's duplicate tournaments (protocol 1.4). Enter one from a "
        "client that holds a player token (clients/tournaments.py: enter).",
    )
    parser.add_argument("action", choices=("list", "show", "standings"))
    parser.add_argument("tournament", nargs="?", help="the tournament id (show, standings)")
    parser.add_argument("--url", default=os.environ.get("YAHTZEE_URL") or DEFAULT_URL)
    parser.add_argument("--invite-code", help="an invite-only tournament's code (a header)")
    parser.set_defaults(func=_run_command)


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
