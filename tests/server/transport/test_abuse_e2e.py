"""Abuse limits against a real server process: each limit answers with a typed error or a
documented close code, and honest clients go on being served."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import time

import httpx
import psutil
import pytest
import websockets
from procs import StartServer, scaled
from wsclient import WsClient, get_json, http_get


def _closed_by_peer(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
    except (BlockingIOError, TimeoutError):
        return False


async def test_half_open_http_requests_are_closed(start_server: StartServer) -> None:
    server = start_server(env={"YAHTZEE_HANDSHAKE_SECONDS": "1"})
    sockets = []
    for _ in range(50):
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # the headers never end
        sock.settimeout(0.05)
        sockets.append(sock)
    try:
        assert (await http_get(f"{server.http}/healthz")).text == "ok"
        deadline = time.monotonic() + 15
        open_ = list(sockets)
        while open_ and time.monotonic() < deadline:
            open_ = [s for s in open_ if not _closed_by_peer(s)]
            await asyncio.sleep(0.1)  # polling a socket state, not synchronising a test step
        assert open_ == []
    finally:
        for sock in sockets:
            sock.close()


async def test_connections_per_address_are_capped(start_server: StartServer) -> None:
    server = start_server(env={"YAHTZEE_MAX_PER_ADDRESS": "3"})
    clients = [await WsClient(server.ws, "json", f"C{i}").connect() for i in range(3)]
    try:
        with pytest.raises(websockets.InvalidStatus) as refused:
            await WsClient(server.ws, "json", "extra").connect()
        assert refused.value.response.status_code == 429
        await clients[0].close()
        # the slot is given back once the connection is gone
        deadline = time.monotonic() + 10
        while True:
            try:
                clients[0] = await WsClient(server.ws, "json", "again").connect()
                break
            except websockets.InvalidStatus:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
        assert (await clients[0].ok("hello"))["type"] == "ack"
    finally:
        for c in clients:
            await c.close()


async def test_room_creation_is_rate_limited_per_connection(start_server: StartServer) -> None:
    server = start_server()
    client = await WsClient(server.ws, "json", "flood").connect()
    other = await WsClient(server.ws, "json", "honest").connect()
    try:
        replies = [await client.call("create_room", seats=2, public=True) for _ in range(8)]
        kinds = [r["type"] for r in replies]
        assert kinds[:5] == ["ack"] * 5
        refused = [r for r in replies if r["type"] == "error"]
        assert refused
        assert {r["code"] for r in refused} == {"rate_limited"}
        assert all(r["retryable"] for r in refused)
        assert (await other.call("create_room", seats=2, public=True))["type"] == "ack"
    finally:
        await client.close()
        await other.close()


async def test_events_are_paginated_and_invites_travel_only_in_a_header(
    start_server: StartServer,
) -> None:
    server = start_server()
    host = await WsClient(server.ws, "json", "H").connect()
    try:
        created = await host.ok("create_room", seats=2, public=False)
        room, invite = created["result"]["room"], created["result"]["invite_code"]
        await host.join(room, "Host", invite_code=invite)
        url = f"{server.http}/rooms/{room}"
        async with httpx.AsyncClient() as http:
            assert (await http.get(url)).status_code == 403
            assert (await http.get(url, params={"invite_code": invite})).status_code == 403
            headers = {"X-Invite-Code": invite}
            assert (await http.get(url, headers=headers)).status_code == 200
            first = (await http.get(f"{url}/events", params={"limit": 1}, headers=headers)).json()
            assert [e["seq"] for e in first["events"]] == [1]
            assert first["next_after"] == 1
            rest = await http.get(f"{url}/events", params={"after": 1}, headers=headers)
            assert rest.json()["next_after"] is None
            assert rest.json()["events"][0]["seq"] == 2
            bad = await http.get(f"{url}/events", params={"limit": 0}, headers=headers)
            assert bad.status_code == 400
            assert bad.json()["code"] == "out_of_range"
            log = (await http.get(f"{url}/events", headers=headers)).text
        assert invite not in log
    finally:
        await host.close()


async def test_a_frozen_redis_gives_503_and_unavailable_then_the_service_recovers(
    start_server: StartServer,
) -> None:
    server = start_server(env={"REDIS_URL": ""})  # its own embedded Redis, which we freeze
    assert server.process is not None
    children = psutil.Process(server.process.pid).children(recursive=True)
    redis_pid = next(c.pid for c in children if "server" in c.name() or "valkey" in c.name())
    client = await WsClient(server.ws, "json", "P").connect()
    try:
        room = (await client.ok("create_room", seats=1, public=True))["result"]["room"]
        await client.join(room, "P")
        os.kill(redis_pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            ready = await http_get(f"{server.http}/readyz")
            assert ready.status_code == 503
            assert time.monotonic() - started < scaled(3)
            reply = await client.call("start")
            assert reply["type"] == "error"
            assert (reply["code"], reply["retryable"]) == ("unavailable", True)
        finally:
            os.kill(redis_pid, signal.SIGCONT)
        deadline = time.monotonic() + scaled(5)
        while (await http_get(f"{server.http}/readyz")).status_code != 200:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        # The retry `unavailable` asks for, with the same id: an ack whether the first attempt
        # never reached Redis or reached it and ran once Redis woke up (its cached result).
        del client.replies[reply["id"]]
        assert (await client.call("start", reply["id"]))["type"] == "ack"
        snapshot = await get_json(f"{server.http}/rooms/{room}")
        assert snapshot["state"]["status"] == "playing"
    finally:
        await client.close()


async def test_a_connection_sending_garbage_is_answered_at_the_rate_limit_pace(
    start_server: StartServer,
) -> None:
    """Each refused frame gets its typed error, but the connection is read again only when the
    rate limit would allow one more frame: a flood waits in its own socket while an honest
    client on another connection is answered at once."""
    server = start_server(env={"YAHTZEE_RATE_PER_SECOND": "10", "YAHTZEE_RATE_BURST": "100"})
    abuser = await WsClient(server.ws, "json", "A").connect()
    honest = await WsClient(server.ws, "json", "H").connect()

    def errors() -> list[dict[str, object]]:
        return [m for m in abuser.messages if m["type"] == "error"]

    try:
        started = time.monotonic()
        for i in range(20):
            await abuser.send_raw(f'{{"type": "roll", "id": "g{i}", "hold": "not a list"')
        # the honest client's ping is answered while the garbage is still being worked through
        pong = await honest.call("ping")
        assert pong["type"] == "pong"
        assert len(errors()) < 20
        await abuser.wait_for(lambda: len(errors()) >= 20)
        # every frame answered with a typed error, no faster than 10 a second after the first
        assert [e["code"] for e in errors()] == ["malformed"] * 20
        assert time.monotonic() - started >= 19 / 10
    finally:
        await abuser.close()
        await honest.close()
