"""Correspondence games in the terminal (protocol 1.4): ``yahtzee turns`` lists them, ``yahtzee
turns --play ROOM`` plays one.

The list is the remembered player's (``GET /players/{id}/turns``, SPEC 13.14), its turns first.
Playing takes the seat back with its token, which the terminal has only for the seats it took
itself: :func:`keep_correspondence_seat` keeps it (in :mod:`clients.seats`' file) when
``yahtzee play`` sits in a correspondence room, and a library user who joins one calls it with
the ``join`` result's token. A game joined elsewhere (the web page, another machine) is listed
as such: the terminal cannot play it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from clients.players import PlayersError, default_player_file, fetch_turns, load_guest
from clients.seats import default_seat_file, keep_correspondence_seat, kept_seat
from clients.verify import http_url, service_url

__all__ = ["keep_correspondence_seat", "register", "turn_line"]

ELSEWHERE = "(joined elsewhere: play it there)"


def turn_line(entry: dict[str, Any], now_ms: int, *, playable: bool = True) -> str:
    """``r-Slow1  YOUR TURN     23 h 59 min left  round 4  Ann, Bob``, marked when the terminal
    keeps no seat token for the game (``playable`` false)."""
    minutes = max(0, (entry["deadline_ms"] - now_ms) // 60_000) if entry["deadline_ms"] else 0
    days, hours = divmod(minutes // 60, 24)
    left = f"{days} d {hours} h" if days else f"{hours} h {minutes % 60} min"
    state = "YOUR TURN" if entry["my_turn"] else f"waiting: {entry['on_turn']}"
    line = (f"{entry['room']:<12} {state:<22} {left + ' left':<18} round {entry['round']:<3}"
            f" {', '.join(entry['players'])}")  # fmt: skip
    return line if playable else f"{line}  {ELSEWHERE}"


def _list(base: str, player: str, token: str) -> int:
    listed = fetch_turns(base, player, token)
    now, seat_file = listed["server_time_ms"], default_seat_file()
    for entry in listed["turns"] + listed["games"]:
        playable = kept_seat(seat_file, base, entry["room"]) is not None
        print(turn_line(entry, now, playable=playable))
    if not listed["turns"] and not listed["games"]:
        print("no correspondence game running")
    elif listed["turns"]:
        print("play one with: yahtzee turns --play ROOM")
    return 0


def _play(args: argparse.Namespace) -> int:
    from clients.tui_seat import SeatApp

    seat = kept_seat(default_seat_file(), http_url(args.url), args.play)
    if seat is None:
        print(f"no seat kept here in {args.play}: a game joined elsewhere is played there")
        return 1
    app = SeatApp(service_url(args.url), seat=seat, player_file=default_player_file())
    app.run()
    return app.return_code or 0


def _turns(args: argparse.Namespace) -> int:
    """List the remembered player's correspondence games (their turns first), or play one."""
    if args.play:
        return _play(args)
    base = http_url(args.url)
    guest = load_guest(default_player_file(), base)
    if guest is None:
        print(f"no remembered player for {base}: play once with `yahtzee play` first")
        return 1
    try:
        return _list(base, guest.player, guest.token)
    except PlayersError as exc:
        print(f"{exc.code}: {exc}")
        return 1


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    add_url: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Add ``turns`` to ``yahtzee`` (``add_url``: the client commands' ``--url`` option)."""
    turns = subparsers.add_parser(
        "turns",
        help="your correspondence games and whose turn it is; play one",
        description="List the remembered player's running correspondence games (protocol "
        "1.4), those waiting for your move first, with the time left on each clock; "
        "--play ROOM plays one in the terminal (a game the terminal joined: games joined "
        "elsewhere are marked, their seat token is not here).",
    )
    add_url(turns)
    turns.add_argument("--play", metavar="ROOM", help="play this correspondence game")
    turns.set_defaults(func=_turns)
