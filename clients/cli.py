"""The client subcommands of ``yahtzee``: ``play``, ``watch``, ``bot``, ``turns``, ``load``,
``verify``, ``tournament`` and ``bench`` (the last four and ``turns`` from their own modules).

``server/cli.py`` (the composition root) calls :func:`register` with its subparsers when this
module is importable; nothing here imports ``server``. Each subcommand sets ``func``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os

from clients.verify import service_url
from protocol import (
    Encoding,
    ExtraYahtzees,
    FirstPlayer,
    Joker,
    Level,
    RoomOptions,
    Rules,
    Toggle,
)

__all__ = ["register", "service_url"]

DEFAULT_URL = "ws://127.0.0.1:8000/ws"


def _add_url(parser: argparse.ArgumentParser) -> None:
    # Read when the parser is built (not at import), so $YAHTZEE_URL set by a test or a wrapper
    # script counts.
    parser.add_argument(
        "--url",
        type=service_url,
        default=service_url(os.environ.get("YAHTZEE_URL") or DEFAULT_URL),
        help="the service: ws://host:port/ws, http://host:port or host:port "
        "(default: $YAHTZEE_URL, else %(default)s)",
    )


def _add_room_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("rule options (when creating a room)")
    group.add_argument("--rules", choices=[r.value for r in Rules], default=Rules.YAHTZEE.value)
    group.add_argument(
        "--extra-yahtzees",
        choices=[v.value for v in ExtraYahtzees],
        default=ExtraYahtzees.ON.value,
    )
    group.add_argument("--joker", choices=[v.value for v in Joker], default=Joker.FORCED.value)
    group.add_argument(
        "--first-player",
        choices=[v.value for v in FirstPlayer],
        default=FirstPlayer.ROLL_OFF.value,
    )
    group.add_argument(
        "--upper-first", action="store_true", help="house variant: the six upper boxes first"
    )
    group.add_argument(
        "--bonus-turn",
        action="store_true",
        help="house variant: an extra Yahtzee may be taken as +100 without filling a box",
    )
    group.add_argument("--turn-seconds", type=int, default=0, help="0 = no turn timer")
    group.add_argument("--private", action="store_true", help="unlisted room with invite code")


def _options(args: argparse.Namespace) -> RoomOptions:
    on = {True: Toggle.ON, False: Toggle.OFF}
    return RoomOptions(
        rules=Rules(args.rules),
        extra_yahtzees=ExtraYahtzees(args.extra_yahtzees),
        joker=Joker(args.joker),
        first_player=FirstPlayer(args.first_player),
        upper_first=on[getattr(args, "upper_first", False)],
        bonus_turn=on[getattr(args, "bonus_turn", False)],
    )


def _bot(args: argparse.Namespace) -> int:
    from clients.bot import BotConfig, run_bots
    from clients.client import ClientClosedError, CommandError, ConnectionFailedError

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING)
    config = BotConfig(
        url=args.url,
        room=args.room,
        invite_code=args.invite,
        bots=args.bots,
        seats=args.seats,
        public=not args.private,
        turn_seconds=args.turn_seconds,
        options=_options(args),
        encoding=Encoding(args.encoding),
        delay=args.delay,
    )
    try:
        results = asyncio.run(run_bots(config))
    except (CommandError, ConnectionFailedError, ClientClosedError) as exc:
        print(f"yahtzee bot: {exc}")
        return 1
    except KeyboardInterrupt:
        return 130
    for standing in results:
        print(f"{standing.place}. {standing.name}: {standing.total}")
    return 0


def _play(args: argparse.Namespace) -> int:
    from clients.tui import ComputerGame, PlayApp, QuickGame

    quick = None
    if args.quick:
        if not 2 <= args.seats <= 4 or args.anonymous:
            print("yahtzee play: --quick takes --seats 2 to 4, and a remembered player")
            return 2
        rules, computers = Rules(args.rules), not args.no_computers
        quick = QuickGame(seats=args.seats, rules=rules, computers=computers)
    computer = None
    if args.computer is not None:
        if not 1 <= args.computers <= 7:
            print("yahtzee play: --computers takes 1 to 7")
            return 2
        computer = ComputerGame(
            level=Level(args.computer),
            computers=args.computers,
            options=_options(args),
            turn_seconds=args.turn_seconds,
            public=not args.private,
            hints=not args.no_hints,
        )
    from clients.players import default_player_file

    if args.correspondence is not None:
        return _play_correspondence(args)
    app = PlayApp(
        url=args.url,
        name=args.name,
        room=args.room,
        invite_code=args.invite,
        computer=computer,
        player_file=None if args.anonymous else default_player_file(),
        quick=quick,
    )
    app.run()
    return app.return_code or 0


def _play_correspondence(args: argparse.Namespace) -> int:
    """``play --correspondence HOURS``: a new correspondence room, its seat kept."""
    from clients.players import default_player_file
    from clients.tui_seat import CorrespondenceApp, CorrespondenceGame

    if not 1 <= args.correspondence <= 336 or not 1 <= args.seats <= 8 or args.anonymous:
        print("yahtzee play: --correspondence takes 1 to 336 hours, --seats 1 to 8, and a "
              "remembered player")  # fmt: skip
        return 2
    game = CorrespondenceGame(
        seats=args.seats, hours=args.correspondence, options=_options(args), public=not args.private
    )
    app = CorrespondenceApp(args.url, game=game, name=args.name, player_file=default_player_file())
    app.run()
    return app.return_code or 0


def _watch(args: argparse.Namespace) -> int:
    from clients.tui import WatchApp

    app = WatchApp(url=args.url, room=args.room, invite_code=args.invite)
    app.run()
    # Non-zero when the room could not be watched (no such room, bad invite, no server).
    return app.return_code or 0


def _load(args: argparse.Namespace) -> int:
    from clients.load import execute

    return execute(args)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``play``, ``watch``, ``bot``, ``turns``, ``load``, ``verify``, ``tournament`` and
    ``bench`` to ``yahtzee``."""
    play = subparsers.add_parser(
        "play",
        help="play in the terminal",
        description="Play Yahtzee in the terminal: a lobby to list, create, join or watch "
        "rooms, then the table.",
    )
    _add_url(play)
    play.add_argument("--name", default=os.environ.get("USER", "Player")[:32] or "Player")
    play.add_argument("--room", help="join this room at once")
    play.add_argument("--invite", help="invite code of a private room")
    play.add_argument(
        "--computer",
        nargs="?",
        const=Level.MEDIUM.value,
        choices=[v.value for v in Level],
        metavar="LEVEL",
        help="play the server's computer player(s) at once: a new room, joined and started "
        "(LEVEL: easy, medium, hard or optimal; default medium)",
    )
    play.add_argument(
        "--computers",
        type=int,
        default=1,
        metavar="N",
        help="with --computer: how many computer players (1-7, default 1)",
    )
    play.add_argument(
        "--no-hints", action="store_true", help="with --computer: a room without the advisor"
    )
    play.add_argument(
        "--quick",
        action="store_true",
        help="quick play: wait for people of a similar rating (a remembered player; --seats, "
        "--rules), computers filling the seats still open after the server's wait",
    )
    play.add_argument(
        "--seats", type=int, default=2, help="with --quick: 2 to 4; --correspondence: 1 to 8"
    )
    play.add_argument(
        "--correspondence",
        type=int,
        metavar="HOURS",
        help="create a correspondence room (protocol 1.4): HOURS per move (1-336), --seats, "
        "the rule options; it starts once every seat is taken; come back with `yahtzee turns "
        "--play ROOM`",
    )
    play.add_argument(
        "--no-computers", action="store_true", help="with --quick: wait for people only"
    )
    play.add_argument(
        "--anonymous",
        action="store_true",
        help="play without a remembered player (by default a guest is kept per server in "
        "$YAHTZEE_PLAYER_FILE or ~/.config/yahtzee/players.json, and the lobby lists its "
        "last games, when the server has a database)",
    )
    _add_room_options(play)
    play.set_defaults(func=_play)

    watch = subparsers.add_parser(
        "watch",
        help="watch a room live in the terminal",
        description="Watch a room live: scorecards, dice and holds, whose turn, spectators.",
    )
    watch.add_argument("room", metavar="ROOM")
    _add_url(watch)
    watch.add_argument("--invite", help="invite code of a private room")
    watch.set_defaults(func=_watch)

    bot = subparsers.add_parser(
        "bot",
        help="computer players (greedy strategy)",
        description="Seat computer players in a room (or create one) and play to the end. "
        "A bot that is host starts the game once every seat is taken.",
    )
    _add_url(bot)
    bot.add_argument("--room", help="join this room (default: create one)")
    bot.add_argument("--invite", help="invite code of a private room")
    bot.add_argument("-n", "--bots", type=int, default=1, help="bots to seat (default 1)")
    bot.add_argument(
        "--seats", type=int, help="seats of a created room (default: the number of bots)"
    )
    bot.add_argument(
        "--delay", type=float, default=0.6, help="seconds before each move (default 0.6)"
    )
    bot.add_argument(
        "--encoding", choices=[e.value for e in Encoding], default=Encoding.MSGPACK.value
    )
    bot.add_argument("-v", "--verbose", action="store_true")
    _add_room_options(bot)
    bot.set_defaults(func=_bot)

    from clients import correspondence

    correspondence.register(subparsers, _add_url)

    from clients.load import add_arguments as add_load_arguments

    load = subparsers.add_parser(
        "load",
        help="load generator and benchmark (loopback only by default)",
        description="Play concurrent bot games against a server, check every event stream "
        "for gaps and agreement, and print command latency percentiles and event rates.",
    )
    add_load_arguments(load)
    load.set_defaults(func=_load)

    from clients import verify as verify_command

    verify_command.register(subparsers)

    from clients import tournament_cli as tournament_command

    tournament_command.register(subparsers)

    from clients.bench import cli as bench_command

    bench_command.register(subparsers)
