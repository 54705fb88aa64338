"""The transition script's calls, pipelined on one connection of their own (single Redis only).

Every command a player sends ends in one call of ``transition.lua``. Through redis-py's client
each call checks a connection out of the pool and back in, wraps its write in a task and its
read in a timeout, and goes through the client's retry and script layers: about as much CPU
as the rest of the command's Redis work together. :class:`ScriptPipe` keeps one connection
(taken from the client's pool for good, so closing the client closes it) and writes each call
on it without waiting for the replies of the calls before it; one reader task hands the
replies, which Redis sends in order, to the callers in order. The calls made in one turn of
the event loop go out in one write at its end: on loopback a write to Redis is a system call
that also wakes Redis, and was a sixth of the server's CPU under load when each call made its
own.

What the pool client promised stays: a call that gets no reply within the socket timeout fails
with ``TimeoutError`` (then the connection is dropped, and every call on it fails the same
way), a broken connection fails its calls with ``ConnectionError``, and a call that failed so
is tried once more on a new connection (the script's compare-and-set and result cache make a
repeat harmless). ``NOSCRIPT`` (a restarted or flushed Redis) loads the script, once for all
the calls that got it, and calls again.

The replies are read by a protocol of the pipe's own on the connection's transport
(:class:`_Replies`): parsed by hiredis where the bytes arrive and handed to the waiting calls
there, with no reader task between. A reader task made each batch of replies cost one more turn
of the event loop, a task step and redis-py's read path, at every command.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any, Final

import hiredis
import redis.exceptions as rex

__all__ = ["ScriptPipe", "pack"]

#: PRIVATE API: this module relies on internals of redis-py's asyncio Connection (its stream writer
#: and response reader), checked against these versions; tests/test_private_api.py fails when an
#: installed version differs: re-read this module against the new version, then update the pin.
PRIVATE_API: Final = {"redis": "8.1.0"}

_RETRY_PAUSE = 0.05  # seconds before the one retry on a new connection


def pack(args: tuple[Any, ...] | list[Any]) -> bytes:
    """One command in RESP: ``args`` are bytes, str, int or float, or subclasses of them
    (``DataError`` otherwise).

    hiredis (which ``redis[hiredis]`` brings) builds it in C: a commit's call has about twenty
    arguments, and the loop in Python that did this was a thirtieth of a command's CPU.
    """
    try:
        packed: bytes = hiredis.pack_command(tuple(args))
    except TypeError:  # hiredis takes the exact types only: an Enum member, a bool
        plain: tuple[Any, ...] = tuple(_plain(arg) for arg in args)
        packed = hiredis.pack_command(plain)
    return packed


def _plain(arg: Any) -> bytes | float:
    if isinstance(arg, bytes | bytearray | memoryview):
        return bytes(arg)
    if isinstance(arg, str):
        return arg.encode()
    if isinstance(arg, int):  # a bool too, as 1 or 0
        return b"%d" % arg
    if isinstance(arg, float):
        return float(arg)
    # named by type only: the values of the other arguments may be secrets (token hashes)
    raise rex.DataError(f"cannot send {type(arg).__name__} to Redis")


class ScriptPipe:
    """Calls of one registered script (``client.register_script``) on one pipelined connection
    of ``client``'s pool; see the module docstring."""

    def __init__(self, client: Any, script: Any) -> None:
        self.client = client
        self.script = script
        kwargs = client.connection_pool.connection_kwargs
        self.timeout: float | None = kwargs.get("socket_timeout")
        self._conn: Any = None
        self._replies: _Replies | None = None
        self._connecting = asyncio.Lock()
        #: calls written and not answered yet, oldest first: (future, when it was written)
        self._waiting: collections.deque[tuple[asyncio.Future[Any], float]] = collections.deque()
        self._watchdog: asyncio.TimerHandle | None = None
        #: commands queued for the write at the end of this turn of the loop, and its handle
        self._unsent: list[bytes] = []
        self._flush_handle: asyncio.Handle | None = None
        #: the one ``SCRIPT LOAD`` under way, shared by every call that got ``NOSCRIPT``
        self._loading: asyncio.Future[Any] | None = None

    async def __call__(self, keys: list[str], args: list[Any]) -> Any:
        command = pack(("EVALSHA", self.script.sha, len(keys), *keys, *args))
        for attempt in range(3):
            try:
                return await self._call(command)
            except rex.NoScriptError:
                if attempt == 2:
                    raise
                await self._load_script()
            except (rex.ConnectionError, rex.TimeoutError):
                if attempt > 0:
                    raise
                await asyncio.sleep(_RETRY_PAUSE)
        raise AssertionError("unreachable")  # pragma: no cover

    async def _load_script(self) -> None:
        """``SCRIPT LOAD`` once for every call that found the script missing: after a start
        or a Redis restart every waiting call gets ``NOSCRIPT`` at once, and a load each would
        take as many pool connections (``MaxConnectionsError`` once the pool is exhausted)."""
        loading = self._loading
        if loading is None:
            loading = self._loading = asyncio.ensure_future(
                self.client.script_load(self.script.script)
            )
            loading.add_done_callback(self._loaded)
        # shielded: a caller that is cancelled does not cancel the others' load
        await asyncio.shield(loading)

    def _loaded(self, loading: asyncio.Future[Any]) -> None:
        self._loading = None
        if not loading.cancelled():
            loading.exception()  # retrieved: the callers that still wait get it themselves

    async def _call(self, command: bytes) -> Any:
        conn = self._conn
        if conn is None or not conn.is_connected or self._replies is None:
            conn = await self._connect()
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        # No await between queueing the future and the command: the replies come in this order.
        self._waiting.append((future, loop.time()))
        self._unsent.append(command)
        if self._flush_handle is None:
            self._flush_handle = loop.call_soon(self._flush, conn)
        if self._watchdog is None and self.timeout:
            self._watchdog = loop.call_later(self.timeout, self._check_timeout)
        return await future

    def _flush(self, conn: Any) -> None:
        """Write the commands queued in this turn of the loop, in one piece."""
        self._flush_handle = None
        unsent, self._unsent = self._unsent, []
        if not unsent:
            return
        try:
            conn._writer.write(b"".join(unsent))
        except (OSError, RuntimeError, AttributeError) as exc:
            self._fail(rex.ConnectionError(f"Error while writing to Redis: {exc}"))

    async def _connect(self) -> Any:
        async with self._connecting:
            conn = self._conn
            if conn is not None and conn.is_connected and self._replies is not None:
                return conn
            if conn is None:
                conn = self._conn = await self.client.connection_pool.get_connection()
            elif conn.is_connected:  # a connection that failed: its late replies are not ours
                await conn.disconnect(nowait=True)
            try:
                async with asyncio.timeout(self.timeout):
                    await conn.connect()
            except TimeoutError as exc:
                raise rex.TimeoutError("Timeout connecting to Redis") from exc
            if self._replies is not None:  # (the connection was closed under it)
                self._replies.detach()
            self._replies = _Replies.take_over(conn, self)
            return conn

    def _reply(self, reply: Any) -> None:
        """Hand one reply to the oldest waiting call."""
        if not self._waiting:  # a reply nobody waits for: out of step, start again
            self._fail(rex.ConnectionError("unexpected reply from Redis"))
            return
        future, _ = self._waiting.popleft()
        if future.done():
            return
        if isinstance(reply, Exception):
            future.set_exception(reply)
        else:
            future.set_result(reply)

    def _check_timeout(self) -> None:
        """The oldest call waited ``timeout``: fail them all (one timer, not one per call)."""
        self._watchdog = None
        if not self._waiting:
            return
        loop = asyncio.get_running_loop()
        assert self.timeout is not None
        oldest = self._waiting[0][1]
        if loop.time() - oldest >= self.timeout:
            self._fail(rex.TimeoutError("Timeout reading from Redis"))
        else:
            self._watchdog = loop.call_at(oldest + self.timeout, self._check_timeout)

    def _fail(self, error: Exception) -> None:
        """Fail every waiting call and stop reading; the next call connects again."""
        waiting, self._waiting = self._waiting, collections.deque()
        self._unsent = []  # their calls fail below; the next call writes on a new connection
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        for future, _ in waiting:
            if not future.done():
                future.set_exception(error)
                future.exception()  # retrieved: a caller that is gone logs nothing
        replies, self._replies = self._replies, None
        if replies is not None:  # its connection's later bytes are nobody's
            replies.detach()


_INCOMPLETE: Final = object()
"""What the hiredis reader gives while a reply is not complete yet."""


class _Replies(asyncio.Protocol):
    """The pipe's connection's replies, parsed where they arrive and handed to the pipe.

    It takes the connection's transport over from redis-py's stream protocol, which it keeps
    informed of the transport's flow control and of its end, so that redis-py can still close
    the connection (and wait for that) as it closes any other.
    """

    def __init__(self, pipe: ScriptPipe, parser: Any, stream: asyncio.BaseProtocol) -> None:
        self._pipe: ScriptPipe | None = pipe
        self._parser = parser
        self._stream = stream

    @classmethod
    def take_over(cls, conn: Any, pipe: ScriptPipe) -> _Replies:
        """Read ``conn``'s replies for ``pipe`` from now on (``conn`` just connected)."""
        encoding: dict[str, str] = {}
        if conn.encoder.decode_responses:  # as redis-py's own hiredis parser would decode
            encoding = {"encoding": conn.encoder.encoding, "errors": conn.encoder.encoding_errors}
        parser = hiredis.Reader(
            protocolError=rex.InvalidResponse,
            replyError=conn._parser.parse_error,  # NOSCRIPT -> NoScriptError, and so on
            notEnoughData=_INCOMPLETE,
            **encoding,
        )
        transport = conn._writer.transport
        replies = cls(pipe, parser, transport.get_protocol())
        transport.set_protocol(replies)
        buffered = conn._reader._buffer  # (bytes the stream had already read: none expected)
        if buffered:
            data = bytes(buffered)
            buffered.clear()
            replies.data_received(data)
        return replies

    def detach(self) -> None:
        """The pipe has given this connection up: its bytes from now on are ignored."""
        self._pipe = None

    def data_received(self, data: bytes) -> None:
        if self._pipe is None:
            return
        parser = self._parser
        parser.feed(data)
        try:
            reply = parser.gets()
            while reply is not _INCOMPLETE:
                pipe = self._pipe
                if pipe is None:  # failed by the reply before (out of step)
                    return
                pipe._reply(reply)
                reply = parser.gets()
        except (rex.RedisError, hiredis.ProtocolError) as exc:  # bytes that are not RESP
            self._lose(rex.ConnectionError(f"Redis sent an invalid reply: {exc!r}"))

    def eof_received(self) -> bool | None:
        self._lose(rex.ConnectionError("Redis closed the connection"))
        return self._stream.eof_received()  # type: ignore[attr-defined, no-any-return]

    def connection_lost(self, exc: Exception | None) -> None:
        self._lose(rex.ConnectionError(f"Redis connection lost: {exc!r}"))
        self._stream.connection_lost(exc)

    def pause_writing(self) -> None:
        self._stream.pause_writing()

    def resume_writing(self) -> None:
        self._stream.resume_writing()

    def _lose(self, error: Exception) -> None:
        pipe, self._pipe = self._pipe, None
        if pipe is not None and pipe._replies is self:  # (an end told late is not the new one's)
            pipe._fail(error)
