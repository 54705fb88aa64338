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
for many connections (:meth:`server.boundary.wire.EncodedEvent.ws_frame`): it is what the protocol
would
write itself when the connection has no extension (compression) negotiated, and it answers
``False`` when it has one.

The welcome waits until the client has read the handshake's response. A client that reads the
``101 Switching Protocols`` response and the first frame in one read may hand that frame to
the application before the application listens: Node's ``ws`` keeps the bytes after the
response (the upgrade's ``head``), emits ``open``, and emits the frame on the next tick, which
runs before the code after ``await once(ws, 'open')``. No spacing of writes prevents it (two
TCP segments can reach the client's buffer before it reads), so the protocol writes a Ping
with the response and tells the application (the :data:`PEER_READY` extension, awaited before
the welcome) once the client answered it or sent a frame: its answer is written when the
client has read the response and what came with it, so the welcome comes in a later read. A
client that does not answer Pings gets the welcome after :data:`PEER_WAIT_SECONDS` anyway.

And it keeps less per connection, since one process holds thousands of mostly idle ones: the
messages for the application wait in an :class:`Inbox` (uvicorn's ``asyncio.Queue`` carries
four deques of about 760 bytes each, for a queue that holds one or two messages), flow control
is a :class:`Flag` (``asyncio.Event`` carries one more deque), and the handshake's request and
response (parsed headers, a few KiB) are let go once the handshake is done. Its Pings come from one
timer for all connections (:mod:`server.transport.heartbeat`), not two timers each. Once the
connection is lost and its application has returned, the protocol breaks its own reference
cycles (its scope's extensions hold its bound methods; websockets' parser generator holds the
websockets connection): reference counting then frees the connection's objects at once, where a
collection would find some 45 of them per closed connection, and the server collects rarely
(:mod:`server.ops.collector`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final

from uvicorn._types import ASGIReceiveEvent
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.exceptions import InvalidState
from websockets.frames import Frame
from websockets.http11 import Request
from websockets.protocol import State

from server.boundary.wire import server_frame
from server.transport.heartbeat import HeartbeatWheel, wheel_for

__all__ = [
    "PEER_READY",
    "PEER_WAIT_SECONDS",
    "SEND_BUILT_NOWAIT",
    "SEND_NOWAIT",
    "CoalescingTransport",
    "CoalescingWebSocketProtocol",
    "Flag",
    "Inbox",
    "SendBuiltNowait",
    "SendNowait",
]

#: PRIVATE API: this module relies on internals of uvicorn's sans-I/O WebSocket protocol (its
#: queue, flow-control flag, transport and websockets connection, its frame handlers
#: handle_pong, handle_text, handle_bytes and handle_close, its task's done callback
#: on_task_complete, its scope and websockets' parser generator, and its keepalive:
#: schedule_ping, stop_keepalive, keepalive_timeout, pending_ping_payload, ping_sent_at,
#: ping_interval, ping_timeout, close_sent, and read_paused with send_receive_event_to_app),
#: checked against these versions; tests/test_private_api.py fails when an installed version
#: differs: re-read this module against the new version, then update the pin.
PRIVATE_API: Final = {"uvicorn": "0.54.0", "websockets": "17.4"}

SEND_NOWAIT = "yahtzee.send_nowait"
"""The scope extension: ``scope["extensions"][SEND_NOWAIT](frame) -> bool``."""
SEND_BUILT_NOWAIT = "yahtzee.send_built_nowait"
"""The scope extension: ``scope["extensions"][SEND_BUILT_NOWAIT](ws_frame_bytes) -> bool``."""

PEER_READY = "yahtzee.peer_ready"
"""The scope extension: ``await scope["extensions"][PEER_READY]()`` returns once the client has
read the handshake's response (it answered the Ping sent with it, or sent a frame), or after
:data:`PEER_WAIT_SECONDS`, or when the connection is lost."""
PEER_WAIT_SECONDS = 1.0
"""How long at most the welcome waits for the client's answer to the handshake's Ping (never
more than half the heartbeat interval)."""
INBOX_HIGH_WATER = 4
"""Messages a connection's inbox holds before the protocol stops reading its socket (reading
resumes once the application has taken them all). uvicorn stops at every message and the
application's read resumes it: two changes of the socket's place in the loop's epoll set a
command (uvloop's libuv sends them to the kernel in ``io_uring_enter`` calls) for a connection
that keeps up. The inbox stays bounded, each message by the frame size limit."""
_GREETING = b"yahtzee-hello"  # the payload of the Ping written with the handshake's response

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

    def write_now(self, data: bytes) -> None:
        """Write ``data`` at once, without waiting for the end of the loop's turn, unless
        something is queued (then it goes after that, in order)."""
        if self._pending:
            self._pending.append(data)
        elif not self.transport.is_closing():
            self.transport.write(data)

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

    def is_closing(self) -> bool:
        # asked before every write: named here, not found through __getattr__ each time
        return self.transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.transport, name)


class Inbox:
    """The messages a connection has for its application, in order: what uvicorn's protocol
    uses of ``asyncio.Queue`` (``put_nowait``, ``empty``, ``get``) for one reader at a time,
    holding nothing while it is empty but the waiting reader's future."""

    __slots__ = ("_items", "_waiter")

    def __init__(self) -> None:
        self._items: list[ASGIReceiveEvent] | None = None
        self._waiter: asyncio.Future[None] | None = None

    def put_nowait(self, item: ASGIReceiveEvent) -> None:
        if self._items is None:
            self._items = [item]
        else:
            self._items.append(item)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def empty(self) -> bool:
        return not self._items

    def __len__(self) -> int:
        return len(self._items) if self._items else 0

    def arrival(self) -> asyncio.Future[None]:
        """A future done when a message is put (await it only while :meth:`empty`; a reader
        cancelled while it waits cancels it, and the next call makes a new one)."""
        waiter = self._waiter
        if waiter is None or waiter.done():
            waiter = self._waiter = asyncio.get_running_loop().create_future()
        return waiter

    def pop(self) -> ASGIReceiveEvent:
        """The oldest message (there must be one)."""
        items = self._items
        assert items
        item = items.pop(0)
        if not items:
            self._items = None
        return item

    async def get(self) -> ASGIReceiveEvent:
        """The next message, waiting for one if need be (a cancelled wait takes none)."""
        while not self._items:
            await self.arrival()
        return self.pop()


class _Ready:
    """An awaitable that is done at once."""

    __slots__ = ()

    def __await__(self) -> Any:
        return iter(())


_READY = _Ready()


class Flag:
    """What uvicorn's protocol uses of ``asyncio.Event`` for flow control (``set``, ``clear``,
    ``is_set``, ``wait``): set while the socket takes writes; a waiter costs a future only
    while it is clear."""

    __slots__ = ("_waiters", "on")

    def __init__(self) -> None:
        #: whether it is set (read without a call on the send path)
        self.on = True
        self._waiters: list[asyncio.Future[None]] | None = None

    def is_set(self) -> bool:
        return self.on

    def set(self) -> None:
        self.on = True
        waiters, self._waiters = self._waiters, None
        for waiter in waiters or ():
            if not waiter.done():
                waiter.set_result(None)

    def clear(self) -> None:
        self.on = False

    def wait(self) -> Awaitable[None]:
        if self.on:
            return _READY
        waiter = asyncio.get_running_loop().create_future()
        if self._waiters is None:
            self._waiters = []
        self._waiters.append(waiter)
        return waiter


class CoalescingWebSocketProtocol(WebSocketsSansIOProtocol):
    """uvicorn's sans-I/O WebSocket protocol writing through a :class:`CoalescingTransport`,
    keeping less per connection (see the module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.queue: Inbox = Inbox()  # type: ignore[assignment]
        self.writable: Flag = Flag()  # type: ignore[assignment]
        #: set once the client has read the handshake's response (see the module docstring)
        self.peer_ready = Flag()
        self._peer_timer: asyncio.TimerHandle | None = None
        #: whether the application's task runs (the connection is released once it has
        #: returned and the connection is lost)
        self._app_running = False
        #: the wheel that sends this connection's Pings, and its bucket there (None: not on
        #: one, as before the handshake or with a Pong deadline other than the interval)
        self._wheel: HeartbeatWheel | None = None
        self._wheel_slot = 0

    #: whether a message came since the wheel's last beat (set on the instance only then)
    heard = False
    #: the socket's own transport (``transport`` is the coalescing one around it)
    _socket: asyncio.Transport
    #: ``transport``, typed as what it is
    _coalescing: CoalescingTransport

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        real: Any = self.transport
        self._socket = real
        self._coalescing = CoalescingTransport(real, asyncio.get_running_loop())
        self.transport = self._coalescing  # type: ignore[assignment]

    def handle_connect(self, event: Request) -> None:
        super().handle_connect(event)
        scope: Any = getattr(self, "scope", None)
        if scope is not None:
            extensions = scope.setdefault("extensions", {})
            extensions[SEND_NOWAIT] = self.send_nowait
            extensions[SEND_BUILT_NOWAIT] = self.send_built_nowait
            extensions[PEER_READY] = self.peer_ready.wait
            self._app_running = True

    def send_receive_event_to_app(self) -> None:
        """uvicorn's, but reading pauses only once :data:`INBOX_HIGH_WATER` messages wait."""
        if self.read_paused or len(self.queue) + 1 >= INBOX_HIGH_WATER:
            super().send_receive_event_to_app()
            return
        # uvicorn's method pauses reading unless it is paused already: for a message below the
        # high water it is told so, and the flag is put back after it
        self.read_paused = True
        try:
            super().send_receive_event_to_app()
        finally:
            self.read_paused = False

    async def receive(self) -> ASGIReceiveEvent:
        """uvicorn's ``receive`` without a second coroutine: the connection's task waits here
        for as long as the connection is idle."""
        inbox = self.queue
        while inbox.empty():
            await inbox.arrival()
        message = inbox.pop()
        if self.read_paused and inbox.empty():
            self.read_paused = False
            self.transport.resume_reading()
        return message

    def start_keepalive(self) -> None:
        """Called once the handshake's response is written: the request and the response
        (their parsed headers) are not read again."""
        super().start_keepalive()
        request: Request | None = self.request
        if request is not None:
            # websockets' parser keeps the request it parsed in a local variable of a generator
            # frame that lives as long as the connection: emptied, its headers go now.
            request.headers.clear()
        self.request = self.response = None  # type: ignore[assignment]
        self._greet()

    def schedule_ping(self) -> None:
        """The Pings come from the loop's :class:`~server.transport.heartbeat.HeartbeatWheel`
        (see its module), not from a timer of this connection's own, when the Pong's deadline
        is the interval (as the server configures it); otherwise uvicorn's own timers."""
        interval = self.ping_interval
        if interval is None or self.ping_timeout != interval:
            super().schedule_ping()
            return
        if self._wheel is None:
            self._wheel = wheel_for(self.loop, interval)
            self._wheel_slot = self._wheel.add(self)

    def heartbeat(self, ping_frame: bytes, payload: bytes, now: float) -> None:
        """The wheel's beat: nothing if a message came since the last one (SPEC.md 11.2),
        else a Ping, or 1011 if the last one is still unanswered (uvicorn's ``handle_pong``
        clears :attr:`pending_ping_payload` when its Pong comes)."""
        if self.close_sent or self.conn.state is not State.OPEN or self.transport.is_closing():
            return  # no Ping once the closing handshake has begun
        if self.heard:
            # a message since the last beat: the peer is alive and its path open, so this
            # interval needs no Ping (and a Ping still unanswered is no longer a timeout)
            self.heard = False
            self.pending_ping_payload = None
            return
        if self.pending_ping_payload is not None:
            self.keepalive_timeout()
            return
        self.pending_ping_payload = payload
        self.ping_sent_at = now
        # at once: a bucket's Pings go out in the wheel's beat, with no callback each
        self._coalescing.write_now(ping_frame)

    def stop_keepalive(self) -> None:
        super().stop_keepalive()
        wheel = self._wheel
        if wheel is not None:
            self._wheel = None
            wheel.discard(self, self._wheel_slot)

    def _greet(self) -> None:
        """Write a Ping right after the handshake's response; :attr:`peer_ready` is set when
        its Pong (or any frame) arrives."""
        if self.transport.is_closing():
            return
        self.peer_ready.clear()
        self.conn.send_ping(_GREETING)
        self.transport.write(b"".join(self.conn.data_to_send()))
        wait = PEER_WAIT_SECONDS
        if self.ping_interval:
            wait = min(wait, self.ping_interval / 2)
        self._peer_timer = self.loop.call_later(wait, self._peer_is_ready)

    def _peer_is_ready(self) -> None:
        if self._peer_timer is not None:
            self._peer_timer.cancel()
            self._peer_timer = None
        if not self.peer_ready.is_set():
            self.peer_ready.set()

    def handle_pong(self, event: Frame) -> None:
        if not self.peer_ready.is_set() and bytes(event.data) == _GREETING:
            self._peer_is_ready()
            return
        super().handle_pong(event)

    def handle_text(self, event: Frame) -> None:
        self.heard = True
        self._peer_is_ready()
        super().handle_text(event)

    def handle_bytes(self, event: Frame) -> None:
        self.heard = True
        self._peer_is_ready()
        super().handle_bytes(event)

    def handle_close(self, event: Frame) -> None:
        self._peer_is_ready()
        super().handle_close(event)

    def connection_lost(self, exc: Exception | None) -> None:
        self._peer_is_ready()
        super().connection_lost(exc)
        if not self._app_running:
            self._release()

    def on_task_complete(self, task: asyncio.Task[None]) -> None:
        super().on_task_complete(task)
        self._app_running = False
        if self.disconnected:
            self._release()

    def _release(self) -> None:
        """Break this connection's reference cycles once it is lost and its application has
        returned (called once, by whichever of the two comes last), so that reference counting
        frees it at once."""
        scope: Any = getattr(self, "scope", None)
        if scope is not None:
            scope.pop("extensions", None)
        self.conn.parser.close()

    def _can_send_now(self) -> bool:
        return (
            self.handshake_complete
            and not self.close_sent
            and not self.disconnected
            and self.initial_response is None
            and self.writable.on
            and not self._socket.is_closing()
        )

    def send_nowait(self, frame: bytes | str) -> bool:
        """Write one data frame now if the ASGI ``send`` would neither wait nor refuse."""
        if not self.conn.extensions:  # framed here, as the events are (a command's ack)
            if isinstance(frame, bytes):
                return self.send_built_nowait(server_frame(frame, text=False))
            return self.send_built_nowait(server_frame(frame.encode(), text=True))
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
