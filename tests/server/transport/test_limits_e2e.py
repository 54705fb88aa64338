"""Limits against a real server: a client that stops reading is dropped, never stalls a room."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket

from procs import StartServer, scaled
from wsclient import WsClient, http_get


async def slow_clients_closed(http: str) -> float:
    text = (await http_get(f"{http}/metrics")).text
    match = re.search(r"^yahtzee_slow_clients_closed_total (\S+)$", text, re.MULTILINE)
    return float(match.group(1)) if match else 0.0


def text_frame(message: dict[str, object]) -> bytes:
    """A masked (all-zero key) client text frame."""
    payload = json.dumps(message).encode()
    assert len(payload) < 126
    return bytes([0x81, 0x80 | len(payload)]) + b"\0\0\0\0" + payload


async def test_client_that_stops_reading_is_dropped_and_the_room_goes_on(
    start_server: StartServer,
) -> None:
    server = start_server(
        env={
            "YAHTZEE_SEND_QUEUE_SIZE": "16",
            "YAHTZEE_RATE_PER_SECOND": "100000",
            "YAHTZEE_RATE_BURST": "100000",
            "YAHTZEE_ROOMS_PER_MINUTE": "1000000000",
        }
    )
    player = await WsClient(server.ws, "json", "P").connect()
    for _ in range(30):  # public rooms make `list_rooms` answers big (about 10 kB)
        await player.ok("create_room", seats=8, public=True)
    created = await player.ok(
        "create_room", seats=1, public=True, options={"first_player": "seat_order"}
    )
    room = created["result"]["room"]
    await player.join(room, "P")
    await player.ok("start")
    await player.ok("roll")

    # a spectator that stops reading right after the handshake (a raw socket with a tiny
    # receive window), yet keeps asking for big answers
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
    sock.connect(("127.0.0.1", server.port))
    sock.sendall(
        b"GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
        b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        b"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: yahtzee.v1.json\r\n\r\n"
    )
    assert sock.recv(12) == b"HTTP/1.1 101"
    i = 0
    try:
        frames = [text_frame({"type": "spectate", "id": "s", "room": room})]
        frames += [text_frame({"type": "list_rooms", "id": f"l{n}"}) for n in range(3000)]
        sock.settimeout(10)
        with contextlib.suppress(OSError):  # the server may close us before reading them all
            await asyncio.to_thread(sock.sendall, b"".join(frames))
        async with asyncio.timeout(scaled(10)):
            while await slow_clients_closed(server.http) < 1:
                # the player plays on meanwhile: every command is answered at once
                reply = await player.ok("hold" if i % 2 else "release", dice=[0, 1])
                await player.wait_event(lambda e, s=reply["seq"]: e["seq"] >= s)
                i += 1
        last = await player.ok("hold", dice=[0])
        await player.wait_event(lambda e: e["seq"] >= last["seq"])
    finally:
        sock.close()
        await player.close()
