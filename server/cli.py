"""The ``yahtzee`` command line, composed from the packages that provide subcommands.

Each package registers its subcommands through the ``yahtzee.commands`` entry points declared
in ``pyproject.toml`` (``serve`` here; ``play``, ``watch``, ``bot``, ``load`` ... in ``clients``),
so the composition lives at the top of the project and no server module imports a client. Each
subparser sets ``func`` (``Callable[[argparse.Namespace], int | None]``).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["build_parser", "main", "register"]

ENTRY_POINTS = "yahtzee.commands"


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from server.app import create_app
    from server.ops.embedded_redis import EmbeddedRedis, start_embedded
    from server.settings import Settings
    from server.transport.runtime import FD_RESERVE, connection_cap

    log_level = str(args.log_level)
    logging.basicConfig(level=log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    embedded: EmbeddedRedis | None = None
    if args.workers > 1 and not os.environ.get("REDIS_URL"):
        # One embedded server for all workers, owned by this (parent) process.
        embedded = start_embedded(logging.getLogger("yahtzee.server"))
        os.environ["REDIS_URL"] = embedded.url
    if args.sandbox:  # through the environment, so that every worker process sees it
        os.environ["YAHTZEE_SANDBOX"] = "1"
    settings = Settings.from_env()
    host, port = str(args.host), int(args.port)
    print(
        f"Yahtzee server on http://{host}:{port}  (WebSocket: ws://{host}:{port}/ws)",
        flush=True,
    )
    if settings.sandbox:
        print(
            "SANDBOX: POST /sandbox/rooms makes rooms with seeded dice or at a game position "
            "(SPEC.md 13.15); not for real games",
            flush=True,
        )
    # The WebSocket layer's own frame cap is a backstop far above the protocol limit, which the
    # connection layer enforces with a typed error. Compression costs more CPU than it saves on
    # ~100-byte frames, so it is off unless asked for.
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": log_level,
        "ws": "server.transport.coalesce:CoalescingWebSocketProtocol",
        "ws_ping_interval": settings.heartbeat_seconds,
        "ws_ping_timeout": settings.heartbeat_seconds,
        "ws_max_size": 1_048_576,
        "ws_per_message_deflate": settings.per_message_deflate,
        "timeout_keep_alive": 5,
        # uvicorn's own limit sits above the application's connection cap (which refuses
        # WebSockets and lobby streams with 503): at the cap, health checks still get in.
        "limit_concurrency": connection_cap(settings) + FD_RESERVE // 2,
        "h11_max_incomplete_event_size": 16_384,
        "http": "server.transport.guard:GuardedProtocol",
    }
    try:
        if args.workers > 1:
            uvicorn.run(
                "server.app:create_app_from_env",
                factory=True,
                workers=args.workers,
                timeout_graceful_shutdown=None,
                **options,
            )
        else:
            uvicorn.run(create_app(settings, handle_signals=True), **options)
    finally:
        if embedded is not None:
            embedded.stop()
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``serve``."""
    serve = sub.add_parser(
        "serve",
        help="run the game server",
        description="Run the game server. Settings come from the environment (REDIS_URL, ...); "
        "without REDIS_URL a private embedded Redis-compatible server is started.",
    )
    serve.add_argument("--host", default=os.environ.get("HOST", "127.0.0.1"))
    serve.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8000")))
    serve.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    serve.add_argument(
        "--log-level",
        default=os.environ.get("YAHTZEE_LOG_LEVEL", "info"),
        choices=["critical", "error", "warning", "info", "debug"],
    )
    serve.add_argument(
        "--sandbox",
        action="store_true",
        help="a sandbox for client authors: seeded dice and rooms at a given position "
        "(POST /sandbox/rooms, SPEC.md 13.15); never for real games",
    )
    serve.set_defaults(func=_serve)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="yahtzee", description="Real-time Yahtzee: server and clients."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    registered = {ep.value: ep for ep in importlib.metadata.entry_points(group=ENTRY_POINTS)}
    if not registered:  # running from a source tree that was never installed
        register(sub)
    for entry_point in sorted(registered.values(), key=lambda ep: ep.name):
        entry_point.load()(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    result = args.func(args)
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
