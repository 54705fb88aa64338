"""Reconnect policy and heartbeats, against a scripted in-test WebSocket peer.

The peer speaks just enough of the protocol (welcome, acks, pongs when asked to) to put the
client in situations a real server rarely produces on demand: a silent peer, a restart (1012),
a normal close (1000), a seq gap.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import msgpack
import pytest
import websockets
from procs import scaled
from test_clients_model import lobby_snapshot
from websockets.asyncio.server import ServerConnection, serve
from websockets.typing import Subprotocol

from clients.backoff import Backoff
from clients.client import Client, ClientClosedError, heartbeat_due
from protocol import (
    DEFAULT_LIMITS,
    Encoding,
    Hello,
    Join,
    JoinResult,
    ListRooms,
    ListRoomsResult,
    Message,
    Ping,
    Pong,
    Spectate,
    Spectators,
    Welcome,
    decode_client,
    encode,
    make_ack,
    make_error,
)

FAST = Backoff(initial=0.01, maximum=0.05, jitter=0)


@dataclass
class Peer:
    """A scripted server: records commands, answers hello/spectate/rejoin, maybe pings."""

    answer_pings: bool = True
    #: the first spectate's ack is "lost" (the connection drops before it is sent)
    lose_first_spectate: bool = False
    #: seconds between unsolicited frames the peer sends (None: none), as a busy room's events
    chatter: float | None = None
    _chats: list[asyncio.Task[None]] = field(default_factory=list)
    connections: list[ServerConnection] = field(default_factory=list)
    commands: list[object] = field(default_factory=list)
    connected: asyncio.Queue[ServerConnection] = field(default_factory=asyncio.Queue)
    received: asyncio.Queue[object] = field(default_factory=asyncio.Queue)
    url: str = ""

    async def handler(self, ws: ServerConnection) -> None:
        self.connections.append(ws)
        welcome = Welcome(
            server_version="test",
            protocol_version=1,
            encoding=Encoding.MSGPACK,
            limits=DEFAULT_LIMITS,
            heartbeat_seconds=20,
        )
        await ws.send(encode(welcome, Encoding.MSGPACK))
        await self.connected.put(ws)
        if self.chatter is not None:
            chat = asyncio.create_task(self._chat(ws, self.chatter))
            self._chats.append(chat)
        entered = False  # like the server: a connection in a room refuses to enter another
        async for frame in ws:
            command = decode_client(frame, Encoding.MSGPACK)
            self.commands.append(command)
            await self.received.put(command)
            if isinstance(command, Ping):
                if self.answer_pings:
                    await ws.send(encode(Pong(id=command.id), Encoding.MSGPACK))
            elif isinstance(command, Hello):
                # Answered like a v1.0 server: a result without its `command` tag, which the
                # client reads by the command it sent.
                v10_ack = {"type": "ack", "id": command.id, "seq": None, "result": {}}
                await ws.send(msgpack.packb(v10_ack))
            elif isinstance(command, Spectate):
                if (
                    self.lose_first_spectate
                    and self.commands.count(command) == 1
                    and (sum(isinstance(c, Spectate) for c in self.commands) == 1)
                ):
                    continue
                reply: Message = (
                    make_error("already_in_room", command.id)
                    if entered
                    else make_ack(command, seq=None)
                )
                entered = True
                await ws.send(encode(reply, Encoding.MSGPACK))
            elif isinstance(command, ListRooms):
                # Refuse the first attempt of each id as rate limited, accept the second.
                if self.commands.count(command) == 1:
                    reply = make_error("rate_limited", command.id)
                else:
                    reply = make_ack(command, ListRoomsResult(rooms=()))
                await ws.send(encode(reply, Encoding.MSGPACK))
            elif isinstance(command, Join) and self.commands.count(command) > 1:
                # Only a resent join is answered: the first one's ack is "lost".
                ack = make_ack(command, JoinResult(player="p1", seat=0, token="t1"))
                await ws.send(encode(ack, Encoding.MSGPACK))

    @staticmethod
    async def _chat(ws: ServerConnection, every: float) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            while True:
                await ws.send(encode(Pong(id="chatter"), Encoding.MSGPACK))
                await asyncio.sleep(every)  # pacing, as a room's events come

    async def next_command(self, kind: type) -> object:
        while True:
            command = await self.received.get()
            if isinstance(command, kind):
                return command


@pytest.fixture
async def peer() -> AsyncIterator[Peer]:
    peer = Peer()
    msgpack = Subprotocol("yahtzee.v1.msgpack")
    async with serve(peer.handler, "127.0.0.1", 0, subprotocols=[msgpack]) as srv:
        port = next(iter(srv.sockets)).getsockname()[1]
        peer.url = f"ws://127.0.0.1:{port}/ws"
        yield peer
        for chat in peer._chats:
            chat.cancel()


async def test_a_silent_peer_is_replaced_after_the_pong_timeout(peer: Peer) -> None:
    peer.answer_pings = False
    client = Client(peer.url, backoff=FAST, ping_interval=0.02)
    await client.connect()
    try:
        first = await peer.connected.get()
        async with asyncio.timeout(scaled(10)):
            await peer.connected.get()  # the client gave up on the first and came back
            await first.wait_closed()
        assert len(peer.connections) >= 2
    finally:
        await client.close()


def test_the_heartbeat_pings_only_an_idle_connection_and_drops_a_dead_one() -> None:
    assert heartbeat_due(0.0, 20) is None
    assert heartbeat_due(14.9, 20) is None  # frames arrive: no ping
    assert heartbeat_due(15.0, 20) == "ping"
    assert heartbeat_due(40.0, 20) == "ping"
    assert heartbeat_due(40.1, 20) == "drop"


async def test_an_idle_connection_is_pinged_and_kept(peer: Peer) -> None:
    client = Client(peer.url, backoff=FAST, ping_interval=scaled(0.2))
    await client.connect()
    try:
        async with asyncio.timeout(scaled(10)):
            for _ in range(3):
                await peer.next_command(Ping)
        assert len(peer.connections) == 1  # each ping's pong kept it
    finally:
        await client.close()


async def test_a_connection_that_keeps_receiving_sends_no_ping(peer: Peer) -> None:
    interval = scaled(0.4)
    peer.chatter = interval / 40
    client = Client(peer.url, backoff=FAST, ping_interval=interval)
    await client.connect()
    try:
        await asyncio.sleep(4 * interval)  # four of the heartbeat's looks, frames arriving
        assert not [c for c in peer.commands if isinstance(c, Ping)]
        assert len(peer.connections) == 1
        peer._chats[0].cancel()  # the room falls silent: the next looks ping
        async with asyncio.timeout(scaled(10)):
            await peer.next_command(Ping)
    finally:
        await client.close()


async def test_a_restart_1012_reconnects_and_resumes_watching(peer: Peer) -> None:
    client = Client(peer.url, backoff=FAST, heartbeat=False)
    await client.connect()
    try:
        first = await peer.connected.get()
        await client.spectate("r1")
        await first.send(encode(Spectators(room="r1", seq=1, count=1), Encoding.MSGPACK))
        await peer.next_command(Spectate)
        await first.close(1012, "restart")
        async with asyncio.timeout(scaled(10)):
            await peer.connected.get()
            resumed = await peer.next_command(Spectate)
        assert isinstance(resumed, Spectate)
        assert (resumed.room, resumed.last_seq) == ("r1", 1)
        # The queue holds the event once, even if the peer sends it again after the resume.
        second = peer.connections[-1]
        await second.send(encode(Spectators(room="r1", seq=1, count=1), Encoding.MSGPACK))
        await second.send(encode(Spectators(room="r1", seq=2, count=2), Encoding.MSGPACK))
        seen = []
        async with asyncio.timeout(scaled(10)):
            async for update in client.events():
                seen.append(update.seq)
                if update.seq == 2:
                    break
        assert seen == [1, 2]
    finally:
        await client.close()


async def test_a_normal_close_ends_the_client(peer: Peer) -> None:
    client = Client(peer.url, backoff=FAST, heartbeat=False)
    await client.connect()
    ws = await peer.connected.get()
    await ws.close(1000, "bye")
    async with asyncio.timeout(scaled(10)):
        updates = [u async for u in client.events()]
    assert updates == []
    assert client.status == "closed"
    with pytest.raises(ClientClosedError):
        await client.list_rooms()
    await client.close()


async def test_a_seq_gap_forces_a_resync(peer: Peer) -> None:
    client = Client(peer.url, backoff=FAST, heartbeat=False)
    await client.connect()
    try:
        ws = await peer.connected.get()
        await client.spectate("r1")
        await ws.send(encode(lobby_snapshot(), Encoding.MSGPACK))
        await ws.send(encode(Spectators(room="r1", seq=1, count=1), Encoding.MSGPACK))
        await ws.send(encode(Spectators(room="r1", seq=3, count=3), Encoding.MSGPACK))
        async with asyncio.timeout(scaled(10)):
            await peer.connected.get()
            resumed = await peer.next_command(Spectate)
            while getattr(resumed, "last_seq", None) is None:
                resumed = await peer.next_command(Spectate)
        assert isinstance(resumed, Spectate)
        assert resumed.last_seq == 1
    finally:
        await client.close()


async def test_a_retryable_error_is_retried_with_the_same_id(peer: Peer) -> None:
    client = Client(peer.url, backoff=FAST, heartbeat=False)
    await client.connect()
    try:
        assert await client.list_rooms() == []
        attempts = [c for c in peer.commands if isinstance(c, ListRooms)]
        assert len(attempts) == 2
        assert attempts[0] == attempts[1]
    finally:
        await client.close()


async def test_a_join_whose_ack_was_lost_is_resent_with_its_id_and_join_key(peer: Peer) -> None:
    client = Client(peer.url, backoff=FAST, heartbeat=False)
    await client.connect()
    try:
        joining = asyncio.create_task(client.join("r1", "Ann"))
        async with asyncio.timeout(scaled(10)):
            first = await peer.next_command(Join)
            await client.drop_connection()
            resent = await peer.next_command(Join)
            result = await joining
        assert isinstance(first, Join)
        assert first.join_key
        assert resent == first  # same id and join_key: the server gives the same seat back
        assert (result.player, client.token) == ("p1", "t1")
    finally:
        await client.close()


async def test_a_spectate_whose_ack_was_lost_is_answered_by_the_resume(peer: Peer) -> None:
    # The connection drops after `spectate` was sent and before its ack: the reconnect's resume
    # enters the room; the first spectate must not be sent again (`already_in_room`).
    peer.lose_first_spectate = True
    client = Client(peer.url, backoff=FAST, heartbeat=False)
    await client.connect()
    try:
        watching = asyncio.create_task(client.spectate("r1"))
        async with asyncio.timeout(scaled(10)):
            first = await peer.next_command(Spectate)
            await client.drop_connection()
            resumed = await peer.next_command(Spectate)
            await watching  # answered, not refused
        assert isinstance(first, Spectate)
        assert isinstance(resumed, Spectate)
        assert resumed.id != first.id
        assert resumed.room == first.room == "r1"
        assert [c for c in peer.commands if isinstance(c, Spectate)] == [first, resumed]
    finally:
        await client.close()


async def test_commands_waiting_for_a_reconnect_fail_when_the_client_closes(peer: Peer) -> None:
    reconnecting = asyncio.Event()

    def on_status(status: str) -> None:
        if status == "reconnecting":
            reconnecting.set()

    slow = Backoff(initial=60, maximum=60, jitter=0)
    client = Client(peer.url, backoff=slow, heartbeat=False, on_status=on_status)
    await client.connect()
    ws = await peer.connected.get()
    await ws.close(1011, "crash")
    async with asyncio.timeout(scaled(10)):
        await reconnecting.wait()
    waiting = [asyncio.create_task(client.list_rooms()), asyncio.create_task(client.ping())]
    await client.close()
    async with asyncio.timeout(scaled(10)):
        for task in waiting:
            with pytest.raises(ClientClosedError):
                await task


async def test_a_resume_before_any_event_asks_for_a_snapshot(peer: Peer) -> None:
    client = Client(peer.url, backoff=FAST, heartbeat=False)
    await client.connect()
    try:
        await client.spectate("r1")
        await peer.next_command(Spectate)
        await client.drop_connection()  # before the snapshot: nothing seen of the room yet
        async with asyncio.timeout(scaled(10)):
            resumed = await peer.next_command(Spectate)
        assert isinstance(resumed, Spectate)
        # last_seq 0 would ask for a replay from seq 1, with no snapshot to build the model on.
        assert (resumed.room, resumed.last_seq) == ("r1", None)
    finally:
        await client.close()
