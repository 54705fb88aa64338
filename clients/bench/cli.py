"""The options of ``yahtzee bench`` and its entry point (registered by :mod:`clients.cli`)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from clients.bench.ccu import CrowdOptions
from clients.bench.crowd import ThinkTime
from clients.bench.pacing import run_generator
from clients.bench.plot import PlotUnavailableError, plot
from clients.bench.runner import Options, run
from protocol import Encoding, Level

__all__ = ["add_arguments", "execute", "options_from", "register"]


def _rates(text: str) -> list[float]:
    return [float(part) for part in text.split(",") if part.strip()]


def _sizes(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def _think(text: str) -> ThinkTime:
    low, _, high = text.partition(",")
    think = ThinkTime(float(low), float(high or low))
    if not 0 <= think.low <= think.high:
        raise argparse.ArgumentTypeError("--think LOW,HIGH with 0 <= LOW <= HIGH")
    return think


def add_arguments(parser: argparse.ArgumentParser) -> None:
    shape = parser.add_argument_group("the standard scenario: R rooms x P players + S spectators")
    shape.add_argument("--rooms", type=int, default=20, help="rooms (20)")
    shape.add_argument("--players", type=int, default=4, help="players per room (4)")
    shape.add_argument("--room-spectators", type=int, default=2, help="spectators per room (2)")
    parser.add_argument(
        "--encoding", choices=[e.value for e in Encoding], default=Encoding.MSGPACK.value
    )
    parser.add_argument(
        "--workers", type=int, default=1,
        help="game server processes (1); several run on one embedded Valkey, each on its own "
        "port, and room i lives on process i mod N (the bare server splits its rooms the same way)",
    )  # fmt: skip
    parser.add_argument(
        "--spread", action="store_true",
        help="with several processes, each room's connections take them in turn (every event "
        "crosses pub/sub) instead of a room living on one process",
    )  # fmt: skip
    parser.add_argument(
        "--redis-cluster", action="store_true",
        help="run the game server on an embedded Redis Cluster (3 masters, a replica each, as "
        "`.ci/dev.py cluster` does); --workers is then the number of server processes, each on "
        "its own port",
    )  # fmt: skip
    parser.add_argument("--rounds", type=int, default=3, help="closed-loop A/B round pairs (3)")
    parser.add_argument("--round-seconds", type=float, default=5.0, help="seconds a round (5)")
    parser.add_argument(
        "--rates",
        type=_rates,
        default=[],
        help="open-loop offered rates, commands/s, comma-separated"
        " (default: 10,25,50,75 %% of the bare server's closed-loop rate)",
    )
    parser.add_argument("--heartbeat", type=float, default=20.0, help="server ping interval (20)")
    scenario = parser.add_argument_group("other scenarios")
    scenario.add_argument(
        "--idle-connections", type=int, default=0, metavar="N",
        help="N idle connections to one process of each server: RSS per connection",
    )  # fmt: skip
    scenario.add_argument(
        "--spectators", type=int, default=0, metavar="N",
        help="one room of 4 players and N spectators: delivery percentiles",
    )  # fmt: skip
    people = parser.add_argument_group(
        "players at human pace (a ramp; see BENCHMARKS-METHOD.md): only the game server is started"
    )
    people.add_argument(
        "--ccu", type=_sizes, default=[], metavar="N1,N2,...",
        help="concurrent players: mixed rooms (2-4 people, some 1 person + computers, "
        "spectators in busy rooms, a lobby stream per 100 users) ramped to N1, N2, ... users",
    )  # fmt: skip
    people.add_argument(
        "--vs-computer", type=_sizes, default=[], metavar="R1,R2,...",
        help="rooms of 1 person + 3 computers ramped to R1, R2, ... rooms: computer lateness",
    )  # fmt: skip
    people.add_argument("--step-seconds", type=float, default=30.0,
                        help="measured seconds per step (30)")  # fmt: skip
    people.add_argument("--warmup-seconds", type=float, default=5.0,
                        help="seconds from opening a step's rooms to measuring (5)")  # fmt: skip
    people.add_argument(
        "--think", type=_think, default=ThinkTime(), metavar="LOW,HIGH",
        help="a person's pause before each command, uniform in seconds (2,4: a turn of 10-20 s)",
    )  # fmt: skip
    people.add_argument("--computer-level", choices=[lv.value for lv in Level],
                        default=Level.HARD.value, help="computers' level (hard)")  # fmt: skip
    people.add_argument("--computer-delay-ms", type=int, default=900,
                        help="ms before each computer move (900, as the server)")  # fmt: skip
    people.add_argument(
        "--drivers", type=int, default=1, metavar="N",
        help="load-generator processes (1): this one and N - 1 children, rooms dealt in turn",
    )  # fmt: skip
    people.add_argument(
        "--pin", action="store_true",
        help="server processes on CPU 0, Valkey and the bench on CPU 1 (sched_setaffinity)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--plot", type=Path, metavar="FILE", help="PNG of latency against load")
    parser.add_argument("--quiet", action="store_true", help="no progress line on stderr")


def options_from(args: argparse.Namespace) -> Options:
    opts = Options(
        rooms=args.rooms,
        players=args.players,
        room_spectators=args.room_spectators,
        encoding=Encoding(args.encoding),
        workers=args.workers,
        rounds=args.rounds,
        round_seconds=args.round_seconds,
        rates=list(args.rates),
        idle_connections=args.idle_connections,
        heartbeat=args.heartbeat,
        progress=not args.quiet,
        redis_cluster=args.redis_cluster,
        spread=args.spread,
    )
    if args.ccu or args.vs_computer:
        opts.crowd = CrowdOptions(
            steps=list(args.ccu or args.vs_computer),
            step_seconds=args.step_seconds,
            warmup_seconds=args.warmup_seconds,
            think=args.think,
            level=Level(args.computer_level),
            computer_delay_ms=args.computer_delay_ms,
            pin=args.pin,
            encoding=opts.encoding,
            drivers=args.drivers,
        )
        opts.crowd_kind = "ccu" if args.ccu else "vs_computer"
        if args.ccu and args.vs_computer:
            raise SystemExit("yahtzee bench: --ccu or --vs-computer, one at a time")
        if min(opts.crowd.steps) < 1 or args.step_seconds <= 0 or args.drivers < 1:
            raise SystemExit("yahtzee bench: steps >= 1, --step-seconds > 0, --drivers >= 1")
    if args.spectators:
        opts.rooms, opts.players, opts.room_spectators = 1, 4, args.spectators
    if min(opts.rooms, opts.players, opts.rounds) < 1 or opts.round_seconds <= 0:
        raise SystemExit("yahtzee bench: --rooms, --players, --rounds >= 1, --round-seconds > 0")
    return opts


def execute(args: argparse.Namespace) -> int:
    """Run the bench; exit code 0 only when every stream verified and nothing failed."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    logging.getLogger("yahtzee.client").setLevel(logging.ERROR)
    opts = options_from(args)
    if args.plot is not None:
        # Fail before minutes of measuring, not after.
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            print(PlotUnavailableError.__doc__, file=sys.stderr)
            raise SystemExit(
                "yahtzee bench: --plot needs matplotlib: pip install 'yahtzee-service[plot]'"
            ) from None
    report = run_generator(run(opts))
    data = report.to_dict()
    print(json.dumps(data, indent=2) if args.json else report.format_table())
    if args.plot is not None and report.open_loop:
        plot(data, args.plot)
        print(f"plot written to {args.plot}", file=sys.stderr)
    return 0 if report.ok else 1


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``bench`` to the ``yahtzee`` command line."""
    bench = subparsers.add_parser(
        "bench",
        help="benchmark: the game server against a bare broadcast server",
        description="Start the game server and a bare WebSocket broadcast server, drive both "
        "with the same rooms in alternating rounds (closed and open loop), verify every stream "
        "and report throughput, latency percentiles, CPU per command, RSS per connection and "
        "the game / bare ratios.",
    )
    add_arguments(bench)
    bench.set_defaults(func=execute)
