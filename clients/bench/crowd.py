"""Rooms played at human pace, for the concurrent-players (CCU) and vs-computer scenarios.

A :class:`HumanRoom` holds P people (each a :class:`clients.client.Client` connection), C computer
seats played by the server, and S spectators. One task per room plays game after game: it waits
until a person is on turn (the computers move on the server, ``computer_delay_ms`` apart), lets
that person think for a time drawn from :class:`ThinkTime`, then sends the bots' greedy move
(roll, hold or score). Every frame of every connection goes through the same
:class:`~clients.bench.streams.RoomStreams` check as the other scenarios (gap-free, identical
everywhere, every measured command delivered to every connection).

Computer moves are timed at the first person's connection: a move's *lateness* is the arrival of
its event minus the arrival of the room's previous move event minus the room's computer pace
(``computer_delay_ms``). The server waits that pace before each move of a computer, so on time
the difference is the pace; what is left is the server's scheduling and command cost plus the
delivery to the person, which is what a player sees as a late computer.

:class:`LobbyStream` is one open ``GET /lobby`` (SPEC 13.6) stream read with a bare HTTP/1.1
request: it counts the ``rooms`` events it receives and checks each is a JSON list of rooms.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import msgspec

from clients.bench.pacing import Clock
from clients.bench.streams import LatencyHistogram, RoomStreams
from clients.bench.targets import _act, _on_fresh_view
from clients.bot import DEFAULT_NAMES
from clients.client import Client
from clients.model import RoomModel
from protocol import (
    Ack,
    BonusTaken,
    Encoding,
    Event,
    FirstPlayer,
    GameStarted,
    Held,
    Level,
    Rolled,
    RoomStatus,
    Scored,
    Snapshot,
    TurnChanged,
)

__all__ = [
    "CCU_MIX",
    "CrowdSink",
    "HumanRoom",
    "LobbyStream",
    "MixShape",
    "ThinkTime",
    "mix_for",
]

#: Events that are a move of the game (or start a turn): a computer's pace runs from the last one.
MOVES = (Rolled, Held, Scored, BonusTaken, TurnChanged, GameStarted)
#: The moves a computer makes itself (its turn_changed comes with its own score).
COMPUTER_MOVES = (Rolled, Held, Scored, BonusTaken)
DEFAULT_COMPUTER_DELAY_MS = 900  # the server's default (server/settings.py), sent explicitly


@dataclass(frozen=True)
class ThinkTime:
    """A person's pause before each command: uniform in [low, high] seconds. With the greedy
    policy a turn is 3 to 6 commands (roll, hold, roll, hold, roll, score; often 4 or 5), so the
    default 2 to 4 s makes a turn of about 10 to 20 s."""

    low: float = 2.0
    high: float = 4.0

    def draw(self, rng: random.Random) -> float:
        return rng.uniform(self.low, self.high)


@dataclass(frozen=True)
class MixShape:
    """One room of the mix: people, computer seats, spectators."""

    people: int
    computers: int = 0
    spectators: int = 0

    @property
    def users(self) -> int:
        """Connected users (WebSocket connections): people and spectators."""
        return self.people + self.spectators


#: The CCU scenario's rooms, cycled: 32 users in 10 rooms. Mostly 2 and 3 people, busy rooms of
#: 4 with 3 spectators, and one person against computers in 2 rooms of 10.
CCU_MIX: tuple[MixShape, ...] = (
    MixShape(2), MixShape(2), MixShape(2),
    MixShape(3, spectators=1), MixShape(3), MixShape(3),
    MixShape(4, spectators=3), MixShape(4, spectators=3),
    MixShape(1, computers=2), MixShape(1, computers=3),
)  # fmt: skip


def mix_for(users: int, first: int = 0) -> list[MixShape]:
    """Rooms of the mix, from room index ``first`` on, until they hold at least ``users``."""
    rooms: list[MixShape] = []
    total = 0
    index = first
    while total < users:
        shape = CCU_MIX[index % len(CCU_MIX)]
        rooms.append(shape)
        total += shape.users
        index += 1
    return rooms


@dataclass
class CrowdSink:
    """What one measured step collects (replaced at each step)."""

    delivery: LatencyHistogram = field(default_factory=LatencyHistogram)
    lateness: LatencyHistogram = field(default_factory=LatencyHistogram)
    commands: int = 0
    computer_moves: int = 0
    errors: list[str] = field(default_factory=list)
    #: computer moves that reached the person sooner than the pace after the previous move: the
    #: previous move's own delivery was slower than this one's (information, not an error)
    early_moves: int = 0

    notify: asyncio.Event = field(default_factory=asyncio.Event)  # set at each delivery

    def delivered(self, seconds: float) -> None:
        self.delivery.record(seconds)
        self.notify.set()

    def computer_moved(self, lateness: float) -> None:
        self.computer_moves += 1
        if lateness < -0.005:
            self.early_moves += 1
        self.lateness.record(max(0.0, lateness))


class _CrowdClient(Client):
    """A :class:`Client` that reports its frames to its room's streams and times its acks."""

    def __init__(self, url: str, label: str, room: HumanRoom, *, timing: bool) -> None:
        super().__init__(
            url,
            encoding=room.encoding,
            reconnect=False,
            client_name="yahtzee-bench",
            max_buffered_events=1,  # nobody reads events(): keep none of them
            on_status=self._status_changed,
        )
        self.label = label
        self.owner = room
        self.timing = timing  # this connection times the computers' moves
        self.last_ack: tuple[str, int | None, float] = ("", None, 0.0)

    def _dispatch(self, message: object) -> bool:
        now = self.owner.clock.now()
        if isinstance(message, Ack):
            self.last_ack = (message.id, message.seq, now)
        elif isinstance(message, Snapshot):
            self.owner.streams_of(message.room, lambda s: s.start(self.label, message.seq))
        elif isinstance(message, Event):
            event = message
            self.owner.streams_of(event.room, lambda s: s.arrive(self.label, event.seq, event, now))
            if self.timing and isinstance(event, MOVES):
                self.owner.move_arrived(event, now)
        return super()._dispatch(message)

    def _status_changed(self, status: str) -> None:
        """A connection the server closed (a heartbeat timeout, a slow reader) is an error of
        the step: its room's streams would otherwise just stop."""
        if status == "closed" and not self._closing:
            self.owner.sink().errors.append(f"{self.label}: connection closed, not by the bench")


class HumanRoom:
    """One room of people (and computers, and spectators) playing at human pace, game after game
    on the same connections."""

    def __init__(
        self,
        url: str,
        index: int,
        shape: MixShape,
        clock: Clock,
        sink: Callable[[], CrowdSink],
        *,
        think: ThinkTime,
        rng: random.Random,
        encoding: Encoding = Encoding.MSGPACK,
        level: Level = Level.HARD,
        computer_delay_ms: int = DEFAULT_COMPUTER_DELAY_MS,
    ) -> None:
        self.clock = clock
        self.shape = shape
        self.sink = sink
        self.think = think
        self.rng = rng
        self.encoding = encoding
        self.level = level
        self.computer_delay = computer_delay_ms / 1000
        self.people = [
            _CrowdClient(url, f"r{index}p{i}", self, timing=i == 0) for i in range(shape.people)
        ]
        self.spectators = [
            _CrowdClient(url, f"r{index}s{i}", self, timing=False) for i in range(shape.spectators)
        ]
        self.streams: dict[str, RoomStreams] = {}
        self.current: RoomStreams | None = None
        self.seq = 0
        self.computers: set[str] = set()
        self.last_move_at: float | None = None
        self.games = 0

    @property
    def clients(self) -> list[_CrowdClient]:
        return self.people + self.spectators

    def streams_of(self, room: str, action: Callable[[RoomStreams], None]) -> None:
        streams = self.streams.get(room)
        if streams is not None:
            action(streams)

    def move_arrived(self, event: Event, now: float) -> None:
        """Time a computer's move against the room's pace (see the module's docstring)."""
        if self.current is None or event.room != self.current.room:
            return
        player = getattr(event, "player", None)
        previous, self.last_move_at = self.last_move_at, now
        if previous is not None and isinstance(event, COMPUTER_MOVES) and player in self.computers:
            self.sink().computer_moved(now - previous - self.computer_delay)

    async def open(self) -> None:
        await asyncio.gather(*(c.connect() for c in self.clients))
        await self._new_game()

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.clients), return_exceptions=True)

    def violations(self) -> list[str]:
        return [v for s in self.streams.values() for v in s.finish()]

    def violation_count(self) -> int:
        """Violations seen so far (without closing the books as :meth:`violations` does)."""
        return sum(len(s.violations) for s in self.streams.values())

    @property
    def outstanding(self) -> int:
        return self.current.outstanding if self.current else 0

    async def _new_game(self) -> None:
        """Create a room with its computers, spectators in first, people seated, start."""
        host = self.people[0]
        created = await host.create_room(
            seats=self.shape.people + self.shape.computers,
            first_player=FirstPlayer.SEAT_ORDER,
            computers=[self.level] * self.shape.computers,
            computer_delay_ms=round(self.computer_delay * 1000),
        )
        # Forget the finished room's streams (their checks are done): memory stays flat.
        for old in self.streams.values():
            old.finish()
        self.streams = {}
        self.current = RoomStreams(
            created.room, self.shape.users, lambda s: self.sink().delivered(s)
        )
        self.streams[created.room] = self.current
        self.last_move_at = None
        await asyncio.gather(*(s.spectate(created.room) for s in self.spectators))
        for i, person in enumerate(self.people):
            await person.join(created.room, DEFAULT_NAMES[i % len(DEFAULT_NAMES)])
        model = host.model
        assert model is not None
        self.computers = {p.player for p in model.players if p.computer is not None}
        await _on_fresh_view(host, lambda client: client.start())
        self.seq = host.last_ack[1] or 0
        self.games += 1

    async def _rollover(self) -> None:
        await asyncio.gather(*(c.leave() for c in self.clients))
        await self._new_game()

    def _person_on_turn(self, model: RoomModel) -> bool:
        return model.current_player is not None and model.current_player not in self.computers

    async def _next_actor(self) -> _CrowdClient:
        """Wait until a person is on turn (the computers play meanwhile), starting a new game
        when this one is over; that person's connection, up to date."""
        seq = self.seq
        host = self.people[0]

        def ready(m: RoomModel) -> bool:
            return m.seq >= seq and (m.status is RoomStatus.FINISHED or self._person_on_turn(m))

        model = await host.wait_for(ready)
        if model.status is RoomStatus.FINISHED:
            await self._rollover()
            return await self._next_actor()
        seq = model.seq
        person = next(p for p in self.people if p.player == model.current_player)
        await person.wait_for(lambda m: m.seq >= seq)
        return person

    async def play(self, running: Callable[[], bool]) -> None:
        """Play at human pace while ``running()``; an error is recorded and ends the room."""
        try:
            while running():
                person = await self._next_actor()
                await asyncio.sleep(self.think.draw(self.rng))  # the person thinks (pacing)
                if not running():
                    return
                sent_at = self.clock.now()
                await _on_fresh_view(person, _act)
                _, seq, _ = person.last_ack
                assert seq is not None
                assert self.current is not None
                self.seq = seq
                self.sink().commands += 1
                self.current.expect(seq, sent_at)
        except Exception as exc:  # a refusal, a dropped connection: the step has an error
            self.sink().errors.append(f"{self.people[0].label}: {type(exc).__name__}: {exc}")


class LobbyStream:
    """One open ``GET /lobby`` stream (SPEC 13.6): counts its ``rooms`` events and checks them."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port
        self.events = 0
        self.errors: list[str] = []
        self._task: asyncio.Task[None] | None = None
        self._opened = asyncio.Event()
        self._writer: asyncio.StreamWriter | None = None

    async def open(self) -> None:
        """Send the request and return once the response's status line arrived."""
        self._task = asyncio.create_task(self._read())
        waiter = asyncio.create_task(self._opened.wait())
        await asyncio.wait({self._task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if self._task.done():
            self._task.result()

    async def _read(self) -> None:
        reader, writer = await asyncio.open_connection(self.host, self.port, limit=2**24)
        self._writer = writer
        writer.write(
            f"GET /lobby HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            "Accept: text/event-stream\r\n\r\n".encode()
        )
        status = await reader.readline()
        if b" 200 " not in status:
            self.errors.append(f"lobby stream: {status.decode(errors='replace').strip()}")
            self._opened.set()
            return
        self._opened.set()
        event = ""
        while line := await reader.readline():
            text = line.decode(errors="replace").rstrip("\r\n")
            if text.startswith("event:"):
                event = text[6:].strip()
            elif text.startswith("data:") and event == "rooms":
                self._check(text[5:])
            elif not text:
                event = ""

    def _check(self, data: str) -> None:
        # Chunked transfer encoding puts size lines between the SSE lines; they never start
        # with "data:", so they are skipped as unknown lines are.
        try:
            body = msgspec.json.decode(data)
        except msgspec.DecodeError as exc:
            self.errors.append(f"lobby stream: unreadable rooms event: {exc}")
            return
        if not isinstance(body, dict) or not isinstance(body.get("rooms"), list):
            self.errors.append("lobby stream: a rooms event without a list of rooms")
            return
        self.events += 1

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task


def connections_of(rooms: Sequence[HumanRoom]) -> int:
    """WebSocket connections (users) of these rooms."""
    return sum(room.shape.users for room in rooms)
