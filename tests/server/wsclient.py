"""A small test client over real WebSockets (the `websockets` library), speaking the protocol.

Frames are decoded with ``protocol.codec.decode_server`` (so every frame the server sends is
also checked against the protocol) and kept as plain dicts. Tests wait for what they need with
timeouts; nothing sleeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
from collections.abc import Callable
from typing import Any

import httpx
import msgpack
import websockets
from procs import scaled
from websockets.asyncio.client import ClientConnection
from websockets.client import ClientProtocol
from websockets.typing import Subprotocol
from websockets.uri import parse_uri

from protocol.codec import decode_server, to_dict
from protocol.transport import SUBPROTOCOLS

TIMEOUT = 15.0  # on an idle machine; every wait scales it by the load (procs.scaled)
Msg = dict[str, Any]


class WsClient:
    def __init__(self, url: str, encoding: str = "json", name: str = "") -> None:
        self.url = url
        self.subprotocol = f"yahtzee.v1.{encoding}"
        self.encoding = SUBPROTOCOLS[self.subprotocol]
        self.name = name
        self.ws: ClientConnection | None = None
        self.frames: list[bytes | str] = []  # every raw frame received
        self.messages: list[Msg] = []  # every decoded message
        self.events: list[Msg] = []  # room events (have a seq), in arrival order
        self.snapshots: list[Msg] = []
        self.replies: dict[str, Msg] = {}
        self.close_code: int | None = None
        self.player: str | None = None
        self.token: str | None = None
        self._changed = asyncio.Condition()
        self._ids = itertools.count(1)
        self._task: asyncio.Task[None] | None = None

    async def connect(self) -> WsClient:
        self.ws = await websockets.connect(
            self.url,
            subprotocols=[self.subprotocol],
            max_size=2**20,  # type: ignore[list-item]
        )
        self._task = asyncio.create_task(self._read())
        await self.wait_for(lambda: any(m["type"] == "welcome" for m in self.messages))
        return self

    async def _read(self) -> None:
        assert self.ws is not None
        try:
            async for frame in self.ws:
                self.frames.append(frame)
                msg = to_dict(decode_server(frame, self.encoding))
                async with self._changed:
                    self.messages.append(msg)
                    if msg["type"] in ("ack", "error", "pong") and msg.get("id") is not None:
                        self.replies[msg["id"]] = msg
                    elif msg["type"] == "snapshot":
                        self.snapshots.append(msg)
                    elif "seq" in msg and msg["type"] not in ("ack", "error"):
                        self.events.append(msg)
                    self._changed.notify_all()
        except websockets.ConnectionClosed:
            pass
        finally:
            if self.ws is not None and self.ws.close_code is not None:
                self.close_code = self.ws.close_code
            async with self._changed:
                self.close_code = self.close_code or (self.ws.close_code if self.ws else None)
                self._changed.notify_all()

    async def wait_for(self, predicate: Callable[[], Any], within: float = TIMEOUT) -> Any:
        async with asyncio.timeout(scaled(within)), self._changed:
            while True:
                value = predicate()
                if value:
                    return value
                if self._task is not None and self._task.done():
                    value = predicate()
                    if value:
                        return value
                    raise ConnectionError(f"{self.name}: connection closed ({self.close_code})")
                await self._changed.wait()

    async def wait_closed(self, within: float = TIMEOUT) -> int | None:
        assert self._task is not None
        async with asyncio.timeout(scaled(within)):
            await asyncio.shield(self._task)
        return self.close_code

    async def send_raw(self, frame: bytes | str) -> None:
        assert self.ws is not None
        await self.ws.send(frame)

    async def send(self, type_: str, command_id: str | None = None, **fields: Any) -> str:
        cid = command_id or f"{self.name}-{next(self._ids)}"
        body = {"type": type_, "id": cid, **fields}
        if self.encoding == "json":
            await self.send_raw(json.dumps(body))
        else:
            await self.send_raw(msgpack.packb(body))
        return cid

    async def call(self, type_: str, command_id: str | None = None, **fields: Any) -> Msg:
        """Send a command and wait for its ack or error."""
        cid = await self.send(type_, command_id, **fields)
        reply: Msg = await self.wait_for(lambda: self.replies.get(cid))
        return reply

    async def ok(self, type_: str, **fields: Any) -> Msg:
        reply = await self.call(type_, **fields)
        assert reply["type"] == "ack", reply
        return reply

    async def wait_event(self, predicate: Callable[[Msg], bool], within: float = TIMEOUT) -> Msg:
        found: Msg = await self.wait_for(
            lambda: next((e for e in self.events if predicate(e)), None), within
        )
        return found

    async def join(self, room: str, name: str, **fields: Any) -> Msg:
        reply = await self.ok("join", room=room, name=name, **fields)
        self.player = reply["result"]["player"]
        self.token = reply["result"]["token"]
        await self.wait_for(lambda: self.snapshots)
        return reply

    def last_seq(self) -> int:
        seqs = [e["seq"] for e in self.events] + [s["seq"] for s in self.snapshots]
        return max(seqs, default=0)

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task


async def http_get(url: str) -> httpx.Response:
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.get(url)


async def get_json(url: str) -> Any:
    response = await http_get(url)
    assert response.status_code == 200, response.text
    return response.json()


async def raw_client(
    ws: str,
) -> tuple[ClientProtocol, asyncio.StreamReader, asyncio.StreamWriter]:
    """A sans-I/O WebSocket client on a raw stream to ``ws``, its handshake request written:
    the test sees every frame, control frames included, and decides what is answered."""
    uri = parse_uri(ws)
    client = ClientProtocol(uri, subprotocols=[Subprotocol("yahtzee.v1.json")])
    reader, writer = await asyncio.open_connection(uri.host, uri.port)
    client.send_request(client.connect())
    writer.write(b"".join(client.data_to_send()))
    return client, reader, writer
