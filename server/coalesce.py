"""WebSocket frames written to a connection in one turn of the event loop leave in one write.

uvicorn's WebSocket protocol writes every frame with its own ``transport.write``, and on
loopback and LAN each one is a system call that runs the whole TCP send path. One command sends
a connection several frames at once (its ack and its events, or two events of one commit), so
:class:`CoalescingWebSocketProtocol` (uvicorn's ``websockets-sansio`` protocol; the server gives
it to uvicorn as its ``ws`` option) puts a :class:`CoalescingTransport` in front of the socket:
writes are queued and go out together at the end of the loop's turn, in order, before anything
that ends the connection. Under load this was about a tenth of the server's CPU.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

__all__ = ["CoalescingTransport", "CoalescingWebSocketProtocol"]


class CoalescingTransport:
    """A transport's writes of one turn of the loop joined into one; everything else is the
    transport's own."""

    __slots__ = ("_handle", "_loop", "_pending", "transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self.transport = transport
        self._loop = loop
        self._pending: list[bytes] = []
        self._handle: asyncio.Handle | None = None

    def write(self, data: bytes) -> None:
        if not data:
            return
        self._pending.append(data)
        if self._handle is None:
            self._handle = self._loop.call_soon(self.flush)

    def flush(self) -> None:
        """Write what is queued now (the end of the loop's turn does it anyway)."""
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        pending, self._pending = self._pending, []
        if pending and not self.transport.is_closing():
            self.transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    def close(self) -> None:
        self.flush()  # a close frame queued before it goes out first
        self.transport.close()

    def abort(self) -> None:
        self._pending = []
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        self.transport.abort()

    def write_eof(self) -> None:
        self.flush()
        self.transport.write_eof()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


class CoalescingWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's sans-I/O WebSocket protocol writing through a :class:`CoalescingTransport`."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        real: Any = self.transport
        self.transport = CoalescingTransport(real, asyncio.get_running_loop())  # type: ignore[assignment]
