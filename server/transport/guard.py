"""HTTP connections that never finish their request are closed.

uvicorn times out idle keep-alive connections but not a request whose headers never complete
(slowloris): a few hundred such sockets would hold the process's connection slots for good.
These protocol classes close a connection whose first request has not started within
``YAHTZEE_HANDSHAKE_SECONDS``; once a request started (or the connection became a WebSocket)
the timer has nothing to do. uvicorn is given ``server.transport.guard:GuardedProtocol`` (the
fastest
one available) as its ``http`` option.

They also tell the application when uvicorn's shutdown begins: uvicorn then waits for every
response in progress to end, and a stream that never ends on its own (``GET /lobby``) would
hold the process forever. The application puts a callable under :data:`ON_SHUTDOWN` in its
lifespan state; it is called (once per open connection: it must be idempotent) when uvicorn
asks the connections to finish, whichever signal (SIGINT, SIGTERM) started the shutdown.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from uvicorn.protocols.http.h11_impl import H11Protocol

from server.settings import Settings

__all__ = ["ON_SHUTDOWN", "GuardedH11Protocol", "GuardedProtocol"]

#: PRIVATE API: this module relies on internals of uvicorn's HTTP protocols (the current request
#: cycle and the keep-alive timer), checked against these versions; tests/test_private_api.py fails
#: when an installed version differs: re-read this module against the new version, then update the
#: pin.
PRIVATE_API: Final = {"uvicorn": "0.54.0"}

ON_SHUTDOWN = "on_server_shutdown"
"""The key of the application's shutdown callable in its lifespan state."""


class _HeaderDeadline:
    """Mixin for uvicorn's HTTP protocols (both keep the current request in ``cycle``, and the
    lifespan state in ``app_state``)."""

    _header_seconds: float | None = None
    _header_timer: asyncio.TimerHandle | None = None
    cycle: Any
    transport: Any

    @classmethod
    def header_seconds(cls) -> float:
        if _HeaderDeadline._header_seconds is None:
            _HeaderDeadline._header_seconds = Settings.from_env().handshake_timeout_seconds
        return _HeaderDeadline._header_seconds

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[misc]
        loop = asyncio.get_running_loop()
        self._header_timer = loop.call_later(self.header_seconds(), self._header_deadline)

    def _header_deadline(self) -> None:
        transport = self.transport
        if self.cycle is None and transport.get_protocol() is self and not transport.is_closing():
            transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_timer()
        super().connection_lost(exc)  # type: ignore[misc]

    def handle_websocket_upgrade(self, *event: Any) -> None:
        """The connection became a WebSocket: this protocol is done with it (the transport
        talks to the WebSocket protocol from now on, and never calls this one again)."""
        super().handle_websocket_upgrade(*event)  # type: ignore[misc]
        # A pending timer would keep this object and all it holds alive for the rest of the
        # deadline, long enough to reach the collector's oldest generation, where it stays
        # until a full collection: thousands of connections opened in a burst held megabytes.
        self._cancel_header_timer()

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def shutdown(self) -> None:
        super().shutdown()  # type: ignore[misc]
        on_shutdown = getattr(self, "app_state", {}).get(ON_SHUTDOWN)
        if callable(on_shutdown):
            on_shutdown()


class GuardedH11Protocol(_HeaderDeadline, H11Protocol):
    """uvicorn's pure-Python HTTP protocol with the header deadline."""


try:
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

    class GuardedHttpToolsProtocol(_HeaderDeadline, HttpToolsProtocol):
        """uvicorn's httptools protocol with the header deadline."""

        def handle_websocket_upgrade(self, *event: Any) -> None:
            super().handle_websocket_upgrade(*event)
            # The parser and this protocol refer to each other: a cycle that only the
            # collector would free. Dropped as connection_lost does, they go at once.
            self.parser = None  # type: ignore[assignment]

    GuardedProtocol: type[asyncio.Protocol] = GuardedHttpToolsProtocol
except ImportError:  # httptools is an optional speed-up
    GuardedProtocol = GuardedH11Protocol
