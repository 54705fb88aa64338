"""Frames written in one turn of the event loop leave in one write, in order, and nothing
queued is lost when the connection is closed (real sockets)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from procs import scaled

from server.transport.coalesce import CoalescingTransport, Flag, Inbox


class Peer(asyncio.Protocol):
    """The far end: everything it received, and whether the connection ended."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.arrived = asyncio.Event()
        self.ended = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.data += data
        self.arrived.set()

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.ended.done():
            self.ended.set_result(None)


@pytest.fixture
async def pair() -> AsyncIterator[tuple[CoalescingTransport, Peer, list[bytes]]]:
    """A coalescing transport to a local peer, and every write that reached the real one."""
    loop = asyncio.get_running_loop()
    peer = Peer()
    server = await loop.create_server(lambda: peer, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    transport, _ = await loop.create_connection(asyncio.Protocol, "127.0.0.1", port)
    writes: list[bytes] = []
    real_write = transport.write

    def counted(data: Any) -> None:
        writes.append(bytes(data))
        real_write(data)

    transport.write = counted  # type: ignore[method-assign]
    yield CoalescingTransport(transport, loop), peer, writes  # type: ignore[arg-type]
    transport.close()
    server.close()


async def wait_for_bytes(peer: Peer, count: int) -> None:
    while len(peer.data) < count:
        peer.arrived.clear()
        await peer.arrived.wait()


async def test_writes_of_one_turn_go_out_together_in_order(
    pair: tuple[CoalescingTransport, Peer, list[bytes]],
) -> None:
    transport, peer, writes = pair
    for chunk in (b"ack;", b"event-1;", b"event-2;"):
        transport.write(chunk)
    assert writes == []  # not before the end of the loop's turn
    await asyncio.sleep(0)
    assert writes == [b"ack;event-1;event-2;"]
    transport.write(b"next")
    await asyncio.wait_for(wait_for_bytes(peer, 24), scaled(5))
    assert bytes(peer.data) == b"ack;event-1;event-2;next"
    assert writes == [b"ack;event-1;event-2;", b"next"]


async def test_close_sends_what_was_queued_first(
    pair: tuple[CoalescingTransport, Peer, list[bytes]],
) -> None:
    transport, peer, _ = pair
    transport.write(b"last frame")
    transport.close()
    await asyncio.wait_for(peer.ended, scaled(5))
    assert bytes(peer.data) == b"last frame"
    assert transport.is_closing()  # the rest is the real transport's


async def test_abort_drops_what_was_queued(
    pair: tuple[CoalescingTransport, Peer, list[bytes]],
) -> None:
    transport, peer, writes = pair
    transport.write(b"never sent")
    transport.abort()
    await asyncio.wait_for(peer.ended, scaled(5))
    await asyncio.sleep(0)
    assert writes == []
    assert peer.data == b""


# -- what the protocol keeps per connection ---------------------------------------------------


async def test_the_inbox_hands_messages_over_in_order_and_waits_when_empty() -> None:
    inbox = Inbox()
    assert inbox.empty()
    inbox.put_nowait({"type": "websocket.connect"})
    inbox.put_nowait({"type": "websocket.receive", "text": "a"})
    assert await inbox.get() == {"type": "websocket.connect"}
    assert await inbox.get() == {"type": "websocket.receive", "text": "a"}
    assert inbox.empty()
    reader = asyncio.create_task(inbox.get())
    await asyncio.sleep(0)
    assert not reader.done()
    inbox.put_nowait({"type": "websocket.disconnect", "code": 1000})
    assert await asyncio.wait_for(reader, scaled(5)) == {
        "type": "websocket.disconnect",
        "code": 1000,
    }


async def test_a_reader_cancelled_while_it_waits_takes_no_message() -> None:
    inbox = Inbox()
    reader = asyncio.create_task(inbox.get())
    await asyncio.sleep(0)
    reader.cancel()
    with pytest.raises(asyncio.CancelledError):
        await reader
    inbox.put_nowait({"type": "websocket.receive", "bytes": b"kept"})
    assert await asyncio.wait_for(inbox.get(), scaled(5)) == {
        "type": "websocket.receive",
        "bytes": b"kept",
    }


async def test_the_flag_lets_writers_through_while_set_and_holds_them_while_clear() -> None:
    flag = Flag()
    assert flag.is_set()
    await asyncio.wait_for(flag.wait(), scaled(1))  # set: no wait
    flag.clear()
    waiting = [asyncio.ensure_future(flag.wait()) for _ in range(2)]
    await asyncio.sleep(0)
    assert not any(w.done() for w in waiting)
    waiting[0].cancel()  # one writer gives up: the other still gets through
    flag.set()
    await asyncio.wait_for(waiting[1], scaled(5))
    assert waiting[0].cancelled()
