"""Commands whose outcome is unknown (``unavailable`` while Redis was frozen or paused, the
command maybe run all the same) leave nothing wrong behind: a turn handed to a computer is
played, a retried ``spectate`` is subscribed once, and the HTTP API answers 503, never 500.
(Found by the chaos soak, ``tests/faults/soak.py``.)"""

from __future__ import annotations

import asyncio
import json
import signal
import time
from collections import Counter

import httpx
import redis
import websockets
from faultkit import FaultClient, RedisProcess, StartServers, Stats
from procs import scaled
from websockets.typing import Subprotocol

from clients.strategy import choose_box
from protocol import Phase

FREEZE_SECONDS = 3.0  # the injected fault's length (longer than the server's Redis timeout)


async def test_a_turn_handed_to_a_computer_during_a_freeze_is_played(
    start_servers: StartServers, fault_redis: RedisProcess
) -> None:
    (server,) = start_servers(1)
    stats = Stats()
    person = FaultClient([server.ws], stats, "p")
    await person.connect()
    try:
        created = await person.create_room(
            seats=2, computers=["easy"], first_player="seat_order", computer_delay_ms=100
        )
        await person.join(created.room, "P0")
        await person.start()
        me = person.player
        await person.wait_for(lambda m: m.current_player == me and m.phase is Phase.AWAITING_ROLL)
        await person.roll()
        assert person.model is not None
        seq = person.model.seq
        fault_redis.signal(signal.SIGSTOP)
        try:
            # the score meets the freeze: `unavailable`, then its retry (FaultClient retries)
            score = asyncio.create_task(person.score(choose_box(person.model.preview)))
            await asyncio.sleep(FREEZE_SECONDS)  # the fault's length, not a synchronisation
        finally:
            fault_redis.signal(signal.SIGCONT)
        await score
        assert stats.errors["unavailable"] >= 1  # the freeze was met
        async with asyncio.timeout(scaled(30)):  # the computer plays its turn, back to me
            await person.wait_for(lambda m: m.current_player == me and m.seq > seq + 2)
    finally:
        await person.close()


async def test_a_retried_spectate_is_subscribed_once(
    start_servers: StartServers, fault_redis: RedisProcess
) -> None:
    (server,) = start_servers(1)
    host = FaultClient([server.ws], Stats(), "host")
    await host.connect()
    admin = fault_redis.client()
    try:
        room = (await host.create_room(seats=1, first_player="seat_order")).room
        await host.join(room, "P0")
        async with websockets.connect(
            server.ws, subprotocols=[Subprotocol("yahtzee.v1.json")]
        ) as ws:
            await ws.recv()  # welcome
            admin.execute_command("CLIENT", "PAUSE", "2500", "WRITE")  # reads pass, writes wait
            await ws.send(json.dumps({"type": "spectate", "id": "s1", "room": room}))
            first = None
            while first is None or first.get("id") != "s1":
                first = json.loads(await asyncio.wait_for(ws.recv(), scaled(15)))
            assert (first["type"], first.get("code")) == ("error", "unavailable")
            deadline = time.monotonic() + scaled(15)
            while True:  # the pause is over once a write goes through
                try:
                    admin.set("yzf:unpaused", "1")
                    break
                except redis.exceptions.RedisError:
                    assert time.monotonic() < deadline
            await ws.send(json.dumps({"type": "spectate", "id": "s1", "room": room}))
            await host.start()
            await host.roll()
            seen: Counter[tuple[str, int]] = Counter()
            while ("rolled", host.model.seq if host.model else 0) not in seen:
                message = json.loads(await asyncio.wait_for(ws.recv(), scaled(15)))
                if message["type"] not in ("ack", "error", "pong"):
                    seen[(message["type"], message["seq"])] += 1
            await ws.send(json.dumps({"type": "ping", "id": "flush"}))  # what came, came
            while (message := json.loads(await asyncio.wait_for(ws.recv(), scaled(15))))[
                "type"
            ] != "pong":
                seen[(message["type"], message.get("seq", 0))] += 1
            assert seen
            assert all(n == 1 for n in seen.values()), seen
            assert sum(1 for kind, _ in seen if kind == "snapshot") == 1
    finally:
        admin.close()
        await host.close()


async def test_the_http_api_answers_503_while_redis_is_frozen(
    start_servers: StartServers, fault_redis: RedisProcess
) -> None:
    (server,) = start_servers(1)
    host = FaultClient([server.ws], Stats(), "host")
    await host.connect()
    try:
        room = (await host.create_room(seats=1)).room
    finally:
        await host.close()
    fault_redis.signal(signal.SIGSTOP)
    try:
        async with httpx.AsyncClient(base_url=server.http, timeout=scaled(10)) as http:
            replies = await asyncio.gather(
                *(http.get(p) for p in (f"/rooms/{room}", f"/rooms/{room}/events", "/rooms"))
            )
    finally:
        fault_redis.signal(signal.SIGCONT)
    assert [r.status_code for r in replies] == [503, 503, 503]
    assert all(r.json()["code"] == "unavailable" for r in replies)
    assert "Traceback" not in server.log_path.read_text()
