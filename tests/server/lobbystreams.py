"""The live lobby (``GET /lobby``, Server-Sent Events) as a test reads it: streams opened on a
real server, each list waited for as an event, never for time."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
from procs import ServerProcess

TIMEOUT = 15.0

Rooms = list[dict[str, Any]]


class LobbyStream:
    """One open ``GET /lobby`` stream; its events are parsed as they arrive."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.lists: list[Rooms] = []  # the data of every `rooms` event, in order
        self.comments: list[str] = []
        self.retry: int | None = None
        self.ended = False  # the server ended the response cleanly
        self._changed = asyncio.Condition()
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        event, data = "message", []
        async for line in self.response.aiter_lines():
            if line.startswith(":"):
                self.comments.append(line)
            elif line.startswith("retry: "):
                self.retry = int(line.removeprefix("retry: "))
            elif line.startswith("event: "):
                event = line.removeprefix("event: ")
            elif line.startswith("data: "):
                data.append(line.removeprefix("data: "))
            elif line == "" and data:
                if event == "rooms":
                    self.lists.append(json.loads("\n".join(data))["rooms"])
                event, data = "message", []
                async with self._changed:
                    self._changed.notify_all()
        self.ended = True
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(self, predicate: Callable[[Rooms], bool], within: float = TIMEOUT) -> Rooms:
        """The first list (received so far or later) that satisfies ``predicate``."""

        def found() -> Rooms | None:
            return next((rooms for rooms in self.lists if predicate(rooms)), None)

        async with asyncio.timeout(within), self._changed:
            while (rooms := found()) is None:
                assert not self._task.done(), "the stream ended"
                await self._changed.wait()
            return rooms

    async def wait_ended(self, within: float = TIMEOUT) -> None:
        async with asyncio.timeout(within):
            await self._task  # raises if the stream broke instead of ending
        assert self.ended

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(BaseException):
            await self._task
        await self.response.aclose()


@contextlib.asynccontextmanager
async def lobby_streams(server: ServerProcess, count: int = 1) -> AsyncIterator[list[LobbyStream]]:
    async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as http:
        streams: list[LobbyStream] = []
        try:
            for _ in range(count):
                response = await http.send(http.build_request("GET", f"{server.http}/lobby"),
                                           stream=True)  # fmt: skip
                assert response.status_code == 200, (await response.aread()).decode()
                assert response.headers["content-type"].startswith("text/event-stream")
                streams.append(LobbyStream(response))
            yield streams
        finally:
            for stream in streams:
                await stream.close()


def entry(rooms: Rooms, room: str) -> dict[str, Any] | None:
    return next((r for r in rooms if r["room"] == room), None)
