"""The connection cap below the descriptor limit, and the logs, against real server processes:
at the cap new WebSockets get 503 while ``/healthz`` and ``/readyz`` answer; whatever a client
sends, no secret reaches the log, and what clients get wrong is counted, not logged at length."""

from __future__ import annotations

import asyncio
import os
import re
import socket
from pathlib import Path

import httpx
import pytest
import websockets
from procs import ROOT, ServerProcess, StartServer, free_port
from wsclient import WsClient, http_get

from server.transport.runtime import FD_RESERVE

REDIS_CONNECTIONS = 16
MAX_OPEN_FILES = 200
CAP = MAX_OPEN_FILES - FD_RESERVE - REDIS_CONNECTIONS


@pytest.fixture
def capped_server(redis_url: str, redis_prefix: str, tmp_path: Path) -> ServerProcess:
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "REDIS_PREFIX": redis_prefix,
        "PYTHONPATH": str(ROOT),
        "YAHTZEE_LOG_LEVEL": "warning",
        "YAHTZEE_REDIS_CONNECTIONS": str(REDIS_CONNECTIONS),
        "YAHTZEE_PRELOAD_TABLES": "none",
    }
    port = free_port()
    server = ServerProcess(port, env, tmp_path / "capped.log", max_open_files=MAX_OPEN_FILES)
    server.start()
    yield server
    server.kill()


async def test_at_the_cap_handshakes_get_503_and_health_checks_answer(
    capped_server: ServerProcess,
) -> None:
    clients = [WsClient(capped_server.ws) for _ in range(CAP)]
    try:
        await asyncio.gather(*(client.connect() for client in clients))
        with pytest.raises(websockets.InvalidStatus) as refused:
            await WsClient(capped_server.ws).connect()
        assert refused.value.response.status_code == 503
        answers = await asyncio.gather(
            *(http_get(f"{capped_server.http}/{path}") for path in ("healthz", "readyz") * 10)
        )
        assert [a.status_code for a in answers] == [200] * 20
        lobby = await http_get(f"{capped_server.http}/lobby")
        assert lobby.status_code == 503
        assert lobby.json()["code"] == "unavailable"
        await clients.pop().close()  # one leaves: a new one gets in, once the server saw it go
        deadline = asyncio.get_running_loop().time() + 30
        while True:
            try:
                clients.append(await WsClient(capped_server.ws).connect())
                break
            except websockets.InvalidStatus:
                assert asyncio.get_running_loop().time() < deadline, "the freed place stays taken"
        metrics = (await http_get(f"{capped_server.http}/metrics")).text
        assert re.search(r'yahtzee_refused_total\{reason="server_full"\} [1-9]', metrics)
    finally:
        await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)


SECRETS = ("Inv1teC0de", "Se4tT0ken", "Pl4yerT0ken", "B3arerT0ken", "C00kieV4lue", "B4reS3cret")


def _raw_request(port: int, request: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(request)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks):
                break
        return b"".join(chunks)


async def test_no_secret_reaches_the_log_whatever_a_client_sends(
    start_server: StartServer,
) -> None:
    server = start_server(env={"YAHTZEE_LOG_LEVEL": "info"})  # the default level
    invite, seat, player, bearer, cookie, bare = SECRETS
    headers = {"Authorization": f"Bearer {bearer}", "Cookie": f"session={cookie}"}
    async with httpx.AsyncClient(headers=headers) as http:
        for target in (
            f"/rooms/r1?invite_code={invite}",  # the pre-1.1 way
            f"/rooms/r1/events?after=0&token={seat}&player_token={player}",
            f"/no/such/route?{bare}",
            f"/healthz?invite_code={invite}",
        ):
            await http.get(f"{server.http}{target}")
    for query in (f"?invite_code={invite}", f"?token={seat}", f"?{bare}"):
        with pytest.raises(websockets.InvalidStatus):  # no subprotocol offered: refused
            await websockets.connect(f"{server.ws}{query}", additional_headers=headers)
        client = await WsClient(f"{server.ws}{query}").connect()  # accepted
        await client.close()
    await asyncio.to_thread(
        _raw_request, server.port, f"GET /ws?{bare} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
    )
    assert (await http_get(f"{server.http}/healthz")).text == "ok"
    log = await asyncio.to_thread(Path(server.log_path).read_text, errors="replace")
    assert "/rooms/r1?invite_code=REDACTED" in log  # the line is there, the secret is not
    for secret in SECRETS:
        assert secret not in log


async def test_bad_handshakes_and_invalid_text_are_counted_not_logged_at_length(
    start_server: StartServer,
) -> None:
    server = start_server(env={"YAHTZEE_LOG_LEVEL": "info"})
    for _ in range(40):
        with pytest.raises(websockets.InvalidStatus):
            await websockets.connect(server.ws)  # no subprotocol
    client = await WsClient(server.ws).connect()
    assert client.ws is not None
    # a text frame that is not UTF-8, written raw: websockets would refuse to send it
    await client.ws.send(b"\xff\xfe", text=True)
    await client.wait_closed()
    assert client.close_code == 1007
    assert (await http_get(f"{server.http}/healthz")).text == "ok"
    log = await asyncio.to_thread(Path(server.log_path).read_text, errors="replace")
    assert "Traceback" not in log
    assert "ERROR" not in log
    rejected = log.count("connection rejected")
    assert 1 <= rejected <= 12, rejected  # bounded: 10 a minute (the bucket starts full)
    metrics = (await http_get(f"{server.http}/metrics")).text
    assert re.search(r'yahtzee_refused_total\{reason="handshake"\} ([4-9]\d|\d{3,})', metrics)
    assert re.search(r'yahtzee_refused_total\{reason="invalid_utf8"\} 1', metrics)
