"""A closed connection is freed by reference counting, at once: its session, its WebSocket
protocol and what they hold, whether it played, watched or only said hello.

The server turns Python's automatic collection off and collects only once its heap has grown by
a quarter (``server/ops/collector.py``): what a closed connection left in reference cycles (about
45 objects each, its protocol, session and buffers among them) would wait for that collection,
and bring it closer. A server in this test's process (uvicorn on a free port, real WebSockets,
the real Redis fixture), with its collector held back, so that nothing here is freed by a
collection."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator

import pytest
from inprocess import InProcess, serve_in_process
from procs import scaled
from wsclient import WsClient

from server.ops.collector import PacedCollector
from server.settings import Settings
from server.transport.coalesce import CoalescingWebSocketProtocol
from server.transport.session import Session


@pytest.fixture
async def served(
    redis_url: str, redis_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[InProcess]:
    monkeypatch.setattr(PacedCollector, "due", lambda self: False)
    settings = Settings(redis_url=redis_url, redis_prefix=redis_prefix, preload_tables="none")
    async with serve_in_process(settings) as served:
        yield served


def finalized(objects: list[object]) -> list[asyncio.Event]:
    """An event for each object, set when it is freed."""
    events = []
    for obj in objects:
        event = asyncio.Event()
        weakref.finalize(obj, event.set)
        events.append(event)
    return events


def websocket_protocols(served: InProcess) -> list[object]:
    return [
        protocol
        for protocol in served.server.server_state.connections
        if isinstance(protocol, CoalescingWebSocketProtocol)
    ]


async def test_closed_connections_are_freed_without_a_collection(served: InProcess) -> None:
    assert not gc.isenabled()  # the server's lifespan turned automatic collection off
    host = await WsClient(served.ws, "json", "host").connect()
    guest = await WsClient(served.ws, "msgpack", "guest").connect()
    watcher = await WsClient(served.ws, "json", "watcher").connect()
    idle = await WsClient(served.ws, "json", "idle").connect()
    clients = [host, guest, watcher, idle]
    try:
        created = await host.ok(
            "create_room", seats=2, public=True, options={"first_player": "seat_order"}
        )
        room = created["result"]["room"]
        await host.join(room, "H")
        await guest.join(room, "G")
        await host.ok("start")
        await host.ok("roll")
        await watcher.ok("spectate", room=room)
        await guest.wait_event(lambda e: e["type"] == "rolled")
        # (a session takes no weak reference: its conn_id names it among the objects alive)
        conn_ids = set(served.runtime.connections)
        protocols = websocket_protocols(served)
        assert len(conn_ids) == len(protocols) == len(clients)
        freed = finalized(protocols)
        del protocols
    finally:
        for client in clients:
            await client.close()
    waits = [asyncio.create_task(event.wait()) for event in freed]
    _, pending = await asyncio.wait(waits, timeout=scaled(10))
    for task in pending:
        task.cancel()
    assert not pending, f"{len(pending)} of {len(waits)} WebSocket protocols not freed"
    assert not served.runtime.connections
    alive = [s for s in gc.get_objects() if isinstance(s, Session) and s.conn_id in conn_ids]
    assert not alive, f"{len(alive)} sessions not freed"
    assert not gc.isenabled()
