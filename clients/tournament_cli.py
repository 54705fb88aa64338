"""``yahtzee tournament``: list, show, standings, create, enter, play (resume) and verify.

The commands are thin: :mod:`clients.tournaments` does the work. ``enter`` and ``play`` act as
the remembered player of ``yahtzee play`` (:func:`clients.players.remembered_guest`, made the
first time) and play the entry in the terminal (:class:`clients.tui_seat.SeatApp`); the entry's
seat token is kept in the seat file (:mod:`clients.seats`, readable by its owner only) and never
printed. Exit status: 0 done, 1 refused or nothing to play (the reason printed), 2 no answer or
a bad request; ``verify`` exits 0 when the entry is verified and 1 when it is not.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from clients.client import ClientClosedError, ConnectionFailedError
from clients.players import PlayersError, default_player_file, load_guest, remembered_guest
from clients.seats import KeptSeat, default_seat_file
from clients.tournaments import (
    create,
    enter,
    fetch,
    fetch_standings,
    keep_entry,
    kept_entries,
    listing,
    unfinished_entry,
    verify,
)
from clients.verify import DEFAULT_URL, FetchError, http_url, service_url
from protocol.fairdice import Status

__all__ = ["parse_duration", "register"]

#: the server's refusals that are answers (exit 1), not failures to ask (exit 2)
REFUSALS = frozenset(
    {
        "already_entered",
        "tournament_closed",
        "tournament_full",
        "tournament_not_started",
        "tournament_not_found",
        "not_allowed",
    }
)
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


def parse_duration(text: str) -> int:
    """``90m``, ``2h``, ``3d`` or ``45s`` (a plain number: minutes) in seconds."""
    found = re.fullmatch(r"\s*(\d+)\s*([smhd]?)\s*", text.lower())
    if found is None or int(found.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"not a duration: {text!r} (try 90m, 2h or 3d)")
    return int(found.group(1)) * UNITS[found.group(2) or "m"]


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _print_tournament(t: Mapping[str, Any]) -> None:
    print(
        f"{t['tournament']}  {t['name']}  {t['status']}  entries {t['entries']}"
        f"  ends {_when(t['ends_ms'])}  commitment {t['dice_commitment'][:16]}..."
        + (f"  seed {t['seed']}" if t.get("seed") else "")
    )


def _print_standings(board: Mapping[str, Any]) -> None:
    title = "final" if board["final"] else "live"
    allowed = board["optimal_score"]
    print(f"{board['tournament']} ({title})" + (f"; the dice allowed {allowed}" if allowed else ""))
    for row in board["entries"]:
        extra = f"  accuracy {row['accuracy']:.0%}" if row.get("accuracy") is not None else ""
        print(f"{row['place']:>4}. {row['name']:<24} {row['score']:>4}{extra}")


# ------------------------------------------------------------------ reading


def _list(args: argparse.Namespace) -> int:
    for t in listing(http_url(args.url)):
        _print_tournament(t)
    return 0


def _show(args: argparse.Namespace) -> int:
    _print_tournament(fetch(http_url(args.url), args.tournament, invite_code=args.invite_code))
    return 0


def _standings(args: argparse.Namespace) -> int:
    base = http_url(args.url)
    _print_standings(fetch_standings(base, args.tournament, invite_code=args.invite_code))
    return 0


# ------------------------------------------------------------------ creating


def _create(args: argparse.Namespace) -> int:
    base = http_url(args.url)
    # The operator's token from the environment (never on the command line, where `ps` shows
    # it), else the remembered player's (servers that let players create tournaments).
    credential = os.environ.get("YAHTZEE_ADMIN_TOKEN")
    if not credential:
        guest = load_guest(default_player_file(), base)
        if guest is None:
            print("no credential: set YAHTZEE_ADMIN_TOKEN, or play once with `yahtzee play`")
            return 1
        credential = guest.token
    ends_ms = int(time.time() * 1000) + args.ends_in * 1000
    made = create(
        base,
        credential,
        name=args.name,
        ends_ms=ends_ms,
        attempts=args.attempts,
        public=not args.invite_only,
        rated=args.rated,
    )
    _print_tournament(made)
    if made.get("invite_code"):
        print(f"invite code {made['invite_code']} (shown this once: give it to the entrants)")
    return 0


# ------------------------------------------------------------------ entering and playing


def _play_seat(args: argparse.Namespace, seat: KeptSeat) -> int:
    from clients.tui_seat import SeatApp

    app = SeatApp(
        service_url(args.url), seat=seat, name=args.name, player_file=default_player_file()
    )
    app.run()
    return app.return_code or 0


def _enter(args: argparse.Namespace) -> int:
    base = http_url(args.url)
    guest = remembered_guest(default_player_file(), base, args.name)
    if guest is None:
        print(f"{base} keeps no players (no database?): a tournament needs a remembered player")
        return 1
    entry = enter(base, args.tournament, guest.token, invite_code=args.invite_code)
    seat = keep_entry(default_seat_file(), base, entry)
    print(
        f"entered {entry.tournament} as {guest.name}: room {entry.room}, attempt "
        f"{entry.attempt}, play until {_when(entry.ends_ms)}"
    )
    if args.no_play:
        print(f"play it with: yahtzee tournament play {entry.tournament}")
        return 0
    return _play_seat(args, seat)


def _resume(args: argparse.Namespace) -> int:
    base, seat_file = http_url(args.url), default_seat_file()
    # The kept entries know their end time: no request (nor invite code) to tell a closed one.
    kept = kept_entries(seat_file, base, args.tournament)
    if kept and max(seat.ends_ms for seat in kept) <= time.time() * 1000:
        print(f"{args.tournament} is closed: play is over "
              f"(yahtzee tournament standings {args.tournament})")  # fmt: skip
        return 1
    try:
        seat = asyncio.run(unfinished_entry(service_url(args.url), seat_file, args.tournament))
    except (ConnectionFailedError, ClientClosedError) as exc:
        print(f"yahtzee tournament: no answer from {base}: {exc}")
        return 2
    if seat is None:
        print(f"no unfinished entry of {args.tournament} kept here: enter it with "
              f"`yahtzee tournament enter {args.tournament}`")  # fmt: skip
        return 1
    print(f"back to {seat.room} (attempt {seat.attempt}), play until {_when(seat.ends_ms)}")
    return _play_seat(args, seat)


# ------------------------------------------------------------------ verifying


def _verify(args: argparse.Namespace) -> int:
    base = http_url(args.url)
    if args.invite_code is None:
        print("yahtzee tournament verify: --invite-code (from the final standings) is needed")
        return 2
    try:
        verdict = verify(
            base,
            args.tournament,
            args.room,
            args.invite_code,
            seed=args.seed,
            tournament_invite=args.tournament_invite,
        )
    except FetchError as exc:
        print(f"yahtzee tournament: room {args.room}: {exc}")
        return 2
    print(f"entry {args.room} of {args.tournament}")
    print("\n".join(verdict.describe()))
    return 0 if verdict.status is Status.VERIFIED else 1


def _run(args: argparse.Namespace) -> int:
    try:
        code: int = args.run(args)
    except PlayersError as exc:
        print(f"yahtzee tournament: {exc}")
        return 1 if exc.code in REFUSALS else 2
    return code


# ------------------------------------------------------------------ the command line


def _common(parser: argparse.ArgumentParser, *, tournament: bool = True) -> None:
    if tournament:
        parser.add_argument("tournament", metavar="ID", help="the tournament id")
    _url(parser)
    parser.add_argument("--invite-code", help="an invite-only tournament's code (a header)")


def _url(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url",
        default=os.environ.get("YAHTZEE_URL") or DEFAULT_URL,
        help="the service: http://host:port, ws://host:port/ws or host:port "
        "(default: $YAHTZEE_URL, else %(default)s)",
    )


def _player(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--name",
        default=os.environ.get("USER", "Player")[:24] or "Player",
        help="the remembered player's name the first time (as `yahtzee play --name`)",
    )


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``tournament list|show|standings|create|enter|play|verify`` to ``yahtzee``."""
    parser = subparsers.add_parser(
        "tournament",
        help="duplicate tournaments: list, show, standings, create, enter, play, verify",
        description="Duplicate tournaments (protocol 1.4): everyone plays a solitaire game on "
        "the same dice. `enter` and `play` act as the remembered player of `yahtzee play`.",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    _common(actions.add_parser("list", help="the public tournaments"), tournament=False)
    _common(actions.add_parser("show", help="one tournament"))
    _common(actions.add_parser("standings", help="its leaderboard (final after the end)"))
    made = actions.add_parser(
        "create",
        help="a new tournament (operator: $YAHTZEE_ADMIN_TOKEN; else the remembered player)",
    )
    made.add_argument("name")
    made.add_argument("--ends-in", type=parse_duration, default=86_400,
                      metavar="DURATION", help="90m, 2h, 3d... (default 1d)")  # fmt: skip
    made.add_argument("--attempts", type=int, default=1, help="entries per player (1-10)")
    made.add_argument("--invite-only", action="store_true", help="unlisted, with a code")
    made.add_argument("--rated", action="store_true", help="results move the ratings")
    _common(made, tournament=False)
    entering = actions.add_parser("enter", help="enter and play at once in the terminal")
    entering.add_argument("--no-play", action="store_true", help="enter, keep the seat, stop")
    _common(entering)
    _player(entering)
    resuming = actions.add_parser("play", aliases=["resume"], help="back to your entry")
    _common(resuming)
    _player(resuming)
    checking = actions.add_parser("verify", help="an entry's dice against the revealed seed")
    checking.add_argument("tournament", metavar="ID", help="the tournament id")
    _url(checking)
    checking.add_argument("--invite-code", help="the entry room's code (final standings)")
    checking.add_argument("--tournament-invite", help="an invite-only tournament's code")
    checking.add_argument("--room", required=True, help="the entry's room (final standings)")
    checking.add_argument("--seed", help="check against this seed instead of the served one")
    for name, run in (("list", _list), ("show", _show), ("standings", _standings),
                      ("create", _create), ("enter", _enter), ("play", _resume),
                      ("resume", _resume), ("verify", _verify)):  # fmt: skip
        actions.choices[name].set_defaults(run=run)
    parser.set_defaults(func=_run)
