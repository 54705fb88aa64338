"""What the server's own protocol classes keep per WebSocket connection: the HTTP protocol that
upgraded it is freed at once (not by the collector, long after), and the handshake's request and
response are let go once it is done; the connection works as before (real sockets, in-process)."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn
import websockets
from procs import scaled
from uvicorn.server import ServerState
from websockets.frames import Frame, Opcode

from server.transport.coalesce import INBOX_HIGH_WATER, CoalescingWebSocketProtocol
from server.transport.guard import GuardedH11Protocol, GuardedProtocol


async def echo(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A raw ASGI WebSocket app: accept, then send every frame back."""
    assert scope["type"] == "websocket"
    assert (await receive())["type"] == "websocket.connect"
    await send({"type": "websocket.accept"})
    while True:
        message = await receive()
        if message["type"] == "websocket.disconnect":
            return
        await send({"type": "websocket.send", "bytes": message.get("bytes")})


class Served:
    def __init__(self, state: ServerState, port: int) -> None:
        self.state = state
        self.port = port
        self.http: list[weakref.ref[asyncio.Protocol]] = []


@pytest.fixture(params=[GuardedProtocol, GuardedH11Protocol], ids=lambda c: c.__name__)
async def served(request: pytest.FixtureRequest) -> AsyncIterator[Served]:
    config = uvicorn.Config(
        echo,
        ws="server.transport.coalesce:CoalescingWebSocketProtocol",
        ws_ping_interval=20,
        ws_ping_timeout=20,
        lifespan="off",
        log_level="warning",
    )
    config.load()
    http_class = request.param
    state = ServerState()
    loop = asyncio.get_running_loop()
    holder: list[Served] = []

    def make() -> asyncio.Protocol:
        protocol: asyncio.Protocol = http_class(config=config, server_state=state, app_state={})
        holder[0].http.append(weakref.ref(protocol))
        return protocol

    server = await loop.create_server(make, "127.0.0.1", 0)
    holder.append(Served(state, server.sockets[0].getsockname()[1]))
    # Freed means freed by reference counting, not by a collection that happened to run.
    gc.disable()
    try:
        yield holder[0]
    finally:
        gc.enable()
        for connection in list(state.connections):
            connection.shutdown()
        server.close()
        await server.wait_closed()


async def test_an_upgraded_connection_keeps_no_http_protocol_and_no_handshake(
    served: Served,
) -> None:
    async with websockets.connect(f"ws://127.0.0.1:{served.port}/") as ws:
        await ws.send(b"one")
        assert await asyncio.wait_for(ws.recv(), scaled(5)) == b"one"
        assert len(served.http) == 1
        assert served.http[0]() is None  # the HTTP protocol is gone while the socket is open
        (protocol,) = served.state.connections
        assert isinstance(protocol, CoalescingWebSocketProtocol)
        assert protocol.request is None
        assert protocol.response is None
        # websockets' parser generator still holds the request it parsed: without its headers
        parsed = protocol.conn.parser.gi_frame.f_locals.get("request")
        assert parsed is None or len(parsed.headers) == 0
        await ws.send(b"two")
        assert await asyncio.wait_for(ws.recv(), scaled(5)) == b"two"


async def test_a_closed_connection_is_freed_by_reference_counting(served: Served) -> None:
    """Once the client has closed and the application has returned, nothing holds the protocol
    in a reference cycle (its scope's extensions, websockets' parser): it is freed at once,
    not by a collection (off in this fixture)."""
    async with websockets.connect(f"ws://127.0.0.1:{served.port}/") as ws:
        await ws.send(b"one")
        assert await asyncio.wait_for(ws.recv(), scaled(5)) == b"one"
        (protocol,) = served.state.connections
        freed = asyncio.Event()
        weakref.finalize(protocol, freed.set)
        del protocol
    await asyncio.wait_for(freed.wait(), scaled(5))
    assert not served.state.connections


def _client_frames(*payloads: bytes) -> bytes:
    return b"".join(Frame(Opcode.BINARY, p).serialize(mask=True) for p in payloads)


async def test_reading_pauses_only_once_the_inbox_holds_its_high_water(served: Served) -> None:
    """A connection whose application keeps up is not paused and resumed at every message
    (two changes of the loop's epoll set each); one whose application falls behind stops being
    read at ``INBOX_HIGH_WATER`` messages, and every message still arrives, in order."""
    assert INBOX_HIGH_WATER == 4  # the frames below fill it exactly
    async with websockets.connect(f"ws://127.0.0.1:{served.port}/") as ws:
        await ws.send(b"warm")
        assert await asyncio.wait_for(ws.recv(), scaled(5)) == b"warm"
        (protocol,) = served.state.connections
        assert isinstance(protocol, CoalescingWebSocketProtocol)
        # Fed as the socket would feed them, in one turn of the loop: the echo application
        # (waiting for a message) cannot run in between.
        protocol.data_received(_client_frames(b"a"))
        assert (len(protocol.queue), protocol.read_paused) == (1, False)
        protocol.data_received(_client_frames(b"b", b"c"))
        assert (len(protocol.queue), protocol.read_paused) == (3, False)
        protocol.data_received(_client_frames(b"d"))
        assert (len(protocol.queue), protocol.read_paused) == (4, True)
        echoed = [await asyncio.wait_for(ws.recv(), scaled(5)) for _ in range(4)]
        assert echoed == [b"a", b"b", b"c", b"d"]
        assert (len(protocol.queue), protocol.read_paused) == (0, False)  # reading again
        await ws.send(b"after")
        assert await asyncio.wait_for(ws.recv(), scaled(5)) == b"after"
