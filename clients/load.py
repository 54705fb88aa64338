"""``yahtzee load``: a load generator and benchmark that plays many bot games at once.

Against a running server, :func:`run` plays ``--games`` concurrent games of ``--players`` bots
each (the greedy bots of :mod:`clients.bot`, ``--delay 0`` by default), with ``--spectators``
watchers per game, and stops by itself after ``--duration-limit`` seconds at the latest (games
still running then count as not completed). Only loopback servers are accepted unless
``--allow-remote`` is given: this is a load generator, not something to point at other people's
servers by accident.

Measured (on the client side, over every connection):

- games completed, commands sent (application pings excluded), errors by code;
- command round trip: from the moment a command frame is written until its ``ack`` (or
  ``error``) is read, p50/p95/p99/max;
- room events received, and that number per second of wall time;
- wall time, from the first connection to the last game's end.

Verified (the *integrity* section; any violation makes the run fail):

- on the wire, every client's events of its room arrive with consecutive ``seq`` (no gaps, no
  duplicates), and what the client delivers is one snapshot followed by consecutive events
  (a later snapshot means the client had to resynchronise);
- all clients of a room (players and spectators) saw the very same events for every ``seq``
  they have in common, and all of them saw ``game_over`` at the same ``seq``;
- the final totals follow from the ``scored`` events: every player filled each box once, each
  ``total`` is the sum of the points plus the bonuses, ``game_over`` reports those totals and
  places that agree with them, and every client's room model ends with the same grand totals.

Depends on :mod:`clients` and :mod:`protocol` only. ``python -m clients.load --help``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import json
import logging
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection

from clients.bot import DEFAULT_NAMES, play_seat
from clients.client import Client, ClientClosedError, CommandError, ConnectionFailedError
from protocol import (
    Ack,
    Box,
    Command,
    Encoding,
    Error,
    Event,
    FirstPlayer,
    GameOver,
    Ping,
    Rules,
    Scored,
    Snapshot,
    boxes_for,
    message_type,
)

__all__ = ["LoadReport", "add_arguments", "main", "run"]

log = logging.getLogger("yahtzee.load")

DEFAULT_URL = os.environ.get("YAHTZEE_URL", "ws://127.0.0.1:8000/ws")
MAX_SEATS = 8
CLOSE_GRACE = 5.0  # seconds allowed for closing all connections after the games
UPPER = frozenset({Box.ACES, Box.ONES, Box.TWOS, Box.THREES, Box.FOURS, Box.FIVES, Box.SIXES})


# ---------------------------------------------------------------------------- measuring client


@dataclass
class _Stats:
    """Figures shared by every client of one run (one event loop: no locking needed)."""

    commands: Counter[str] = field(default_factory=Counter)  # by command type, resends included
    latencies: list[float] = field(default_factory=list)  # seconds, send -> ack/error
    errors: Counter[str] = field(default_factory=Counter)
    events: int = 0  # room events read off the wire, all clients


class _MeasuredClient(Client):
    """A :class:`Client` that times each command to its reply and records its event streams.

    ``wire``: every room event as read off the connection (before deduplication);
    ``delivered``: what :meth:`Client.events` hands to the application.
    """

    def __init__(self, url: str, stats: _Stats, label: str, **kwargs: Any) -> None:
        super().__init__(url, **kwargs)
        self.stats = stats
        self.label = label
        self.sent_at: dict[str, float] = {}
        self.wire: list[Event] = []
        self.delivered: list[Event | Snapshot] = []

    async def _send(self, ws: ClientConnection, command: Command) -> None:
        if not isinstance(command, Ping):
            self.stats.commands[message_type(command)] += 1
            self.sent_at[command.id] = time.perf_counter()
        await super()._send(ws, command)

    def _dispatch(self, message: object) -> bool:
        if isinstance(message, Ack | Error) and message.id is not None:
            sent = self.sent_at.pop(message.id, None)
            if sent is not None:
                self.stats.latencies.append(time.perf_counter() - sent)
        if isinstance(message, Error):
            self.stats.errors[message.code] += 1
        elif isinstance(message, Event):
            self.stats.events += 1
            self.wire.append(message)
        return super()._dispatch(message)

    async def record(self) -> None:
        """Collect :meth:`Client.events` until the client closes (run as a task)."""
        async for update in self.events():
            self.delivered.append(update)


# ---------------------------------------------------------------------------- report


@dataclass
class LoadReport:
    """The result of one run: figures, and the integrity violations found (none, ideally)."""

    url: str
    games_requested: int
    players_per_game: int
    spectators_per_game: int
    clients: int = 0
    games_completed: int = 0
    commands_sent: int = 0
    commands_by_type: dict[str, int] = field(default_factory=dict)
    replies: int = 0
    latency_ms: dict[str, float] = field(default_factory=dict)  # p50 p95 p99 max mean
    events_received: int = 0
    events_per_second: float = 0.0
    errors: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)  # games that ended in an exception
    reconnects: int = 0
    wall_seconds: float = 0.0
    timed_out: bool = False
    integrity_violations: list[str] = field(default_factory=list)
    games_verified: int = 0

    @property
    def ok(self) -> bool:
        return (
            self.games_completed == self.games_requested
            and not self.integrity_violations
            and not self.failures
            and not self.timed_out
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["ok"] = self.ok
        return data

    def format_table(self) -> str:
        lat = self.latency_ms
        rows: list[tuple[str, str]] = [
            ("server", self.url),
            (
                "games",
                f"{self.games_completed}/{self.games_requested} completed"
                f" ({self.players_per_game} players + {self.spectators_per_game} spectators each,"
                f" {self.clients} connections)",
            ),
            (
                "wall time",
                f"{self.wall_seconds:.2f} s" + ("  (duration limit hit)" * self.timed_out),
            ),
            (
                "commands sent",
                f"{self.commands_sent}  ("
                + ", ".join(f"{k} {v}" for k, v in sorted(self.commands_by_type.items()))
                + ")",
            ),
            ("commands per second", f"{self.commands_sent / max(self.wall_seconds, 1e-9):.0f}"),
        ]
        if lat:
            rows.append(
                (
                    "round trip (ms)",
                    f"p50 {lat['p50']:.2f}  p95 {lat['p95']:.2f}  p99 {lat['p99']:.2f}"
                    f"  max {lat['max']:.2f}  (mean {lat['mean']:.2f}, {self.replies} replies)",
                )
            )
        else:
            rows.append(("round trip (ms)", "no replies"))
        rows += [
            ("events received", f"{self.events_received}"),
            ("events per second", f"{self.events_per_second:.0f}"),
            (
                "errors",
                ", ".join(f"{k} {v}" for k, v in sorted(self.errors.items())) or "none",
            ),
            ("reconnects", str(self.reconnects)),
            (
                "integrity",
                f"{self.games_verified} games verified, "
                + (
                    f"{len(self.integrity_violations)} VIOLATIONS"
                    if self.integrity_violations
                    else "ok"
                ),
            ),
        ]
        width = max(len(name) for name, _ in rows)
        lines = [f"{name:<{width}}  {value}" for name, value in rows]
        lines += [f"  violation: {v}" for v in self.integrity_violations[:20]]
        if len(self.integrity_violations) > 20:
            lines.append(f"  ... and {len(self.integrity_violations) - 20} more")
        lines += [f"  failure: {f}" for f in self.failures[:20]]
        lines.append("result: " + ("OK" if self.ok else "FAILED"))
        return "\n".join(lines)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in 0..100) of an ascending, non-empty sequence."""
    rank = max(1, math.ceil(q / 100 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def _latency_summary(latencies: Sequence[float]) -> dict[str, float]:
    if not latencies:
        return {}
    ms = sorted(x * 1000 for x in latencies)
    return {
        "p50": percentile(ms, 50),
        "p95": percentile(ms, 95),
        "p99": percentile(ms, 99),
        "max": ms[-1],
        "mean": sum(ms) / len(ms),
    }


# ---------------------------------------------------------------------------- integrity


def _check_client(client: _MeasuredClient, room: str) -> list[str]:
    """One client's streams: gap-free on the wire, one snapshot then consecutive events."""
    problems: list[str] = []
    name = f"{room}/{client.label}"
    last: int | None = None
    for event in client.wire:
        if event.room != room:
            continue
        if last is not None and event.seq != last + 1:
            kind = "duplicate" if event.seq <= last else "gap"
            problems.append(f"{name}: wire {kind}: seq {event.seq} after {last}")
        last = event.seq if last is None else max(last, event.seq)
    updates = [u for u in client.delivered if u.room == room]
    if not updates or not isinstance(updates[0], Snapshot):
        problems.append(f"{name}: delivered stream does not start with a snapshot")
        return problems
    seq = updates[0].seq
    for update in updates[1:]:
        if isinstance(update, Snapshot):
            problems.append(f"{name}: resynchronised by a snapshot at seq {update.seq}")
            seq = update.seq
        elif update.seq != seq + 1:
            problems.append(f"{name}: delivered seq {update.seq} after {seq}")
            seq = update.seq
        else:
            seq += 1
    return problems


def _check_room(room: str, clients: Sequence[_MeasuredClient], rules: Rules) -> list[str]:
    """Every client of one room saw the same events and the totals follow from ``scored``."""
    problems: list[str] = []
    for client in clients:
        problems += _check_client(client, room)
    # The same event at every seq, across clients (up to game_over: later events, such as the
    # disconnects of clients closing, may reach some clients and not others).
    by_seq: dict[int, Event] = {}
    seen_by: dict[int, str] = {}
    game_over_seq: dict[str, int] = {}
    for client in clients:
        for update in client.delivered:
            if not isinstance(update, Event) or update.room != room:
                continue
            if update.seq in by_seq:
                if by_seq[update.seq] != update:
                    problems.append(
                        f"{room}: seq {update.seq} differs between {seen_by[update.seq]}"
                        f" ({message_type(by_seq[update.seq])}) and {client.label}"
                        f" ({message_type(update)})"
                    )
            else:
                by_seq[update.seq] = update
                seen_by[update.seq] = client.label
            if isinstance(update, GameOver):
                game_over_seq.setdefault(client.label, update.seq)
    ends = set(game_over_seq.values())
    missing = [c.label for c in clients if c.label not in game_over_seq]
    if missing:
        problems.append(f"{room}: no game_over seen by {', '.join(missing)}")
    if len(ends) > 1:
        problems.append(f"{room}: game_over at different seqs {sorted(ends)}")
    if not ends:
        return problems
    end = min(ends)
    # Totals from the scored events, in seq order (the union of all clients' streams: the
    # players joined before the game started, so every scored event is in it).
    first = min(by_seq)
    holes = [s for s in range(first, end + 1) if s not in by_seq]
    if holes:
        problems.append(f"{room}: no client saw seq {holes[:5]}")
    points: dict[str, dict[Box, int]] = {}
    last_scored: dict[str, Scored] = {}
    for seq in sorted(s for s in by_seq if s <= end):
        event = by_seq[seq]
        if isinstance(event, Scored):
            card = points.setdefault(event.player, {})
            if event.box in card:
                problems.append(f"{room}: {event.player} scored {event.box} twice")
            card[event.box] = event.points
            last_scored[event.player] = event
    game_over = by_seq[end]
    assert isinstance(game_over, GameOver)
    boxes = set(boxes_for(rules))
    totals: dict[str, int] = {}
    for player, card in points.items():
        if set(card) != boxes:
            problems.append(f"{room}: {player} filled {len(card)} of {len(boxes)} boxes")
        final = last_scored[player]
        expected = sum(card.values()) + final.upper_bonus + final.yahtzee_bonus
        if final.total != expected:
            problems.append(
                f"{room}: {player} total {final.total} != points {sum(card.values())}"
                f" + bonuses {final.upper_bonus} + {final.yahtzee_bonus}"
            )
        upper = sum(p for b, p in card.items() if b in UPPER)
        if final.upper_bonus and upper < 63:
            problems.append(f"{room}: {player} has an upper bonus with {upper} upper points")
        totals[player] = final.total
    results = {s.player: s for s in game_over.results}
    if set(results) != set(totals):
        problems.append(f"{room}: game_over players {sorted(results)} != scorers {sorted(totals)}")
    for player, standing in results.items():
        if player in totals and standing.total != totals[player]:
            problems.append(
                f"{room}: game_over gives {player} {standing.total}, scored events {totals[player]}"
            )
        better = sum(1 for s in results.values() if s.total > standing.total)
        if standing.place != better + 1:
            problems.append(f"{room}: {player} placed {standing.place}, expected {better + 1}")
    for client in clients:
        model = client.model
        if model is None or model.room != room:
            problems.append(f"{room}/{client.label}: no room model at the end")
            continue
        grand = {p.player: p.grand for p in model.players}
        if grand != totals:
            problems.append(f"{room}/{client.label}: model totals {grand} != scored {totals}")
    return problems


# ---------------------------------------------------------------------------- running


@dataclass
class _Game:
    index: int
    players: list[_MeasuredClient] = field(default_factory=list)
    spectators: list[_MeasuredClient] = field(default_factory=list)
    recorders: list[asyncio.Task[None]] = field(default_factory=list)
    room: str | None = None
    completed: bool = False

    @property
    def clients(self) -> list[_MeasuredClient]:
        return self.players + self.spectators


async def _play_game(game: _Game, args: argparse.Namespace) -> None:
    everyone = game.clients
    await asyncio.gather(*(c.connect() for c in everyone))
    game.recorders = [asyncio.create_task(c.record()) for c in everyone]
    host = game.players[0]
    created = await host.create_room(
        seats=args.players, rules=args.rules, first_player=args.first_player
    )
    game.room = created.room
    # Spectators first, so that everyone's stream covers the whole game.
    for spectator in game.spectators:
        await spectator.spectate(created.room, created.invite_code)
    for i, player in enumerate(game.players):
        await player.join(created.room, DEFAULT_NAMES[i % len(DEFAULT_NAMES)], created.invite_code)
    room = created.room

    async def watch(client: _MeasuredClient) -> None:
        await client.wait_for(lambda m: m.room == room and m.results != [])

    await asyncio.gather(
        *(play_seat(p, delay=args.delay) for p in game.players),
        *(watch(s) for s in game.spectators),
    )
    game.completed = True


async def _close_all(games: Sequence[_Game]) -> None:
    clients = [c for g in games for c in g.clients]
    closing = asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
    try:
        await asyncio.wait_for(closing, CLOSE_GRACE)
    except TimeoutError:
        log.warning("some connections did not close within %.0fs", CLOSE_GRACE)
    recorders = [t for g in games for t in g.recorders]
    for task in recorders:
        if not task.done():
            task.cancel()
    await asyncio.gather(*recorders, return_exceptions=True)


def check_url(url: str, allow_remote: bool) -> None:
    """Refuse anything but a ``ws(s)://`` URL on a loopback host, unless ``allow_remote``."""
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss"):
        raise SystemExit(f"yahtzee load: not a WebSocket URL: {url}")
    host = parts.hostname or ""
    if allow_remote:
        return
    loopback = host == "localhost" or host.endswith(".localhost")
    with contextlib.suppress(ValueError):
        loopback = loopback or ipaddress.ip_address(host).is_loopback
    if not loopback:
        raise SystemExit(
            f"yahtzee load: {host!r} is not a loopback host; pass --allow-remote to load it"
        )


async def run(args: argparse.Namespace) -> LoadReport:
    """Play the games, print the report (a table, or JSON with ``--json``) and return it."""
    check_url(args.url, args.allow_remote)
    if not 1 <= args.players <= MAX_SEATS:
        raise SystemExit(f"yahtzee load: --players must be 1..{MAX_SEATS}")
    if args.games < 1 or args.spectators < 0 or args.duration_limit <= 0:
        raise SystemExit("yahtzee load: --games >= 1, --spectators >= 0, --duration-limit > 0")
    logging.getLogger("yahtzee.client").setLevel(logging.ERROR)
    logging.getLogger("yahtzee.bot").setLevel(logging.WARNING)

    stats = _Stats()
    encoding = Encoding(args.encoding)

    def client(label: str) -> _MeasuredClient:
        return _MeasuredClient(
            args.url, stats, label, encoding=encoding, client_name="yahtzee-load"
        )

    games = [
        _Game(
            index=g,
            players=[client(f"p{i}") for i in range(args.players)],
            spectators=[client(f"s{i}") for i in range(args.spectators)],
        )
        for g in range(args.games)
    ]
    report = LoadReport(
        url=args.url,
        games_requested=args.games,
        players_per_game=args.players,
        spectators_per_game=args.spectators,
        clients=sum(len(g.clients) for g in games),
    )
    started = time.perf_counter()
    tasks = {
        asyncio.create_task(_play_game(g, args), name=f"load-game-{g.index}"): g for g in games
    }
    done, pending = await asyncio.wait(tasks, timeout=args.duration_limit)
    finished = time.perf_counter()
    report.timed_out = bool(pending)
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    for task in done:
        exc = task.exception()
        if exc is not None:
            game = tasks[task]
            kind = type(exc).__name__
            if isinstance(exc, CommandError | ClientClosedError | ConnectionFailedError):
                report.failures.append(f"game {game.index} ({game.room}): {kind}: {exc}")
            else:
                report.failures.append(f"game {game.index} ({game.room}): {kind}: {exc!r}")
    await _close_all(games)

    report.games_completed = sum(g.completed for g in games)
    report.wall_seconds = finished - started
    report.commands_by_type = dict(sorted(stats.commands.items()))
    report.commands_sent = sum(stats.commands.values())
    report.replies = len(stats.latencies)
    report.latency_ms = _latency_summary(stats.latencies)
    report.events_received = stats.events
    report.events_per_second = stats.events / max(report.wall_seconds, 1e-9)
    report.errors = dict(sorted(stats.errors.items()))
    report.reconnects = sum(c.reconnects for g in games for c in g.clients)
    for game in games:
        if game.completed and game.room is not None:
            report.integrity_violations += _check_room(game.room, game.clients, Rules(args.rules))
            report.games_verified += 1

    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        print(report.format_table())
    return report


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``yahtzee load`` (and ``python -m clients.load``)."""
    parser.add_argument(
        "--url",
        default=DEFAULT_URL,
        help="WebSocket URL of the service (default: %(default)s, or $YAHTZEE_URL)",
    )
    parser.add_argument("-g", "--games", type=int, default=10, help="concurrent games (10)")
    parser.add_argument(
        "-p", "--players", type=int, default=2, help=f"bot players per game, 1..{MAX_SEATS} (2)"
    )
    parser.add_argument("-s", "--spectators", type=int, default=0, help="spectators per game (0)")
    parser.add_argument(
        "--delay", type=float, default=0.0, help="seconds a bot waits before each action (0)"
    )
    parser.add_argument(
        "--duration-limit",
        type=float,
        default=120.0,
        help="hard stop in seconds: unfinished games count as failed (120)",
    )
    parser.add_argument(
        "--encoding", choices=[e.value for e in Encoding], default=Encoding.MSGPACK.value
    )
    parser.add_argument("--rules", choices=[r.value for r in Rules], default=Rules.YAHTZEE.value)
    parser.add_argument(
        "--first-player",
        choices=[v.value for v in FirstPlayer],
        default=FirstPlayer.SEAT_ORDER.value,
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a server that is not on a loopback address",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m clients.load",
        description="Load generator and benchmark: concurrent bot games against a server.",
    )
    add_arguments(parser)
    return execute(parser.parse_args(argv))


def execute(args: argparse.Namespace) -> int:
    """Run the load from parsed arguments; the exit code is 0 when every check passed."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    report = asyncio.run(run(args))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
