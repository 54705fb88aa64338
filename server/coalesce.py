"""WebSocket frames written to a connection in one turn of the event loop leave in one write.

uvicorn's WebSocket protocol writes every frame with its own ``transport.write``, and on
loopback and LAN each one is a system call that runs the whole TCP send path. One command sends
a connection several frames at once (its ack and its events, or two events of one commit), so
:class:`CoalescingWebSocketProtocol` (uvicorn's ``websockets-sansio`` protocol; the server gives
it to uvicorn as its ``ws`` option) puts a :class:`CoalescingTransport` in front of the socket:
writes are queued and go out together at the end of the loop's turn, in order, before anything
that ends the connection.

The protocol also offers the application a synchronous send (the ASGI extension
:data:`SEND_NOWAIT` in the connection's scope): a frame for a connection that has nothing
queued and whose socket is not backed up is written at once, without a task, Starlette's layers
or an ``await`` per frame. It answers ``False`` whenever the ASGI ``send`` would wait or refuse
(handshake not done, closing, flow control paused); then the caller uses the ASGI ``send``.
A second extension, :data:`SEND_BUILT_NOWAIT`, writes a WebSocket frame the caller built once
for many connections (:meth:`server.wire.EncodedEvent.ws_frame`): it is what the protocol would
write itself when the connection has no extension (compression) negotiated, and it answers
``False`` when it has one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.http11 import Request
from websockets.protocol import State

__all__ = [
    "SEND_BUILT_NOWAIT",
    "SEND_NOWAIT",
    "CoalescingTransport",
    "CoalescingWebSocketProtocol",
    "SendBuiltNowait",
    "SendNowait",
]

SEND_NOWAIT = "yahtzee.send_nowait"
"""The scope extension: ``scope["extensions"][SEND_NOWAIT](frame) -> bool``."""
SEND_BUILT_NOWAIT = "yahtzee.send_built_nowait"
"""The scope extension: ``scope["extensions"][SEND_BUILT_NOWAIT](ws_frame_bytes) -> bool``."""

SendBuiltNowait = Callable[[bytes], bool]

SendNowait = Callable[[bytes | str], bool]


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

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope: Any = getattr(self, "scope", None)
        if scope is not None:
            extensions = scope.setdefault("extensions", {})
            extensions[SEND_NOWAIT] = self.send_nowait
            extensions[SEND_BUILT_NOWAIT] = self.send_built_nowait

    def _can_send_now(self) -> bool:
        return not (
            not self.handshake_complete
            or self.close_sent
            or self.disconnected
            or self.initial_response is not None
            or not self.writable.is_set()
            or self.transport.is_closing()
        )

    def send_nowait(self, frame: bytes | str) -> bool:
        """Write one data frame now if the ASGI ``send`` would neither wait nor refuse."""
        if not self._can_send_now():
            return False
        try:
            if isinstance(frame, bytes):
                self.conn.send_binary(frame)
            else:
                self.conn.send_text(frame.encode())
        except InvalidState:
            return False
        self.transport.write(b"".join(self.conn.data_to_send()))
        return True

    def send_built_nowait(self, ws_frame: bytes) -> bool:
        """Write a data frame built without extensions, if this connection has none and
        :meth:`send_nowait` would write now (the same checks as the protocol's own send)."""
        conn = self.conn
        if (
            conn.extensions
            or conn.state is not State.OPEN
            or conn.expect_continuation_frame
            or not self._can_send_now()
        ):
            return False
        self.transport.write(ws_frame)
        return True
