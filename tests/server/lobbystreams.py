"""The live lobby (``GET /lobby``, Server-Sent Events) as a test reads it: streams opened on a
real server, each list waited for as an event, never for time."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
from procs import ServerProcess, scaled

TIMEOUT = 15.0

Rooms = list[dict[str, Any]]


class LobbyStream:
    """One open ``GET /lobby`` stream; its events are parsed as they arrive."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.lists: list[Rooms] = []  # the data of every `rooms` event, in order
        self.turns: list[dict[str, Any]] = []  # the data of every `turns` event, in order
        self.event_types: list[str] = []  # every event's type, in order
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
                self.event_types.append(event)
                if event == "rooms":
                    self.lists.append(json.loads("\n".join(data))["rooms"])
                elif event == "turns":
                    self.turns.append(json.loads("\n".join(data)))
                event, data = "message", []
                async with self._changed:
                    self._changed.notify_all()
        self.ended = True
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(self, predicate: Callable[[Rooms], bool], within: float = TIMEOUT) -> Rooms:
        """The first list (received so far or later) that satisfies ``predicate``."""
        return await self._first(self.lists, predicate, within)

    async def wait_turns(
        self, predicate: Callable[[dict[str, Any]], bool], within: float = TIMEOUT
    ) -> dict[str, Any]:
        """The first ``turns`` event's data (so far or later) that satisfies ``predicate``."""
        return await self._first(self.turns, predicate, within)

    async def _first(self, seen: list[Any], predicate: Callable[[Any], bool], within: float) -> Any:
        def found() -> Any:
            return next((item for item in seen if predicate(item)), None)

        async with asyncio.timeout(scaled(within)), self._changed:
            while (item := found()) is None:
                assert not self._task.done(), "the stream ended"
                await self._changed.wait()
            return item

    async def wait_ended(self, within: float = TIMEOUT) -> None:
        async with asyncio.timeout(scaled(within)):
            await self._task  # raises if the stream broke instead of ending
        assert self.ended

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(BaseException):
            await self._task
        await self.response.aclose()


@contextlib.asynccontextmanager
async def lobby_streams(
    server: ServerProcess, count: int = 1, headers: dict[str, str] | None = None
) -> AsyncIterator[list[LobbyStream]]:
    """``count`` open ``GET /lobby`` streams (sent with ``headers``, e.g. a player token)."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as http:
        streams: list[LobbyStream] = []
        try:
            for _ in range(count):
                request = http.build_request("GET", f"{server.http}/lobby", headers=headers)
                response = await http.send(request, stream=True)
                assert response.status_code == 200, (await response.aread()).decode()
                assert response.headers["content-type"].startswith("text/event-stream")
                streams.append(LobbyStream(response))
            yield streams
        finally:
            for stream in streams:
                await stream.close()


def entry(rooms: Rooms, room: str) -> dict[str, Any] | None:
    return next((r for r in rooms if r["room"] == room), None)
