"""Correspondence rooms (protocol 1.4) through real server processes, a real Redis and a real
PostgreSQL: the long clock, the players' turn lists, a restart of every process, and the
reminder webhook against a real local HTTP receiver that is down, hangs or fails.

Nobody waits hours here: a test that needs the clock to run out *moves the clock's deadline*
in Redis (the record's ``deadline_ms`` and its entry in the deadline schedule), which is what
the passing of time does to a stored room; the server itself runs unchanged."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import http.server
import json
import threading
import time
import zlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
import websockets
from procs import StartServer, free_port, scaled
from wsclient import WsClient

from server.domain import record_format

TIMEOUT = 30.0
DAY = 86_400
SECRET = "whsec-correspondence-test-0123456789"


class BearerClient(WsClient):
    """A WebSocket client that presents a player token on its handshake."""

    def __init__(self, url: str, credential: str, name: str) -> None:
        super().__init__(url, "json", name)
        self.credential = credential

    async def connect(self) -> BearerClient:
        self.ws = await websockets.connect(
            self.url,
            subprotocols=[self.subprotocol],  # type: ignore[list-item]
            additional_headers={"Authorization": f"Bearer {self.credential}"},
        )
        self._task = asyncio.create_task(self._read())
        await self.wait_for(lambda: any(m["type"] == "welcome" for m in self.messages))
        return self


async def new_player(http: httpx.AsyncClient, name: str) -> tuple[str, str]:
    reply = await http.post("/players", json={"name": name})
    assert reply.status_code == 201, reply.text
    body = reply.json()
    return body["player"], body["token"]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def until(check: Any, within: float = TIMEOUT) -> Any:
    """Poll ``check`` (an async callable) until it returns something truthy (bounded)."""
    deadline = time.monotonic() + scaled(within)
    while True:
        value = await check()
        if value:
            return value
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)  # polling interval of a bounded wait


@contextlib.asynccontextmanager
async def redis_client(url: str) -> AsyncIterator[Any]:
    client = aioredis.Redis.from_url(url)
    try:
        yield client
    finally:
        await client.aclose()


async def move_clock(redis: Any, prefix: str, room: str, deadline_ms: int) -> int:
    """Set the running turn's deadline to ``deadline_ms``, as the passing of time would make
    it due (the record and the schedule; the room's version is left as it is). Returns the
    deadline it had."""
    key = f"{prefix}{{room:{room}}}:room"
    record = record_format.decode_record(await redis.hget(key, "record"))
    assert record.deadline_ms is not None
    await redis.hset(
        key, "record", record_format.encode_record(record.replace(deadline_ms=deadline_ms))
    )
    bucket = zlib.crc32(room.encode()) % 8
    await redis.zadd(f"{prefix}{{g{bucket}}}:deadlines", {room: deadline_ms})
    return record.deadline_ms


async def seated_pair(
    server_ws: str, http: httpx.AsyncClient, seconds: int = DAY
) -> tuple[str, dict[str, Any]]:
    """Ann and Bob (remembered players) in a started correspondence room, Ann on turn."""
    ann_id, ann_token = await new_player(http, "Ann")
    bob_id, bob_token = await new_player(http, "Bob")
    ann = await BearerClient(server_ws, ann_token, "ann").connect()
    bob = await BearerClient(server_ws, bob_token, "bob").connect()
    created = await ann.ok(
        "create_room",
        seats=2,
        public=True,
        options={"first_player": "seat_order"},
        correspondence={"seconds_per_move": seconds},
    )
    room = created["result"]["room"]
    await ann.join(room, "Ann")
    await bob.join(room, "Bob")
    await ann.ok("start")
    return room, {
        "ann": ann, "bob": bob, "ann_id": ann_id, "bob_id": bob_id,
        "ann_token": ann_token, "bob_token": bob_token,
    }  # fmt: skip


async def test_a_correspondence_game_survives_every_restart_and_its_clock_fires(
    start_server: StartServer, redis_url: str, redis_prefix: str
) -> None:
    server = start_server()
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        before = int(time.time() * 1000)
        room, who = await seated_pair(server.ws, http)
        ann, bob = who["ann"], who["bob"]
        turn = await ann.wait_event(lambda e: e["type"] == "turn_changed")
        assert turn["player"] == ann.player
        assert before + DAY * 1000 <= turn["deadline_ms"] <= int(time.time() * 1000) + DAY * 1000
        snapshot = (await http.get(f"/rooms/{room}")).json()["state"]
        assert snapshot["correspondence"] == {"seconds_per_move": DAY}
        assert snapshot["turn_seconds"] == 0  # the 1.3 bound of turn_seconds holds
        assert snapshot["turn_deadline_ms"] == turn["deadline_ms"]
        listed = (await http.get("/rooms")).json()["rooms"]
        assert [r["correspondence"] for r in listed if r["room"] == room] == [
            {"seconds_per_move": DAY}
        ]

        # the turn lists: Ann's turn; Bob waits; nobody reads another's list
        ann_list = (
            await http.get(f"/players/{who['ann_id']}/turns", headers=bearer(who["ann_token"]))
        ).json()
        assert [(e["room"], e["my_turn"], e["deadline_ms"]) for e in ann_list["turns"]] == [
            (room, True, turn["deadline_ms"])
        ]
        assert ann_list["turns"][0]["players"] == ["Ann", "Bob"]
        assert ann_list["turns"][0]["on_turn"] == "Ann"
        assert ann_list["games"] == []
        bob_list = (
            await http.get(f"/players/{who['bob_id']}/turns", headers=bearer(who["bob_token"]))
        ).json()
        assert bob_list["turns"] == []
        assert [(e["room"], e["on_turn"], e["round"]) for e in bob_list["games"]] == [
            (room, "Ann", 1)
        ]
        other = await http.get(f"/players/{who['bob_id']}/turns", headers=bearer(who["ann_token"]))
        assert (other.status_code, other.json()["code"]) == (404, "player_not_found")
        anonymous = await http.get(f"/players/{who['bob_id']}/turns")
        assert (anonymous.status_code, anonymous.json()["code"]) == (401, "bad_player_token")

        # the room outlives the idle time: its TTL covers the clock
        async with redis_client(redis_url) as redis:
            ttl = await redis.ttl(f"{redis_prefix}{{room:{room}}}:room")
        assert ttl > DAY  # idle (a day by default) + a day per move

        # a disconnected player on turn is not played for after the absent-player grace
        await ann.close()
        gone = await bob.wait_event(lambda e: e["type"] == "player_disconnected")
        assert gone["player"] == ann.player
        assert gone["away_deadline_ms"] is None  # only the clock plays for her
        await bob.close()
        server.kill()  # SIGKILL: like a crashed machine

        # a day passes while no process runs: the turn's clock is due when the next starts
        async with redis_client(redis_url) as redis:
            old = await move_clock(redis, redis_prefix, room, int(time.time() * 1000) + 300)
        assert old == turn["deadline_ms"]
        again = start_server()
        watcher = await WsClient(again.ws, "json", "cy").connect()
        try:
            # from the last event the players saw: the clock may have fired before this join
            await watcher.ok("spectate", room=room, last_seq=ann.last_seq())
            scored = await watcher.wait_event(lambda e: e["type"] == "scored")
            assert scored["player"] == who["ann"].player
            assert scored["automatic"] is True
            nxt = await watcher.wait_event(lambda e: e["type"] == "turn_changed")
            assert nxt["player"] == who["bob"].player
            now = int(time.time() * 1000)
            assert now + DAY * 1000 - 60_000 <= nxt["deadline_ms"] <= now + DAY * 1000
        finally:
            await watcher.close()

        # the lists followed the clock's move, on the new process
        async with httpx.AsyncClient(base_url=again.http, timeout=TIMEOUT) as http2:
            bob_list = (
                await http2.get(f"/players/{who['bob_id']}/turns", headers=bearer(who["bob_token"]))
            ).json()
            assert [(e["room"], e["deadline_ms"]) for e in bob_list["turns"]] == [
                (room, nxt["deadline_ms"])
            ]
            ann_list = (
                await http2.get(f"/players/{who['ann_id']}/turns", headers=bearer(who["ann_token"]))
            ).json()
            assert ann_list["turns"] == []
            assert [e["on_turn"] for e in ann_list["games"]] == ["Bob"]

            # Bob plays on through the new process, well before his clock
            bob2 = await BearerClient(again.ws, who["bob_token"], "bob2").connect()
            try:
                await bob2.ok("rejoin", room=room, token=who["bob"].token)
                await bob2.ok("roll")
                rolled = await bob2.wait_event(lambda e: e["type"] == "rolled")
                await bob2.ok(
                    "score", box=next(p["box"] for p in rolled["preview"] if p["allowed"])
                )
                back = await bob2.wait_event(
                    lambda e: e["type"] == "turn_changed" and e["player"] == who["ann"].player
                )
            finally:
                await bob2.close()
            ann_list = (
                await http2.get(f"/players/{who['ann_id']}/turns", headers=bearer(who["ann_token"]))
            ).json()
            assert [(e["room"], e["deadline_ms"], e["round"]) for e in ann_list["turns"]] == [
                (room, back["deadline_ms"], 2)
            ]


async def test_create_room_refuses_a_correspondence_clock_with_a_turn_timer(
    start_server: StartServer,
) -> None:
    server = start_server()
    client = await WsClient(server.ws, "json", "x").connect()
    try:
        both = await client.call(
            "create_room", seats=2, public=True, turn_seconds=60,
            correspondence={"seconds_per_move": DAY},
        )  # fmt: skip
        assert (both["type"], both["code"]) == ("error", "invalid_field")
        for seconds in (3599, 14 * DAY + 1):
            short = await client.call(
                "create_room", seats=2, public=True, correspondence={"seconds_per_move": seconds}
            )
            assert (short["type"], short["code"]) == ("error", "out_of_range")
        longest = await client.ok(
            "create_room", seats=2, public=False, correspondence={"seconds_per_move": 14 * DAY}
        )
        assert longest["result"]["room"]
    finally:
        await client.close()
