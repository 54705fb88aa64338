"""The live lobby (``GET /lobby``, Server-Sent Events) against real server processes, read with a
real HTTP client (httpx, streaming): the list at once, a new list after every change, no private
rooms, the per-address and per-process caps, and a shutdown that does not wait for open streams."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import AsyncIterator

import httpx
import pytest
import websockets
from gameplay import play_turn
from lobbystreams import LobbyStream, entry, lobby_streams
from procs import BOTH_BACKENDS, ServerProcess, StartServer, scaled
from wsclient import WsClient

TIMEOUT = 15.0


@pytest.fixture
def server(start_server: StartServer) -> ServerProcess:
    return start_server()


@BOTH_BACKENDS
async def test_lobby_pushes_the_list_at_once_and_after_every_change(server: ServerProcess) -> None:
    async with lobby_streams(server, 2) as (watcher, other):
        first = await watcher.wait_for(lambda rooms: True, within=3)  # at once
        assert first == []
        assert watcher.retry == 3000
        host = await WsClient(server.ws, "json", "Host").connect()
        try:
            secret = (await host.ok("create_room", seats=2, public=False))["result"]["room"]
            options = {"first_player": "seat_order"}
            created_ack = await host.ok("create_room", seats=1, public=True, options=options)
            room = created_ack["result"]["room"]
            created = entry(
                await watcher.wait_for(lambda rooms: entry(rooms, room) is not None), room
            )
            assert created is not None
            assert (created["status"], created["players"], created["open_seats"]) == (
                "lobby",
                [],
                1,
            )
            await host.join(room, "Ann")
            await watcher.wait_for(
                lambda rooms: (entry(rooms, room) or {}).get("players") == ["Ann"]
            )
            await host.ok("start")
            await watcher.wait_for(
                lambda rooms: (entry(rooms, room) or {}).get("status") == "playing"
            )
            while (await play_turn(host))["type"] != "game_over":
                pass
            await watcher.wait_for(
                lambda rooms: (entry(rooms, room) or {}).get("status") == "finished"
            )
            # Every watcher got the same lists; a list is sent only when it changed.
            await other.wait_for(
                lambda rooms: (entry(rooms, room) or {}).get("status") == "finished"
            )
            for stream in (watcher, other):
                assert all(a != b for a, b in zip(stream.lists, stream.lists[1:], strict=False))
                assert all(entry(rooms, secret) is None for rooms in stream.lists)
            # A watcher that arrives now gets the current list at once.
            async with lobby_streams(server) as (late,):
                now = await late.wait_for(lambda rooms: True, within=3)
                assert (entry(now, room) or {}).get("status") == "finished"
                assert entry(now, secret) is None
            async with httpx.AsyncClient(timeout=10) as http:
                listed = (await http.get(f"{server.http}/rooms")).json()["rooms"]
            assert entry(listed, room) == entry(now, room)  # the same list as GET /rooms
        finally:
            await host.close()


async def test_lobby_streams_count_against_the_per_address_cap(start_server: StartServer) -> None:
    server = start_server(env={"YAHTZEE_MAX_PER_ADDRESS": "2"})
    async with lobby_streams(server, 1) as (stream,), httpx.AsyncClient(timeout=10) as http:
        await stream.wait_for(lambda rooms: True)
        player = await WsClient(server.ws, "json", "P").connect()  # the second connection
        try:
            refused = await http.get(f"{server.http}/lobby")
            assert refused.status_code == 429
            assert refused.json()["code"] == "rate_limited"
            with pytest.raises(websockets.InvalidStatus) as ws_refused:
                await WsClient(server.ws, "json", "extra").connect()
            assert ws_refused.value.response.status_code == 429
        finally:
            await player.close()
        # The WebSocket's slot is given back once it is gone: a stream may take it.
        deadline = time.monotonic() + 10
        async with lobby_streams_retrying(server, deadline) as again:
            await again.wait_for(lambda rooms: True)


@contextlib.asynccontextmanager
async def lobby_streams_retrying(
    server: ServerProcess, deadline: float
) -> AsyncIterator[LobbyStream]:
    """A stream, retried while the server answers 429 (a slot is being given back)."""
    async with httpx.AsyncClient(timeout=httpx.Timeout(10, read=None)) as http:
        while True:
            response = await http.send(
                http.build_request("GET", f"{server.http}/lobby"), stream=True
            )
            if response.status_code != 429:
                break
            await response.aclose()
            assert time.monotonic() < deadline, "the slot was never given back"
            await asyncio.sleep(0.05)  # polling with a deadline
        assert response.status_code == 200
        stream = LobbyStream(response)
        try:
            yield stream
        finally:
            await stream.close()


async def test_lobby_streams_per_process_are_capped(start_server: StartServer) -> None:
    server = start_server(env={"YAHTZEE_MAX_LOBBY_WATCHERS": "2"})
    async with lobby_streams(server, 2), httpx.AsyncClient(timeout=10) as http:
        refused = await http.get(f"{server.http}/lobby")
        assert refused.status_code == 429
        assert refused.json()["code"] == "rate_limited"
        assert (await http.get(f"{server.http}/rooms")).status_code == 200  # polling still works


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
async def test_shutdown_ends_open_lobby_streams(server: ServerProcess, signum: int) -> None:
    async with lobby_streams(server, 3) as streams:
        for stream in streams:
            await stream.wait_for(lambda rooms: True)
        process = server.process
        assert process is not None
        started = time.monotonic()
        process.send_signal(signum)
        returncode = await asyncio.to_thread(process.wait, 20)
        assert time.monotonic() - started < scaled(10), "shutdown waited for the lobby streams"
        assert returncode in (0, -signum), server.log()  # uvicorn re-raises the signal
        for stream in streams:
            await stream.wait_ended()  # a complete response, not a broken connection
