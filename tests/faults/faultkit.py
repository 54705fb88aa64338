"""The fault suite's tools: a Redis process the test owns, clients that fail over and record
everything they receive, bot tables, and the independent checker.

The checker trusts nothing the server says about itself except the room's log, read page by
page from ``GET /rooms/{id}/events``. Against that log it checks, for every client:

- the stream received on the wire (before the client library deduplicates anything) is one
  snapshot followed by events with consecutive ``seq`` (across reconnects and fail-overs too):
  nothing lost, duplicated or reordered; a second snapshot (a resync) counts as a violation;
- every received event equals the log's event at that ``seq``;
- the stream reaches the room's ``game_over``;

and for every room: every acknowledged ``roll`` is exactly one ``rolled`` event of that player
at the ack's ``seq``, the numbers of ``rolled`` and (non-automatic) ``scored`` events equal the
numbers of acknowledged rolls and scores (commands carry ids, the log does not: the effects are
counted), one ``game_started``, one ``game_over``, and the fair-dice verifier says ``verified``.

Figures (recovery time, errors by code, command round trips) are collected in :data:`FIGURES`
and printed at the end of the session by ``conftest.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import signal
import socket
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import msgspec
import psutil
import redis
from procs import ServerProcess
from websockets.asyncio.client import ClientConnection

from clients.backoff import Backoff
from clients.bot import DEFAULT_NAMES, play_seat
from clients.client import Client, ConnectionFailedError
from protocol import Ack, Command, Encoding, Error, Event, Ping, Snapshot, message_type
from protocol.codec import decode_server
from protocol.fairdice import Status, verify_log
from server.ops.child_server import free_port
from server.ops.embedded_redis import find_server_binary

#: Multiplies the number of games of every fault test (``YAHTZEE_FAULT_SCALE=5`` for a longer
#: manual run); fractional values are allowed, at least one game is played.
SCALE = float(os.environ.get("YAHTZEE_FAULT_SCALE", "1"))
RETRYABLE = frozenset({"unavailable", "conflict", "rate_limited"})
FIGURES: list[dict[str, Any]] = []
DICE: Counter[str] = Counter()  # fair-dice verdicts of the checked rooms
StartServers = Callable[..., list[ServerProcess]]


def games(base: int) -> int:
    return max(1, round(base * SCALE))


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile of ``values`` (``q`` in 0..100); NaN when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


# ---------------------------------------------------------------------------- Redis


class RedisProcess:
    """A ``valkey-server`` (or ``redis-server``) the test owns: its own port and directory,
    append-only persistence (``appendfsync always`` unless told otherwise), and signals on
    demand."""

    def __init__(
        self, directory: Path, *, appendonly: bool = True, appendfsync: str = "always"
    ) -> None:
        self.directory = directory
        self.appendonly = appendonly
        self.appendfsync = appendfsync
        self.binary = find_server_binary()
        self.port = free_port("127.0.0.1")
        self.process: subprocess.Popen[bytes] | None = None
        directory.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self, timeout: float = 15.0) -> None:
        log = (self.directory / "redis.log").open("ab")
        self.process = subprocess.Popen(
            [
                self.binary,
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--dir", str(self.directory),
                "--save", "",
                "--appendonly", "yes" if self.appendonly else "no",
                "--appendfsync", self.appendfsync,
                "--daemonize", "no",
                "--loglevel", "warning",
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=self.directory,
            start_new_session=True,
        )  # fmt: skip
        log.close()
        deadline = time.monotonic() + timeout
        while not self._answers():
            if self.process.poll() is not None:
                raise AssertionError(f"redis exited: {(self.directory / 'redis.log').read_text()}")
            if time.monotonic() > deadline:
                raise AssertionError("redis did not start")
            time.sleep(0.02)  # polling interval, bounded by the deadline

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def signal(self, sig: signal.Signals) -> None:
        assert self.process is not None
        self.process.send_signal(sig)

    def wait_exit(self, timeout: float = 15.0) -> int:
        assert self.process is not None
        return self.process.wait(timeout=timeout)

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=5)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.process.pid, signal.SIGCONT)
            self.process.kill()
            self.process.wait(timeout=10)


def pubsub_addresses(redis_client: redis.Redis, server_pid: int, redis_port: int) -> list[str]:
    """The ``addr`` of every pub/sub connection that the server process ``server_pid`` holds."""
    mine = {
        f"{c.laddr.ip}:{c.laddr.port}"
        for c in psutil.Process(server_pid).net_connections("tcp")
        if c.raddr and c.raddr.port == redis_port
    }
    found = []
    for entry in redis_client.client_list(_type="pubsub"):
        if entry["addr"] in mine:
            found.append(entry["addr"])
    return found


# ---------------------------------------------------------------------------- clients


@dataclass
class Stats:
    """What every client of one scenario saw (one event loop: no locking)."""

    errors: Counter[str] = field(default_factory=Counter)
    latencies: list[float] = field(default_factory=list)
    #: (disrupted at, recovered at) of every disruption, monotonic
    disruptions: list[tuple[float, float]] = field(default_factory=list)
    cleared_at: float | None = None  # when the fault ended (monotonic)
    disrupted_clients: int = 0

    @property
    def recoveries(self) -> list[float]:
        """How long each disrupted client took to recover, from the later of its disruption
        and the fault's end; 0 for one that recovered before the test noted the fault's end
        (the server can be back before the coroutine that restarted Redis runs again)."""
        cleared = self.cleared_at
        return [
            max(0.0, recovered - (disrupted if cleared is None else max(disrupted, cleared)))
            for disrupted, recovered in self.disruptions
        ]


class FaultClient(Client):
    """A :class:`Client` with several server URLs: when a connection cannot be opened it tries
    the next one (fail-over). It records every room message received on the wire, the ack of
    every command, errors by code and how long each disruption lasted."""

    def __init__(self, urls: Sequence[str], stats: Stats, label: str) -> None:
        super().__init__(
            urls[0],
            backoff=Backoff(initial=0.05, maximum=0.5),
            max_retries=400,  # a retryable refusal is resent (same id) for ~100 s at most
            client_name=None,
            ping_interval=2.0,
        )
        self.urls = list(urls)
        self.stats = stats
        self.label = label
        self.on_status = self._on_status
        self.wire: list[Event | Snapshot] = []
        self.sent: dict[str, tuple[str, float]] = {}
        self.acked: dict[str, tuple[str, int | None]] = {}  # id -> (type, seq)
        self.disrupted_at: float | None = None

    async def _open(self) -> ClientConnection:
        failure: ConnectionFailedError | None = None
        start = self.urls.index(self.url)
        for i in range(len(self.urls)):
            self.url = self.urls[(start + i) % len(self.urls)]
            try:
                return await super()._open()
            except ConnectionFailedError as exc:
                failure = exc
        assert failure is not None
        raise failure

    def _on_status(self, status: str) -> None:
        if status == "reconnecting":
            self._disrupted()
        elif status == "connected":
            self._recovered()

    def _disrupted(self) -> None:
        if self.disrupted_at is None:
            self.disrupted_at = time.monotonic()
            self.stats.disrupted_clients += 1

    def _recovered(self) -> None:
        if self.disrupted_at is None:
            return
        self.stats.disruptions.append((self.disrupted_at, time.monotonic()))
        self.disrupted_at = None

    async def _send(self, ws: ClientConnection, command: Command) -> None:
        if not isinstance(command, Ping):
            self.sent[command.id] = (message_type(command), time.perf_counter())
        await super()._send(ws, command)

    def _dispatch(self, message: object) -> bool:
        if isinstance(message, Ack | Error) and message.id is not None:
            sent = self.sent.get(message.id)
            if sent is not None:
                self.stats.latencies.append(time.perf_counter() - sent[1])
                if isinstance(message, Ack):
                    self.acked.setdefault(message.id, (sent[0], message.seq))
        if isinstance(message, Error):
            self.stats.errors[message.code] += 1
            if message.code in RETRYABLE:
                self._disrupted()
        elif isinstance(message, Ack):
            self._recovered()
        elif isinstance(message, Event | Snapshot):
            self.wire.append(message)
        return super()._dispatch(message)


@dataclass
class Table:
    """One room: its players and its spectators (each client on its own server URL order)."""

    players: list[FaultClient]
    spectators: list[FaultClient]
    room: str = ""
    done: bool = False

    @property
    def clients(self) -> list[FaultClient]:
        return self.players + self.spectators


def make_tables(
    count: int,
    stats: Stats,
    player_urls: Callable[[int, int], Sequence[str]],
    spectator_urls: Callable[[int, int], Sequence[str]],
    players: int = 2,
    spectators: int = 1,
) -> list[Table]:
    """``count`` tables; ``player_urls(table, seat)`` and ``spectator_urls(table, i)`` give each
    client its servers, the first one preferred."""
    return [
        Table(
            [FaultClient(player_urls(t, i), stats, f"t{t}p{i}") for i in range(players)],
            [FaultClient(spectator_urls(t, i), stats, f"t{t}s{i}") for i in range(spectators)],
        )
        for t in range(count)
    ]


async def play(table: Table, delay: float) -> None:
    """Create the room, seat spectators then players, play to the end (bots, retrying)."""
    for client in table.clients:
        await client.connect()
    host = table.players[0]
    created = await host.create_room(seats=len(table.players), first_player="seat_order")
    table.room = created.room
    for spectator in table.spectators:
        await spectator.spectate(created.room)
    for i, player in enumerate(table.players):
        await player.join(created.room, DEFAULT_NAMES[i])
    room = created.room

    async def watch(client: FaultClient) -> None:
        await client.wait_for(lambda m: m.room == room and m.results != [])

    await asyncio.gather(
        *(play_seat(p, delay=delay) for p in table.players),
        *(watch(s) for s in table.spectators),
    )
    table.done = True


def rolled_so_far(tables: Sequence[Table]) -> int:
    """``rolled`` events seen by the tables' first spectators (progress of the games)."""
    return sum(
        1
        for table in tables
        for event in (table.spectators[0].wire if table.spectators else [])
        if message_type(event) == "rolled"
    )


async def close_all(tables: Sequence[Table]) -> None:
    clients = [c for t in tables for c in t.clients]
    await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)


# ---------------------------------------------------------------------------- the checker


async def read_log(
    http_base: str, room: str, page: int = 97, http: httpx.AsyncClient | None = None
) -> list[dict[str, Any]]:
    """The whole log of ``room``, page by page (an odd page size, to cross page borders);
    ``http``: a client to reuse (a new one loads the CA store, tens of milliseconds)."""
    if http is None:
        async with httpx.AsyncClient(timeout=10) as own:
            return await read_log(http_base, room, page, own)
    events: list[dict[str, Any]] = []
    after = 0
    while True:
        reply = await http.get(
            f"{http_base}/rooms/{room}/events", params={"after": after, "limit": page}
        )
        assert reply.status_code == 200, reply.text
        body = reply.json()
        events += body["events"]
        if body["next_after"] is None:
            return events
        assert body["next_after"] > after
        after = body["next_after"]


def as_event(entry: dict[str, Any]) -> Event:
    message = decode_server(msgspec.msgpack.encode(entry), Encoding.MSGPACK)
    assert isinstance(message, Event), entry
    return message


def check_stream(
    client: FaultClient, room: str, log: Sequence[Event], *, to_the_end: bool = True
) -> list[str]:
    """One client's received stream against the log (see the module docstring);
    ``to_the_end``: it must reach ``game_over`` (not for a spectator who left early)."""
    problems: list[str] = []
    name = f"{room}/{client.label}"
    items = [m for m in client.wire if m.room == room]
    if not items or not isinstance(items[0], Snapshot):
        return [f"{name}: the stream does not start with a snapshot"]
    position = items[0].seq
    for item in items[1:]:
        if isinstance(item, Snapshot):
            problems.append(f"{name}: resynchronised by a snapshot at {item.seq} after {position}")
            position = max(position, item.seq)
            continue
        if item.seq <= position:
            problems.append(f"{name}: duplicate or reordered seq {item.seq} after {position}")
            continue
        if item.seq != position + 1:
            problems.append(f"{name}: lost seq {position + 1}..{item.seq - 1}")
        position = item.seq
        if item.seq > len(log):
            problems.append(f"{name}: seq {item.seq} is beyond the log ({len(log)} events)")
        elif item != log[item.seq - 1]:
            problems.append(f"{name}: seq {item.seq} differs from the log")
    over = next((e.seq for e in log if message_type(e) == "game_over"), None)
    if not to_the_end:
        return problems
    if over is None:
        problems.append(f"{room}: no game_over in the log")
    elif position < over:
        problems.append(f"{name}: the stream stops at {position}, game_over is {over}")
    return problems


def check_room(table: Table, log: Sequence[Event], raw: Sequence[dict[str, Any]]) -> list[str]:
    """Exactly-once effects of acknowledged commands, and the stream of every client."""
    room = table.room
    problems: list[str] = []
    if [e.seq for e in log] != list(range(1, len(log) + 1)):
        problems.append(f"{room}: the log's seqs are not 1..{len(log)}")
    kinds = Counter(message_type(e) for e in log)
    if kinds["game_started"] != 1 or kinds["game_over"] != 1:
        problems.append(f"{room}: {kinds['game_started']} game_started, {kinds['game_over']} over")
    used_seqs: set[int] = set()
    rolls = scores = 0
    for player in table.players:
        for command_id, (kind, seq) in player.acked.items():
            if kind == "roll":
                rolls += 1
                event = log[seq - 1] if seq is not None and 0 < seq <= len(log) else None
                if (
                    event is None
                    or message_type(event) != "rolled"
                    or getattr(event, "player", None) != player.player
                ):
                    problems.append(f"{room}: acked roll {command_id} is not a rolled at {seq}")
                elif seq in used_seqs:
                    problems.append(f"{room}: two acked rolls share the event at {seq}")
                else:
                    used_seqs.add(seq)
            elif kind == "score":
                scores += 1
    logged_scores = sum(
        1 for e in log if message_type(e) == "scored" and not getattr(e, "automatic", False)
    )
    if kinds["rolled"] != rolls:
        problems.append(f"{room}: {kinds['rolled']} rolled events for {rolls} acked rolls")
    if logged_scores != scores:
        problems.append(f"{room}: {logged_scores} scored events for {scores} acked scores")
    verdict = verify_log(raw)
    DICE[verdict.status.value] += 1
    if verdict.status is not Status.VERIFIED:
        problems.append(f"{room}: fair dice: {verdict.describe()}")
    for client in table.clients:
        problems += check_stream(client, room, log)
    return problems


async def check_tables(http_base: str, tables: Sequence[Table]) -> list[str]:
    problems: list[str] = []
    async with httpx.AsyncClient(timeout=10) as http:
        for table in tables:
            if not table.done:
                problems.append(f"table {table.room or '?'} did not finish")
                continue
            raw = await read_log(http_base, table.room, http=http)
            problems += check_room(table, [as_event(e) for e in raw], raw)
    return problems


# ---------------------------------------------------------------------------- figures


def tracebacks(logs: Sequence[Path]) -> int:
    return sum(p.read_text(errors="replace").count("Traceback") for p in logs if p.exists())


def record(name: str, stats: Stats, tables: Sequence[Table], **extra: Any) -> dict[str, Any]:
    """Keep the figures of one scenario (printed at the end of the session) and return them."""
    figures: dict[str, Any] = {
        "scenario": name,
        "games": f"{sum(t.done for t in tables)}/{len(tables)}",
        "clients": sum(len(t.clients) for t in tables),
        "disrupted clients": stats.disrupted_clients,
        "recovery ms p50": _ms(percentile(stats.recoveries, 50)),
        "recovery ms p99": _ms(percentile(stats.recoveries, 99)),
        "recovery ms max": _ms(max(stats.recoveries, default=math.nan)),
        "round trip ms p50": round(percentile(stats.latencies, 50) * 1000, 1),
        "round trip ms p99": round(percentile(stats.latencies, 99) * 1000, 1),
        "errors": dict(sorted(stats.errors.items())),
        "reconnects": sum(c.reconnects for t in tables for c in t.clients),
        **extra,
    }
    FIGURES.append(figures)
    print(f"\n[faults] {figures}", flush=True)
    return figures


def _ms(seconds: float) -> float | None:
    return None if math.isnan(seconds) else round(seconds * 1000, 1)
