"""The bare broadcast server: the baseline that ``yahtzee bench`` measures the game against.

No rules, no Redis, no protocol: a WebSocket at ``/room/<name>`` joins that room, and every frame
a connection sends is answered by one frame, encoded once, written to every connection of the
room (the sender included: its copy is its ack). The frame is a MessagePack array
``[room, seq, client_frame, padding]`` of about 100 bytes, with a per-room ``seq`` so the bench
verifies the bare streams exactly as it verifies the game's.

Why a raw ASGI app on uvicorn (and not the ``websockets`` server or Starlette): it runs on the very
transport the game server runs on (uvicorn, its sans-I/O ``websockets`` protocol, uvloop and
httptools when installed) with the same options (:func:`uvicorn_options`), and it adds nothing
above it (no routing, no request objects). So the game / bare ratio measures what the game adds
(rules, Redis, protocol, fan-out bookkeeping) and not a difference between WebSocket stacks.
Differences left on purpose: the game server gives uvicorn its own subclasses of uvicorn's HTTP
and WebSocket protocol classes (``server.transport.guard``, ``server.transport.coalesce``, which
clients never
import). The HTTP one guards against slow handshakes and acts only before the upgrade; the
WebSocket one coalesces a turn's writes into one, offers a synchronous send, and keeps less per
connection than uvicorn's own (``--idle-connections``: about 12 KiB against this server's 21 KiB;
the bare server on those two classes measured 11.8 KiB). So the bare figures are those of stock
uvicorn, and an idle game connection may cost less than a bare one.

A process serves only its own rooms: with several processes the bench gives each its own port and
keeps every room on one of them, as a hand-sharded server would, so the baseline needs no broker.

``python -m clients.bench.bare --port 9000``
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

import msgspec
import uvicorn

__all__ = ["ROOM_PATH", "frame_fields", "main", "make_app", "uvicorn_options"]

ROOM_PATH = "/room/"
# Pads the broadcast to about the size of a game event (a `rolled` event is ~100-150 bytes).
PADDING = b"." * 64

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def uvicorn_options(host: str, port: int, heartbeat: float) -> dict[str, Any]:
    """The uvicorn options of ``yahtzee serve`` (server/cli.py), repeated here because clients
    never import the server: keep the two in step."""
    return {
        "host": host,
        "port": port,
        "log_level": "warning",
        "ws": "websockets-sansio",
        "ws_ping_interval": heartbeat,
        "ws_ping_timeout": heartbeat,
        "ws_max_size": 1_048_576,
        "ws_per_message_deflate": False,
        "timeout_keep_alive": 5,
        "limit_concurrency": 20_000,
        "h11_max_incomplete_event_size": 16_384,
    }


def frame_fields(frame: bytes) -> tuple[str, int, bytes]:
    """``(room, seq, client_frame)`` of a broadcast frame."""
    room, seq, data, _ = msgspec.msgpack.decode(frame)
    return str(room), int(seq), bytes(data)


class _Room:
    __slots__ = ("sends", "seq")

    def __init__(self) -> None:
        self.seq = 0
        self.sends: set[Send] = set()


def make_app() -> Callable[[Scope, Receive, Send], Awaitable[None]]:
    """The ASGI application (rooms live in its closure: one process, its own rooms)."""
    rooms: dict[str, _Room] = {}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
        elif scope["type"] == "http":
            await _healthz(send)
        elif scope["type"] == "websocket":
            await _member(rooms, scope, receive, send)

    return app


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _healthz(send: Send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


async def _member(rooms: dict[str, _Room], scope: Scope, receive: Receive, send: Send) -> None:
    """One connection: join the room of the path, broadcast one frame per frame received."""
    name = str(scope["path"]).removeprefix(ROOM_PATH)
    if (await receive())["type"] != "websocket.connect":
        return
    await send({"type": "websocket.accept"})
    room = rooms.setdefault(name, _Room())
    room.sends.add(send)
    try:
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            room.seq += 1
            data = message.get("bytes") or str(message.get("text") or "").encode()
            frame = msgspec.msgpack.encode([name, room.seq, data, PADDING])
            out = {"type": "websocket.send", "bytes": frame}
            # Encoded once; the same message to every member (a copy of the set: a member may
            # leave while we await).
            for member in tuple(room.sends):
                try:
                    await member(out)
                except Exception:  # a member that went away is dropped by its own task
                    continue
    finally:
        room.sends.discard(send)
        if not room.sends:
            rooms.pop(name, None)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m clients.bench.bare", description="Bare WebSocket broadcast server."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--heartbeat", type=float, default=20.0, help="ping interval, seconds")
    args = parser.parse_args(argv)
    uvicorn.run(make_app(), **uvicorn_options(args.host, args.port, args.heartbeat))
    return 0


if __name__ == "__main__":
    sys.exit(main())
