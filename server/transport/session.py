"""One WebSocket connection: a reader and a writer around a bounded send queue.

The reader (the connection's own ASGI task) hands each frame to the sans-I/O
:class:`~server.transport.connection.Connection` and runs the commands it lets through with
:func:`server.transport.handlers.handle`, one at a time, in order; it queues each reply. Room
events arrive
from the feed through a sink that never blocks: when the queue is full the client is not
reading, and it is closed with 4000 rather than delay its room. A frame for a connection with
nothing queued is written at once when the server's WebSocket protocol can do that without
waiting (:mod:`server.transport.coalesce`); otherwise it is queued for the writer, a task that
exists
only while frames are queued, so an idle connection costs no task of its own.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import functools
import itertools
import logging
import os
import secrets
import time
from collections.abc import Awaitable, Callable

from starlette.types import Receive, Scope, Send

import protocol.messages as pm
from protocol.codec import encode
from protocol.errors import make_error
from protocol.transport import PROTOCOL_MINOR, PROTOCOL_VERSION, CloseCode, Encoding
from protocol.types import MAX_ID_LENGTH
from server import game
from server.boundary import wire
from server.domain.timing import now_ms
from server.fanout.feed import raise_if_cancelling
from server.settings import Settings
from server.transport import connection as conn
from server.transport import handlers, replies
from server.transport.coalesce import (
    PEER_READY,
    SEND_BUILT_NOWAIT,
    SEND_NOWAIT,
    SendBuiltNowait,
    SendNowait,
)
from server.transport.context import Context, Handled
from server.transport.runtime import Runtime

__all__ = ["Session"]

log = logging.getLogger("yahtzee.session")

_ids = itertools.count(1)
_PROCESS = f"{os.getpid()}-{secrets.token_hex(3)}"
_CLOSE = object()
_ENTERING = (pm.Join, pm.Rejoin, pm.Spectate)

Frame = bytes | str


@functools.lru_cache(maxsize=8)
def _limits(settings: Settings) -> conn.Limits:
    """The per-connection limits of ``settings`` (one object for every connection)."""
    return conn.Limits(
        max_frame_bytes=settings.max_frame_bytes,
        rate_per_second=settings.rate_per_second,
        burst=settings.rate_burst,
    )


def _gone(*_args: object) -> None:
    """What a closed session's context sends to: nothing."""


class Session:
    """Most connections are idle most of the time, and one process holds thousands: a session
    keeps little, and makes what only activity needs (the send queue, the rate buckets, the
    answer cache, a waiter for :meth:`drain`) when it is needed."""

    __slots__ = ("_held", "_peer_ready", "_receive", "_running", "_send_built_nowait",
                 "_send_nowait", "_transmit", "_writer", "close_code", "conn_id", "ctx",
                 "encoding", "protocol", "queue", "rt")  # fmt: skip

    def __init__(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        runtime: Runtime,
        encoding: Encoding,
        address: str = "",
    ) -> None:
        """A session on an accepted WebSocket (ASGI ``receive`` and ``send``)."""
        self._receive = receive
        self._transmit = send
        self.rt = runtime
        self.encoding = encoding
        self.conn_id = f"{_PROCESS}-{next(_ids)}"
        self.protocol = conn.Connection(encoding, _limits(runtime.settings))
        #: frames for the writer; None while there is none
        self.queue: collections.deque[Frame | object] | None = None
        #: frames made while a join/rejoin/spectate runs: sent after its ack (SPEC: the ack
        #: first, then the snapshot or missed events up to the ack's seq, then live events)
        self._held: list[Frame] | None = None
        self._writer: asyncio.Task[None] | None = None
        # the server's own WebSocket protocol writes a frame at once when nothing is queued
        extensions = scope.get("extensions") or {}
        self._send_nowait: SendNowait | None = extensions.get(SEND_NOWAIT)
        self._send_built_nowait: SendBuiltNowait | None = extensions.get(SEND_BUILT_NOWAIT)
        #: returns once the client has read the handshake's response (the welcome waits)
        self._peer_ready: Callable[[], Awaitable[None]] | None = extensions.get(PEER_READY)
        self.close_code: int | None = None
        self.ctx = Context(
            runtime, runtime.rooms, self.conn_id, self._on_event, self._send, address
        )
        #: whether a command is running; a future when :meth:`drain` waits for its end
        self._running: bool | asyncio.Future[None] = False

    @property
    def role(self) -> str | None:
        member = self.ctx.member
        return member.role if member is not None else None

    @property
    def room(self) -> str | None:
        member = self.ctx.member
        return member.room if member is not None else None

    @property
    def player(self) -> str | None:
        member = self.ctx.member
        return member.player if member is not None else None

    # -- lifecycle ------------------------------------------------------------------------------

    async def run(self) -> None:
        """The connection's life: its welcome, then every frame it sends, until it closes.

        The welcome waits until the client has read the handshake's response (SPEC.md 3.4):
        a client that listens for messages only once the connection is open gets it."""
        try:
            peer_ready, self._peer_ready = self._peer_ready, None
            if peer_ready is not None:
                await peer_ready()
            self._send(self._welcome())
            try:
                await self._read_loop()
            finally:
                writer = self._writer
                if writer is not None:
                    await asyncio.wait({writer}, timeout=5)
                    writer.cancel()  # a client that does not read what is queued for it
                await self._leave_queue()
                await self._leave_room(disconnect=True)
        finally:
            # The context's callbacks are this session's bound methods: a reference cycle that
            # only a collection would break, and the server collects rarely
            # (server/ops/collector.py). Broken here, a closed session is freed at once.
            self.ctx.sink = self.ctx.send = _gone

    def _welcome(self) -> pm.Welcome:
        settings = self.rt.settings
        return pm.Welcome(
            server_version=self.rt.version,
            protocol_version=PROTOCOL_VERSION,
            protocol_minor=PROTOCOL_MINOR,
            encoding=self.encoding,
            limits=pm.Limits(
                max_frame_bytes=settings.max_frame_bytes,
                max_messages_per_second=max(1, int(settings.rate_per_second)),
                burst=settings.rate_burst,
                max_name_length=min(settings.max_name_length, game.MAX_NAME_LENGTH),
                max_id_length=MAX_ID_LENGTH,
                send_queue_limit=settings.send_queue_size,
            ),
            heartbeat_seconds=max(1, round(settings.heartbeat_seconds)),
            server_time_ms=now_ms(),
        )

    def close(self, code: int) -> None:
        """Ask the writer to flush what is queued and close with ``code``."""
        if self.close_code is None:
            self.close_code = code
            queue = self._queue()
            if code == CloseCode.SLOW_CONSUMER:
                queue.clear()  # it does not read them anyway: close at once
            queue.append(_CLOSE)
            self._wake_writer()

    async def drain(self) -> None:
        """Shutdown: let the command in flight finish, then close with 1012 (service restart);
        the reader ignores frames from now on (``rt.draining``)."""
        if self._running is True:
            self._running = asyncio.get_running_loop().create_future()
        if isinstance(self._running, asyncio.Future):
            await asyncio.shield(self._running)
        self.close(CloseCode.SERVICE_RESTART)

    # -- writing --------------------------------------------------------------------------------

    def _queue(self) -> collections.deque[Frame | object]:
        queue = self.queue
        if queue is None:
            queue = self.queue = collections.deque()
        return queue

    def _wake_writer(self) -> None:
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write())

    async def _write(self) -> None:
        """Send what is queued, then end (a new frame starts a new writer)."""
        queue = self._queue()
        try:
            while queue:
                frame = queue.popleft()
                if frame is _CLOSE:
                    code = self.close_code or CloseCode.NORMAL
                    with contextlib.suppress(Exception):
                        await self._transmit({"type": "websocket.close", "code": code})
                    queue.clear()
                elif isinstance(frame, bytes):
                    await self._transmit({"type": "websocket.send", "bytes": frame})
                elif isinstance(frame, str):
                    await self._transmit({"type": "websocket.send", "text": frame})
        except (RuntimeError, OSError):
            queue.clear()  # the peer is gone (the server raises an OSError, or a RuntimeError
            # for a send after the close)
        finally:
            self._writer = None
            if not queue and self.queue is queue:
                self.queue = None  # an idle connection keeps no queue

    def _send(self, message: pm.Message) -> Frame | None:
        """Encode and queue one message; returns the frame (None when it was not queued)."""
        frame: Frame = encode(message, self.encoding)
        return frame if self._enqueue(frame) else None

    def _on_event(self, event: wire.EncodedEvent) -> None:
        """Feed sink: the event's shared bytes for this connection's encoding; never blocks.

        The usual case first, in as few calls as it takes (it runs for every watcher of every
        event): nothing queued or held, so the WebSocket frame built once for every
        connection is written at once."""
        if self._writer is None and self._held is None and self.close_code is None:
            built = self._send_built_nowait
            if built is not None and built(event.ws_frame(self.encoding)):
                return
        self._enqueue(event.frame(self.encoding))

    def _enqueue(self, frame: Frame) -> bool:
        """Queue one frame; a client whose queue is full is closed with 4000 instead."""
        if self.close_code is not None:
            return False
        if self._held is not None:
            self._held.append(frame)
            return True
        if self._writer is None and self._send_nowait is not None and self._send_nowait(frame):
            return True  # nothing was queued (no writer): the order is kept
        queue = self._queue()
        if len(queue) >= self.rt.settings.send_queue_size:
            self.rt.metrics.slow_clients.inc()
            log.info("closing slow client %s", self.conn_id)
            self.close(CloseCode.SLOW_CONSUMER)
            return False
        queue.append(frame)
        self._wake_writer()
        return True

    # -- reading --------------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        while True:
            message = await self._receive()
            if message["type"] == "websocket.disconnect":
                return
            frame: Frame | None = message.get("bytes")
            if frame is None:
                frame = message.get("text")
            if frame is None or self.rt.draining:
                continue
            self._running = True
            try:
                await self._on_frame(frame)
            finally:
                running, self._running = self._running, False
                if isinstance(running, asyncio.Future) and not running.done():
                    running.set_result(None)
            if self.close_code is not None:
                return

    async def _on_frame(self, frame: Frame) -> None:
        incoming = self.protocol.receive(frame)
        if isinstance(incoming, conn.Close):
            self.close(incoming.code)
        elif isinstance(incoming, conn.Answer):
            self._enqueue(incoming.frame)
            self.rt.metrics.commands.labels("retry", "cached").inc()
        elif isinstance(incoming, conn.Refuse):
            seq = replies.room_seq(self.ctx)
            self._send(make_error(incoming.code, incoming.command_id, seq=seq,
                                  message=incoming.message))  # fmt: skip
            self.rt.metrics.commands.labels("invalid", incoming.code).inc()
            # After a refusal the connection is read again only when the rate limit would let
            # one more frame through: a client sending garbage or flooding is served at the
            # limit's pace (its frames wait in its own socket, each answered in turn) and cannot
            # take the event loop from honest players; a frame that was not refused waits for
            # nothing.
            rate = self.rt.settings.rate_per_second
            await asyncio.sleep(1.0 / rate if rate > 0 else 0.0)
        else:
            await self._run(incoming)

    async def _run(self, command: pm.ClientMessage) -> None:
        kind = pm.message_type(command)
        started = time.perf_counter()
        if isinstance(command, _ENTERING):
            self._held = []
        try:
            handled = await handlers.handle(self.ctx, command)
        except Exception:
            raise_if_cancelling()
            log.exception("command %s failed", kind)
            handled = Handled(make_error("internal_error", command.id))
        finally:
            held, self._held = self._held, None
        if handled.enter is not None:
            self.ctx.member = handled.enter
            if self.rt.quickplay.is_waiting(self.conn_id):
                await self._leave_queue()  # a player at a table waits for no other game
        sent = self._send(handled.reply)
        # Room events that came while the command ran follow its reply, if it entered the room;
        # a refused one's subscription was closed, and its retry subscribes anew.
        for frame in held or () if handled.enter is not None else ():
            self._enqueue(frame)
        retryable = isinstance(handled.reply, pm.Error) and handled.reply.retryable
        if sent is not None and not isinstance(command, pm.Ping) and not retryable:
            self.protocol.remember(command.id, sent)  # a retryable error is worth a retry
        outcome = handled.reply.code if isinstance(handled.reply, pm.Error) else "ok"
        count, seconds = self.rt.metrics.command(kind, outcome)
        count.inc()
        seconds.observe(time.perf_counter() - started)
        if handled.leave:
            await self._leave_room(disconnect=handled.close is not None)
        if handled.close is not None:
            self.close(handled.close)

    async def _leave_queue(self) -> None:
        """A closed connection's player leaves the quick-play queue (if it waits there)."""
        try:
            await self.rt.quickplay.disconnected(self.conn_id)
        except Exception as exc:  # Redis down: the ticket expires once nobody renews it
            raise_if_cancelling()
            self.rt.metrics.redis_errors.labels("quickplay").inc()
            log.info("leaving the quick-play queue: %s", exc)

    async def _leave_room(self, *, disconnect: bool) -> None:
        member, self.ctx.member = self.ctx.member, None
        if member is None:
            return
        member.subscription.close()
        upkeep = self.rt.upkeep
        try:
            if member.role == "spectator":
                await upkeep.spectator_left(member.room, self.conn_id)
            elif member.player is not None:
                if disconnect and not self.rt.draining:
                    # a draining process keeps the lease: it runs out unless the player rejoins
                    await self.rt.seats.release_seat(member.room, member.player, self.conn_id)
                if not (disconnect and self.rt.draining):
                    await upkeep.drop_lease(member.room, member.player, self.conn_id)
        except Exception as exc:  # the room may be gone, or Redis down: nothing to undo
            raise_if_cancelling()
            self.rt.metrics.redis_errors.labels("leave").inc()
            log.info("leaving room %s: %s", member.room, exc)
