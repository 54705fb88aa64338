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
import os
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
import websockets
from procs import ROOT, StartServer, free_port, scaled
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
            # written just after the events went out (the watcher may be quicker)
            async def bobs_turns() -> list[tuple[str, int]]:
                reply = await http2.get(
                    f"/players/{who['bob_id']}/turns", headers=bearer(who["bob_token"])
                )
                return [(e["room"], e["deadline_ms"]) for e in reply.json()["turns"]]

            assert await until(bobs_turns) == [(room, nxt["deadline_ms"])]
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


# -- the reminder webhook -----------------------------------------------------------------------


@dataclass
class Receiver:
    """A local HTTP receiver in a thread. Each request takes the next action of ``plan``
    (``"500"``: answer 500; ``"hang"``: hold the request until :attr:`release` is set), then
    answers 200. Every request is recorded as it arrives."""

    port: int
    plan: list[str] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    hanging: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def serve(self) -> http.server.ThreadingHTTPServer:
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                with receiver.lock:
                    action = receiver.plan.pop(0) if receiver.plan else "200"
                    receiver.requests.append(
                        {"headers": dict(self.headers), "body": body, "action": action}
                    )
                if action == "hang":
                    receiver.hanging.set()
                    receiver.release.wait(TIMEOUT)
                with contextlib.suppress(OSError):  # the sender may have given up already
                    self.send_response(200 if action == "200" else 500)
                    self.send_header("Content-Length", "0")
                    self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server

    def accepted(self, event: str, player: str) -> list[dict[str, Any]]:
        """The requests for ``event`` to ``player`` that were answered 200."""
        with self.lock:
            return [
                r for r in self.requests
                if r["action"] == "200" and r["headers"]["X-Yahtzee-Event"] == event
                and json.loads(r["body"])["player"] == player
            ]  # fmt: skip

    def attempts(self, key: str) -> list[dict[str, Any]]:
        with self.lock:
            return [r for r in self.requests if r["headers"]["Idempotency-Key"] == key]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    found = Receiver(free_port())
    yield found
    found.release.set()


def signature_ok(request: dict[str, Any]) -> bool:
    expected = "sha256=" + hmac.new(SECRET.encode(), request["body"], hashlib.sha256).hexdigest()
    return hmac.compare_digest(request["headers"]["X-Yahtzee-Signature"], expected)


async def test_reminders_reach_a_flaky_receiver_signed_retried_and_never_delay_the_game(
    start_server: StartServer, redis_url: str, redis_prefix: str, receiver: Receiver
) -> None:
    server = start_server(
        {
            "YAHTZEE_WEBHOOK_URL": f"http://127.0.0.1:{receiver.port}/hook",
            "YAHTZEE_WEBHOOK_SECRET": SECRET,
            "YAHTZEE_WEBHOOK_TIMEOUT": "1",
            "YAHTZEE_WEBHOOK_BACKOFF": "0.05",
            "YAHTZEE_WEBHOOK_BACKOFF_CAP": "0.3",
            "YAHTZEE_WEBHOOK_POLL_SECONDS": "0.05",
            "YAHTZEE_LOG_LEVEL": "info",
        }
    )
    outbox = f"{redis_prefix}{{outbox}}"
    async with (
        httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http_client,
        redis_client(redis_url) as redis,
    ):
        room, who = await seated_pair(server.ws, http_client)
        ann, bob = who["ann"], who["bob"]
        turn = await ann.wait_event(lambda e: e["type"] == "turn_changed")
        ann_key = f"your_turn:{room}:{ann.player}:{turn['deadline_ms']}"

        # the receiver is down: the delivery fails and is retried, the game goes on
        await until(lambda: redis.hget(f"{outbox}:tries", ann_key))
        receiver.plan = ["hang", "500", "500"]
        listening = receiver.serve()
        try:
            # while the receiver holds a delivery, Ann's moves are acknowledged as usual
            await until(lambda: asyncio.to_thread(receiver.hanging.wait, 0))
            await ann.ok("roll")
            await ann.ok("hold", dice=[0])
            assert not receiver.release.is_set()  # still holding: nothing waited for it
            # the sender gives up on the held request after its timeout and tries again
            await until(lambda: asyncio.to_thread(lambda: len(receiver.attempts(ann_key)) >= 2))
            receiver.release.set()

            # retried after the timeout and two 500s, then accepted: the same key and body
            delivered = await until(
                lambda: asyncio.to_thread(receiver.accepted, "your_turn", who["ann_id"])
            )
            tries = receiver.attempts(ann_key)
            assert [t["action"] for t in tries] == ["hang", "500", "500", "200"]
            assert len({t["body"] for t in tries}) == 1
            assert all(signature_ok(t) for t in tries)
            body = json.loads(delivered[0]["body"])
            assert body == {
                "id": ann_key, "event": "your_turn", "player": who["ann_id"], "room": room,
                "room_player": ann.player, "round": 1, "deadline_ms": turn["deadline_ms"],
                "created_ms": body["created_ms"],
            }  # fmt: skip
            # forgotten once the 200 came back (the receiver recorded it before answering)
            await until(lambda: _gone(redis, f"{outbox}:due", ann_key))
            assert await redis.hget(f"{outbox}:bodies", ann_key) is None

            # 75% of Ann's clock: queued at its time, once (then moot: she plays her turn)
            ann_late = f"clock_running_out:{room}:{ann.player}:{turn['deadline_ms']}"
            due_at = await redis.zscore(f"{outbox}:due", ann_late)
            assert due_at == turn["deadline_ms"] - DAY * 1000 // 4
            rolled = await ann.wait_event(lambda e: e["type"] == "rolled")
            await ann.ok("score", box=next(p["box"] for p in rolled["preview"] if p["allowed"]))
            bob_turn = await bob.wait_event(
                lambda e: e["type"] == "turn_changed" and e["player"] == bob.player
            )
            await redis.zadd(f"{outbox}:due", {ann_late: 0})  # as if 18 hours had passed
            await until(lambda: _gone(redis, f"{outbox}:due", ann_late))
            assert receiver.attempts(ann_late) == []  # the turn was played: no reminder

            # Bob's turn: reminded at once; at 75% of his clock, reminded again
            await until(lambda: asyncio.to_thread(receiver.accepted, "your_turn", who["bob_id"]))
            bob_late = f"clock_running_out:{room}:{bob.player}:{bob_turn['deadline_ms']}"
            await redis.zadd(f"{outbox}:due", {bob_late: 0})
            late = await until(
                lambda: asyncio.to_thread(receiver.accepted, "clock_running_out", who["bob_id"])
            )
            assert signature_ok(late[0])
            assert late[0]["headers"]["Idempotency-Key"] == bob_late
            assert json.loads(late[0]["body"])["deadline_ms"] == bob_turn["deadline_ms"]
        finally:
            listening.shutdown()
            listening.server_close()
            await ann.close()
            await bob.close()
    log = server.log_path.read_text()
    assert "attempt 1 failed" in log  # the failures were logged ...
    assert SECRET not in log  # ... never the secret
    assert "sha256=" not in log  # nor a signature


async def _gone(redis: Any, key: str, member: str) -> bool:
    return await redis.zscore(key, member) is None


async def test_the_python_library_creates_a_correspondence_room_and_reads_the_turns(
    start_server: StartServer, tmp_path: Path
) -> None:
    from clients.client import Client
    from clients.players import PlayersError, fetch_turns

    server = start_server()
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http_client:
        ann_id, ann_token = await new_player(http_client, "Ann")
        bob_id, bob_token = await new_player(http_client, "Bob")
    async with (
        Client(server.ws, player_token=ann_token) as ann,
        Client(server.ws, player_token=bob_token) as bob,
    ):
        created = await ann.create_room(
            2, first_player="seat_order", correspondence_seconds=3 * 3600
        )
        await ann.join(created.room, "Ann")
        await bob.join(created.room, "Bob")
        await ann.start()
        turns = await until(lambda: _my_turns(server.http, ann_id, ann_token))
        assert [(t["room"], t["on_turn"]) for t in turns] == [(created.room, "Ann")]
        assert 0 < turns[0]["deadline_ms"] - int(time.time() * 1000) <= 3 * 3600 * 1000
        waiting = await asyncio.to_thread(fetch_turns, server.http, bob_id, bob_token)
        assert (waiting["turns"], [g["room"] for g in waiting["games"]]) == ([], [created.room])
        with pytest.raises(PlayersError) as refused:
            await asyncio.to_thread(fetch_turns, server.http, bob_id, ann_token)
        assert refused.value.code == "player_not_found"

        # `yahtzee turns` with the player kept in the terminal clients' file
        players_file = tmp_path / "players.json"
        players_file.write_text(
            json.dumps({server.http: {"player": ann_id, "name": "Ann", "token": ann_token}})
        )
        printed = await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "server.cli", "turns", "--url", server.http],
            env={**os.environ, "YAHTZEE_PLAYER_FILE": str(players_file), "PYTHONPATH": str(ROOT)},
            capture_output=True, text=True, timeout=60, check=True,
        )  # fmt: skip
        assert created.room in printed.stdout
        assert "YOUR TURN" in printed.stdout
        assert "2 h 59 min left" in printed.stdout

        # Bob leaves: the game is no longer his
        await bob.leave()
        gone = await until(lambda: _no_games(server.http, bob_id, bob_token))
        assert gone


async def _no_games(base: str, player: str, token: str) -> bool:
    from clients.players import fetch_turns

    body = await asyncio.to_thread(fetch_turns, base, player, token)
    return body["turns"] == body["games"] == []


async def _my_turns(base: str, player: str, token: str) -> list[dict[str, Any]]:
    from clients.players import fetch_turns

    body = await asyncio.to_thread(fetch_turns, base, player, token)
    turns: list[dict[str, Any]] = body["turns"]
    return turns
