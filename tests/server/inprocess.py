"""A game server in the test's own process (uvicorn on a free port, the server's own WebSocket
protocol, real sockets), for tests that reach into the running server: its runtime, its
connections' objects."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import uvicorn
from procs import free_port, scaled, until

from server.app import create_app
from server.settings import Settings
from server.transport.runtime import Runtime


@dataclass
class InProcess:
    """The running server: its runtime, its WebSocket address and uvicorn's server."""

    runtime: Runtime
    ws: str
    server: uvicorn.Server


@contextlib.asynccontextmanager
async def serve_in_process(settings: Settings, **uvicorn_options: Any) -> AsyncIterator[InProcess]:
    """Serve ``settings``' application until the block ends (``uvicorn_options``: more of
    ``uvicorn.Config``'s arguments)."""
    app = create_app(settings)
    port = free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        ws="server.transport.coalesce:CoalescingWebSocketProtocol",
        **uvicorn_options,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    await until(lambda: server.started, scaled(20), "uvicorn started")  # (it has no event)
    try:
        yield InProcess(app.state.runtime, f"ws://127.0.0.1:{port}/ws", server)
    finally:
        server.should_exit = True
        await task
