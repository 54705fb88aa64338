"""The two servers as the bench drives them: rooms of connections, one command at a time.

:class:`GameRoom`: real games through :class:`clients.client.Client`. The player on turn acts by
the bots' greedy policy (hold the dice it keeps, roll, score); when a game ends, every connection
leaves and the room is set up anew (create, spectate, join, start), on the same connections.
:class:`BareRoom`: the same connections and the same one-command-at-a-time shape against the bare
broadcast server. Both report every received frame to a :class:`RoomStreams`, which verifies the
streams and times each command to its last delivery.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import websockets
from websockets.asyncio.client import ClientConnection

from clients.bench.bare import ROOM_PATH, frame_fields
from clients.bench.pacing import Clock
from clients.bench.streams import LatencyHistogram, RoomStreams
from clients.bot import DEFAULT_NAMES
from clients.client import Client, CommandError
from clients.model import RoomModel
from clients.strategy import decide
from protocol import Ack, Encoding, Event, FirstPlayer, Phase, RoomStatus, Snapshot

__all__ = ["BareRoom", "GameRoom", "RoomShape", "Sink"]

SPECTATE_BATCH = 100
TURN = 3  # bare rooms: the sender changes every TURN commands, like players taking turns


@dataclass(frozen=True)
class RoomShape:
    players: int
    spectators: int
    encoding: Encoding = Encoding.MSGPACK

    @property
    def connections(self) -> int:
        return self.players + self.spectators


@dataclass
class Sink:
    """Where the current round's figures go (replaced at each round)."""

    delivery: LatencyHistogram = field(default_factory=LatencyHistogram)
    setup_commands: int = 0
    notify: asyncio.Event | None = None  # set at each delivery (the round's drain waits on it)

    def delivered(self, seconds: float) -> None:
        self.delivery.record(seconds)
        if self.notify is not None:
            self.notify.set()


class _BenchClient(Client):
    """A :class:`Client` that reports its frames to its room's streams and times its acks."""

    def __init__(self, url: str, label: str, room: GameRoom, encoding: Encoding) -> None:
        super().__init__(url, encoding=encoding, reconnect=False, client_name="yahtzee-bench")
        self.label = label
        self.owner = room
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
        return super()._dispatch(message)


class GameRoom:
    """One room of the game server with its players and spectators, playing game after game.
    With several URLs (server processes) the room's connections take them in turn."""

    def __init__(
        self,
        url: str | Sequence[str],
        index: int,
        shape: RoomShape,
        clock: Clock,
        sink: Callable[[], Sink],
    ) -> None:
        self.clock = clock
        self.shape = shape
        self.sink = sink
        urls = [url] if isinstance(url, str) else list(url)
        self.players = [
            _BenchClient(urls[i % len(urls)], f"r{index}p{i}", self, shape.encoding)
            for i in range(shape.players)
        ]
        self.spectators = [
            _BenchClient(urls[(shape.players + i) % len(urls)], f"r{index}s{i}", self,
                         shape.encoding)
            for i in range(shape.spectators)
        ]  # fmt: skip
        self.streams: dict[str, RoomStreams] = {}
        self.current: RoomStreams | None = None
        self.seq = 0  # the room's seq after the last command
        self.actor: _BenchClient | None = None

    @property
    def clients(self) -> list[_BenchClient]:
        return self.players + self.spectators

    def streams_of(self, room: str, action: Callable[[RoomStreams], None]) -> None:
        streams = self.streams.get(room)
        if streams is not None:
            action(streams)

    async def open(self) -> None:
        await asyncio.gather(*(c.connect() for c in self.clients))
        await self._new_game()

    async def close(self) -> None:
        await asyncio.gather(*(c.close() for c in self.clients), return_exceptions=True)

    def violations(self) -> list[str]:
        return [v for s in self.streams.values() for v in s.finish()]

    @property
    def outstanding(self) -> int:
        return self.current.outstanding if self.current else 0

    async def _new_game(self) -> None:
        """Create a room, let spectators in first (so they see the whole game), seat, start."""
        host = self.players[0]
        created = await host.create_room(
            seats=self.shape.players, first_player=FirstPlayer.SEAT_ORDER
        )
        self.current = RoomStreams(
            created.room, self.shape.connections, lambda s: self.sink().delivered(s)
        )
        self.streams[created.room] = self.current
        # In batches: a room of 1,000 spectators is set up in seconds, without 1,000
        # handshakes' worth of commands in flight at once.
        for start in range(0, len(self.spectators), SPECTATE_BATCH):
            batch = self.spectators[start : start + SPECTATE_BATCH]
            await asyncio.gather(*(s.spectate(created.room) for s in batch))
        for i, player in enumerate(self.players):
            await player.join(created.room, DEFAULT_NAMES[i % len(DEFAULT_NAMES)])
        await _on_fresh_view(host, lambda client: client.start())
        self.seq = host.last_ack[1] or 0
        self.sink().setup_commands += 2 + self.shape.connections

    async def _rollover(self) -> None:
        await asyncio.gather(*(c.leave() for c in self.clients))
        self.sink().setup_commands += self.shape.connections
        await self._new_game()

    async def _host_view(self) -> RoomModel:
        """The host's model of the room as of the last command (it may still lag behind)."""
        seq = self.seq
        return await self.players[0].wait_for(lambda m: m.seq >= seq)

    async def prepare(self) -> float | None:
        """Get ready for the next command: a new game if the last one ended (returns the seconds
        that took: in open loop the room's schedule moves on by them), and the player on turn up
        to date. Not part of a closed-loop command's latency; in open loop, but for the set-up
        of a new game, it is."""
        setup: float | None = None
        model = await self._host_view()
        if model.status is RoomStatus.FINISHED:
            began = self.clock.now()
            await self._rollover()
            model = await self._host_view()
            setup = self.clock.now() - began
        player = next(p for p in self.players if p.player == model.current_player)
        seq = self.seq
        await player.wait_for(lambda m: m.seq >= seq)
        self.actor = player
        return setup

    async def step(self, intended: float) -> float:
        """One command of the game by the player on turn; its ack time."""
        player = self.actor
        assert player is not None
        await _on_fresh_view(player, _act)
        _, seq, acked = player.last_ack
        assert seq is not None
        assert self.current is not None
        self.seq = seq
        self.current.expect(seq, intended)
        return acked


def _reached(seq: int) -> Callable[[RoomModel], bool]:
    return lambda model: model.seq >= seq


async def _on_fresh_view(client: Client, action: Callable[[Client], Awaitable[None]]) -> None:
    """Run ``action`` (a command carrying ``expect_seq``); when an unrelated event (a spectator
    count, a presence change) outdated the view it was decided on, wait for the newer view and
    decide again, as the bots do. The retries are part of the command's cost."""
    while True:
        try:
            await action(client)
            return
        except CommandError as exc:
            if exc.code != "stale_state" or exc.seq is None:
                raise
            await client.wait_for(_reached(exc.seq))


async def _act(player: Client) -> None:
    """Roll, hold what the policy keeps, or score (the bots' greedy strategy)."""
    model = player.model
    assert model is not None
    if model.phase is Phase.AWAITING_ROLL:
        await player.roll()
        return
    decision = decide(model.dice, model.rolls_left, model.preview)
    if decision.score is not None:
        await player.score(decision.score)
        return
    to_hold = sorted(set(decision.keep) - set(model.held))
    if to_hold:
        await player.hold(to_hold)
    else:
        await player.roll(keep=decision.keep)


@dataclass
class _BareConnection:
    label: str
    ws: ClientConnection
    reader: asyncio.Task[None] | None = None


class BareRoom:
    """One room of the bare server: the same connections, one frame per command."""

    def __init__(
        self, url: str, index: int, shape: RoomShape, clock: Clock, sink: Callable[[], Sink]
    ) -> None:
        self.url = f"{url}{ROOM_PATH}r{index}"
        self.index = index
        self.shape = shape
        self.clock = clock
        self.streams = RoomStreams(f"bare{index}", shape.connections, lambda s: sink().delivered(s))
        self.connections: list[_BareConnection] = []
        self.ids = itertools.count(1)
        self.turn = 0
        self.waiting: tuple[str, bytes, asyncio.Future[tuple[float, int]]] | None = None

    async def open(self) -> None:
        labels = [f"r{self.index}p{i}" for i in range(self.shape.players)]
        labels += [f"r{self.index}s{i}" for i in range(self.shape.spectators)]
        sockets = await asyncio.gather(*(websockets.connect(self.url) for _ in labels))
        for label, ws in zip(labels, sockets, strict=True):
            connection = _BareConnection(label, ws)
            connection.reader = asyncio.create_task(self._read(connection))
            self.streams.start(label, 0)
            self.connections.append(connection)

    async def close(self) -> None:
        for connection in self.connections:
            with contextlib.suppress(Exception):
                await connection.ws.close()
            if connection.reader is not None:
                await asyncio.gather(connection.reader, return_exceptions=True)

    def violations(self) -> list[str]:
        return self.streams.finish()

    async def prepare(self) -> float | None:
        """Nothing to get ready: any connection may send at any time."""
        return None

    @property
    def outstanding(self) -> int:
        return self.streams.outstanding

    async def _read(self, connection: _BareConnection) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for frame in connection.ws:
                now = self.clock.now()
                assert isinstance(frame, bytes)
                _, seq, data = frame_fields(frame)
                self.streams.arrive(connection.label, seq, frame, now)
                waiting = self.waiting
                if waiting and waiting[0] == connection.label and waiting[1] == data:
                    waiting[2].set_result((now, seq))
                    self.waiting = None

    async def step(self, intended: float) -> float:
        """One frame from the connection on turn; its ack time (its own copy's arrival)."""
        count = next(self.ids)
        sender = self.connections[(count // TURN) % self.shape.players]
        data = f"{sender.label}:{count}".encode()
        future: asyncio.Future[tuple[float, int]] = asyncio.get_running_loop().create_future()
        self.waiting = (sender.label, data, future)
        await sender.ws.send(data)
        acked, seq = await future
        self.streams.expect(seq, intended)
        return acked
