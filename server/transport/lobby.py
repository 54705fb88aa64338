"""The live lobby: one producer per process pushes the public room list to every watcher.

``GET /lobby`` (SPEC.md 13.3) is a Server-Sent Events stream. However many watchers there are,
ONE task per process reads the list (at most once per ``interval``, through the lobby cache of
``listing.public_rooms``), encodes it once, and hands the same bytes to every watcher when they
differ from the last list sent. A watcher holds at most one pending list: a slow watcher gets
the newest list, never a backlog. The producer runs only while someone watches.

:meth:`Lobby.close` (at server shutdown) ends every stream cleanly, so the HTTP server does not
wait for them: EventSource clients reconnect by themselves (``retry``).

This module knows nothing of Redis or the runtime: it is given the function that reads the
current list as bytes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

__all__ = ["Lobby", "Watcher", "event_frame"]

log = logging.getLogger("yahtzee.lobby")

RETRY_MS = 3000
"""The reconnection delay sent to EventSource clients (the ``retry`` field)."""


def event_frame(data: bytes, event: bytes = b"rooms") -> bytes:
    """One SSE event; ``data`` is one line of JSON (JSON text never holds a raw newline)."""
    return b"event: " + event + b"\ndata: " + data + b"\n\n"


class Watcher:
    """One open stream: the newest list not yet sent (a queue of length one), and on a stream
    opened with a player token the newest ``turns`` event not yet sent (another one)."""

    __slots__ = ("address", "latest", "ready", "turns")

    def __init__(self, address: str) -> None:
        self.address = address
        self.latest: bytes | None = None
        self.turns: bytes | None = None
        self.ready = asyncio.Event()

    def offer(self, frame: bytes) -> None:
        self.latest = frame  # replaces a list the watcher has not read yet
        self.ready.set()

    def offer_turns(self, frame: bytes) -> None:
        self.turns = frame  # replaces a turn list the watcher has not read yet
        self.ready.set()

    def take(self) -> bytes | None:
        frames = [f for f in (self.latest, self.turns) if f is not None]
        self.latest = self.turns = None
        self.ready.clear()
        return b"".join(frames) if frames else None


class Lobby:
    """The watchers of this process and their one producer."""

    def __init__(
        self,
        read: Callable[[], Awaitable[bytes]],
        *,
        interval: float = 1.0,
        keepalive: float = 15.0,
        on_error: Callable[[Exception], None] = lambda exc: None,
    ) -> None:
        self._read = read
        self.interval = interval
        self.keepalive = keepalive
        self._on_error = on_error
        self.watchers: set[Watcher] = set()
        self.current: bytes | None = None  # the last list read, as an event frame
        self._task: asyncio.Task[None] | None = None
        self._closed = asyncio.Event()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    def add(self, address: str) -> Watcher:
        """A new watcher; it gets the current list at once (or as soon as it is read)."""
        watcher = Watcher(address)
        self.watchers.add(watcher)
        if self.current is not None:
            watcher.offer(self.current)
        if self._task is None and not self.closed:
            self._task = asyncio.get_running_loop().create_task(self._produce())
        return watcher

    def remove(self, watcher: Watcher) -> None:
        self.watchers.discard(watcher)

    def close(self) -> None:
        """End every stream and the producer (idempotent)."""
        self._closed.set()

    async def stop(self) -> None:
        """Close, and end the producer (even in the middle of a read)."""
        self.close()
        task = self._task
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _produce(self) -> None:
        try:
            while self.watchers and not self.closed:
                try:
                    frame = event_frame(await self._read())
                except Exception as exc:  # the storage is down: keep the last list, retry
                    log.warning("lobby not read: %s", exc)
                    self._on_error(exc)
                else:
                    if frame != self.current:
                        self.current = frame
                        for watcher in self.watchers:
                            watcher.offer(frame)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.interval):
                        await self._closed.wait()
        finally:
            # No await between the last check of ``watchers`` and here: a watcher added
            # after it finds ``_task`` None and starts a new producer.
            self._task = None
            self.current = None  # nobody watched: the next watcher must not get a stale list

    async def stream(self, watcher: Watcher) -> AsyncIterator[bytes]:
        """The bytes of one watcher's stream: the reconnection delay, the current list, then a
        new list whenever it changes and a comment line every ``keepalive`` seconds of silence;
        it ends when the lobby closes."""
        yield f"retry: {RETRY_MS}\n\n".encode()
        closing = asyncio.ensure_future(self._closed.wait())
        try:
            while not self.closed:
                ready = asyncio.ensure_future(watcher.ready.wait())
                try:
                    done, _ = await asyncio.wait(
                        (ready, closing),
                        timeout=self.keepalive,
                        return_when=asyncio.FIRST_COMPLETED,
                    )
                finally:
                    ready.cancel()
                if self.closed:
                    return
                frame = watcher.take() if ready in done else None
                yield frame if frame is not None else b": keep-alive\n\n"
        finally:
            closing.cancel()
