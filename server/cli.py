"""The ``yahtzee`` command line.

``yahtzee serve`` runs the server. Other subcommands (``play``, ``watch``, ``bot``, ...) live in
``clients/``: when ``clients.cli`` is importable, its ``register(subparsers)`` adds them, so the
server package never imports client code at module level and the parser stays easy to extend.
Each subparser sets ``func`` (``Callable[[argparse.Namespace], int | None]``).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["build_parser", "main"]


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from server.app import create_app
    from server.embedded_redis import EmbeddedRedis
    from server.settings import Settings

    log_level = str(args.log_level)
    logging.basicConfig(level=log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    embedded: EmbeddedRedis | None = None
    if args.workers > 1 and not os.environ.get("REDIS_URL"):
        # One embedded server for all workers, owned by this (parent) process.
        embedded = EmbeddedRedis()
        os.environ["REDIS_URL"] = embedded.start()
        logging.getLogger("yahtzee.server").warning(
            "REDIS_URL is not set: rooms live in a private embedded server at %s "
            "and vanish when it stops",
            embedded.url,
        )
    heartbeat = Settings.from_env().heartbeat_seconds
    host, port = str(args.host), int(args.port)
    print(
        f"Yahtzee server on http://{host}:{port}  (WebSocket: ws://{host}:{port}/ws)",
        flush=True,
    )
    # Shared by both modes. The WebSocket layer's own frame cap is a backstop far above the
    # protocol limit, which the session enforces with a typed error.
    options: dict[str, Any] = {
        "host": host,
        "port": port,
        "log_level": log_level,
        "ws": "websockets-sansio",
        "ws_ping_interval": heartbeat,
        "ws_ping_timeout": heartbeat,
        "ws_max_size": 1_048_576,
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
            uvicorn.run(create_app(Settings.from_env(), handle_signals=True), **options)
    finally:
        if embedded is not None:
            embedded.stop()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="yahtzee", description="Real-time Yahtzee: server and clients."
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

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
    serve.set_defaults(func=_serve)

    try:
        clients_cli = importlib.import_module("clients.cli")
    except ModuleNotFoundError as exc:
        if exc.name not in ("clients", "clients.cli"):
            raise
        clients_cli = None
    register = getattr(clients_cli, "register", None)
    if callable(register):
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    result = args.func(args)
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
