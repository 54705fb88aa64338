"""Remembered players through real server processes, real WebSocket clients, a real Redis and a
real PostgreSQL: guests, credentials on the handshake and in `hello`, games archived and read
back after their rooms left Redis, private games, the export, and play without a database."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
import redis.asyncio as aioredis
import websockets
from gameplay import play_game, play_turn
from procs import StartServer, scaled
from wsclient import WsClient

from server.ops.embedded_postgres import EmbeddedPostgres

TIMEOUT = 30.0
HTTP_VECTORS = {
    row["name"]: row
    for row in json.loads(
        (Path(__file__).resolve().parents[2] / "protocol" / "vectors" / "http.json").read_text()
    )["vectors"]
}


def same_shape(real: Any, vector: str) -> bool:
    """The real answer has exactly the fields of the protocol's vector (and its seats)."""
    body = HTTP_VECTORS[vector]["body"]
    if set(real) != set(body):
        return False
    if "players" in body and isinstance(body["players"], list):
        return all(set(p) == set(body["players"][0]) for p in real["players"])
    if isinstance(body.get("games"), list):
        return all(set(g) == set(body["games"][0]) for g in real["games"])
    return True


class BearerClient(WsClient):
    """A WebSocket client that sends ``Authorization: Bearer`` on its handshake."""

    def __init__(self, url: str, credential: str, name: str = "") -> None:
        super().__init__(url, "json", name)
        self.credential = credential

    async def connect(self) -> BearerClient:
        import asyncio

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
    assert body["token"].startswith("ypt_")
    return body["player"], body["token"]


async def archived(http: httpx.AsyncClient, path: str, headers: Any = None) -> Any:
    """GET ``path`` until the archiver wrote the game (polled, bounded)."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        reply = await http.get(path, headers=headers)
        if reply.status_code == 200:
            return reply.json()
        assert reply.status_code == 404, reply.text
        assert time.monotonic() < deadline, f"{path} not archived in time"
        await _pause()


async def _pause() -> None:
    import asyncio

    await asyncio.sleep(0.05)  # polling interval of a bounded wait


async def forget_room(redis_url: str, prefix: str, room: str) -> None:
    """What the room's expiry does: every key of the room gone from Redis."""
    client = aioredis.Redis.from_url(redis_url)
    try:
        keys = [k async for k in client.scan_iter(match=f"{prefix}{{room:{room}}}*")]
        assert keys
        await client.delete(*keys)
    finally:
        await client.aclose()


async def test_a_remembered_game_outlives_its_room(
    start_server: StartServer, redis_url: str, redis_prefix: str
) -> None:
    server = start_server()
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        ready = (await http.get("/readyz")).json()
        assert ready == {"ready": True, "database": "ok"}
        ann_id, ann_token = await new_player(http, "Ann Lee")
        bob_id, bob_token = await new_player(http, "Bøb 2")
        # Ann on the handshake, Bob in hello, Cy anonymous
        ann = await BearerClient(server.ws, ann_token, "ann").connect()
        bob = await WsClient(server.ws, "msgpack", "bob").connect()
        cy = await WsClient(server.ws, "json", "cy").connect()
        try:
            hello = await bob.ok("hello", player_token=bob_token)
            assert hello["result"]["player"] == {"player": bob_id, "name": "Bøb 2"}
            plain = await cy.ok("hello")
            assert "player" not in plain["result"]
            room = (await ann.ok("create_room", seats=3, public=True))["result"]["room"]
            for client, name in ((ann, "Ann"), (bob, "Bob"), (cy, "Cy")):
                await client.join(room, name)
            await ann.ok("start")
            by_id = {c.player: c for c in (ann, bob, cy) if c.player}
            over = await play_game(by_id, ann)
            # no token in any frame any client received
            for client in (ann, bob, cy):
                for frame in client.frames:
                    text = frame if isinstance(frame, str) else frame.decode("latin-1")
                    assert ann_token not in text
                    assert bob_token not in text
        finally:
            for client in (ann, bob, cy):
                await client.close()

        game = await archived(http, f"/games/{room}")
        assert same_shape(game, "game")
        assert game["game"] == f"{room}.1"
        assert game["outcome"] == "finished"
        assert game["events"][-1]["seq"] == over["seq"]
        seats = {p["name"]: p for p in game["players"]}
        assert seats["Ann"]["identity"] == ann_id
        assert seats["Bob"]["identity"] == bob_id
        assert seats["Cy"]["identity"] is None
        totals = {r["player"]: r["total"] for r in over["results"]}
        assert {p["player"]: p["total"] for p in game["players"]} == totals

        await forget_room(redis_url, redis_prefix, room)
        assert (await http.get(f"/rooms/{room}")).status_code == 404
        again = await http.get(f"/games/{room}.1")
        assert again.status_code == 200
        assert again.json() == game

        profile = (await http.get(f"/players/{ann_id}")).json()
        assert same_shape(profile, "player_profile")
        assert profile["name"] == "Ann Lee"
        assert profile["games"] == 1
        assert profile["wins"] == (1 if seats["Ann"]["place"] == 1 else 0)
        assert profile["best_score"] == seats["Ann"]["total"]
        assert profile["average_score"] == seats["Ann"]["total"]
        assert profile["upper_bonus_rate"] == (1.0 if seats["Ann"]["upper_bonus"] else 0.0)
        assert profile["yahtzee_rate"] == (1.0 if seats["Ann"]["yahtzees"] else 0.0)
        page = (await http.get(f"/players/{bob_id}/games")).json()
        assert same_shape(page, "player_games")
        assert [g["game"] for g in page["games"]] == [f"{room}.1"]
        assert page["next_before"] is None

        export = await http.get("/games/export", params={"since": 0})
        assert export.headers["content-type"].startswith("application/x-ndjson")
        lines = [json.loads(line) for line in export.text.splitlines()]
        assert [g["game"] for g in lines] == [f"{room}.1"]
        later = await http.get("/games/export", params={"since": game["finished_ms"] + 1})
        assert later.text == ""
        metrics = (await http.get("/metrics")).text
        assert "yahtzee_archived_games_total 1.0" in metrics
        assert "yahtzee_archive_due_rooms " in metrics
    log = server.log()
    assert ann_token not in log
    assert bob_token not in log


async def test_a_private_game_is_shown_only_to_its_players(start_server: StartServer) -> None:
    server = start_server()
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        ann_id, ann_token = await new_player(http, "Annika")
        _, eve_token = await new_player(http, "Eve")
        ann = await BearerClient(server.ws, ann_token, "ann").connect()
        try:
            created = await ann.ok("create_room", seats=1, public=False)
            room, invite = created["result"]["room"], created["result"]["invite_code"]
            await ann.join(room, "Ann", invite_code=invite)
            await ann.ok("start")
            await play_game({ann.player: ann}, ann)  # type: ignore[dict-item]
        finally:
            await ann.close()
        mine = {"Authorization": f"Bearer {ann_token}"}
        game = await archived(http, f"/games/{room}", headers=mine)
        assert game["public"] is False
        for headers in (None, {"Authorization": f"Bearer {eve_token}"}):
            reply = await http.get(f"/games/{room}", headers=headers)
            assert reply.status_code == 404
            assert reply.json()["code"] == "game_not_found"
        assert (await http.get("/games/export")).text == ""
        assert (await http.get(f"/players/{ann_id}")).json()["games"] == 0  # to others
        assert (await http.get(f"/players/{ann_id}", headers=mine)).json()["games"] == 1
        page = (await http.get(f"/players/{ann_id}/games", headers=mine)).json()
        assert [g["game"] for g in page["games"]] == [f"{room}.1"]


async def test_names_tokens_and_their_typed_refusals(start_server: StartServer) -> None:
    server = start_server()
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        _, token = await new_player(http, "Zoë Quinn")
        taken = await http.post("/players", json={"name": "zoë QUINN"})
        assert (taken.status_code, taken.json()["code"]) == (409, "name_taken")
        for bad in ("x", "a" * 25, "tab\there", "semi;colon", "two  spaces", "\u202eevil"):
            reply = await http.post("/players", json={"name": bad})
            assert (reply.status_code, reply.json()["code"]) == (400, "invalid_name"), bad
        assert (await http.post("/players", content=b"{")).json()["code"] == "malformed"
        me = await http.get("/players/me", headers={"Authorization": f"Bearer {token}"})
        assert me.json()["name"] == "Zoë Quinn"
        assert same_shape(me.json(), "player_me")

        client = await WsClient(server.ws, "json", "c").connect()
        try:
            wrong = await client.call("hello", player_token="ypt_" + "A" * 43)
            assert (wrong["type"], wrong["code"]) == ("error", "bad_player_token")
            assert wrong["retryable"] is False
            room = (await client.ok("create_room", seats=2, public=True))["result"]["room"]
            refused = await client.call("join", room=room, name="Zed")
            assert refused["code"] == "bad_player_token"  # the credential stays refused
            assert (await client.ok("hello", player_token=token))["result"]["player"]
            revoked = await http.delete(
                "/players/me/token", headers={"Authorization": f"Bearer {token}"}
            )
            assert revoked.json()["revoked"] is True
            gone = await client.call("hello", player_token=token)
            assert gone["code"] == "player_token_revoked"
        finally:
            await client.close()
        for path in ("/players/nobody", "/players/nobody/games", "/games/nothing.1"):
            reply = await http.get(path)
            assert reply.status_code == 404
        jwt_refused = await http.get("/players/me", headers={"Authorization": "Bearer a.b.c"})
        assert (jwt_refused.status_code, jwt_refused.json()["code"]) == (401, "bad_jwt")


async def test_play_goes_on_without_the_database(start_server: StartServer) -> None:
    """A database that does not answer: ready (it is reported apart), play unchanged, the
    player routes answer 503 unavailable."""
    dead = "postgresql://nobody@127.0.0.1:1/none?connect_timeout=1"
    server = start_server(env={"DATABASE_URL": dead})
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        ready = await http.get("/readyz")
        assert ready.status_code == 200
        body = ready.json()
        assert body["ready"] is True
        assert body["database"] != "ok"
        reply = await http.post("/players", json={"name": "Ann"})
        assert (reply.status_code, reply.json()["code"]) == (503, "unavailable")
        assert reply.headers["retry-after"]
    client = await WsClient(server.ws, "json", "p").connect()
    try:
        room = (await client.ok("create_room", seats=1, public=True))["result"]["room"]
        await client.join(room, "Ann")
        await client.ok("start")
        over = await play_game({client.player: client}, client)  # type: ignore[dict-item]
        assert over["type"] == "game_over"
    finally:
        await client.close()


@pytest.mark.parametrize("encoding", ["json"])
async def test_an_anonymous_client_sees_no_change(start_server: StartServer, encoding: str) -> None:
    server = start_server()
    client = await WsClient(server.ws, encoding, "anon").connect()
    try:
        hello = await client.ok("hello", client="test")
        assert hello["result"] == {"command": "hello"}
    finally:
        await client.close()


async def test_a_database_outage_loses_no_game(start_server: StartServer) -> None:
    """The database dies under a running server: known players still play as themselves, an
    unknown credential is `unavailable` (retryable), games go on and end; once the database
    is back every finished game is archived, once."""
    import asyncio

    with EmbeddedPostgres() as pg:
        server = start_server(env={"DATABASE_URL": pg.url})
        async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
            ann_id, ann_token = await new_player(http, "Ann")
            _, bob_token = await new_player(http, "Bob")
            first = await WsClient(server.ws, "json", "a1").connect()
            try:
                await first.ok("hello", player_token=ann_token)
            finally:
                await first.close()
            await asyncio.to_thread(pg.kill)

            ready = (await http.get("/readyz")).json()
            assert ready["ready"] is True
            assert ready["database"] != "ok"
            ann = await BearerClient(server.ws, ann_token, "ann").connect()
            stranger = await WsClient(server.ws, "json", "b").connect()
            try:
                hello = await ann.ok("hello")
                assert hello["result"]["player"]["player"] == ann_id
                refused = await stranger.call("hello", player_token=bob_token)
                assert (refused["code"], refused["retryable"]) == ("unavailable", True)
                room = (await ann.ok("create_room", seats=1, public=True))["result"]["room"]
                await ann.join(room, "Ann")
                await ann.ok("start")
                await play_game({ann.player: ann}, ann)  # type: ignore[dict-item]
            finally:
                await ann.close()
                await stranger.close()
            assert (await http.get(f"/games/{room}")).status_code == 503

            await asyncio.to_thread(pg.restart)
            # the server's pool finds the database again (on a busy machine, a while after it
            # answers): readiness says so first, then the archiver writes the game
            deadline = time.monotonic() + scaled(30)
            while (await http.get("/readyz")).json().get("database") != "ok":
                assert time.monotonic() < deadline, "the database never came back"
                await asyncio.sleep(0.1)  # polling readiness, bounded by the deadline
            game = await archived(http, f"/games/{room}")
            assert game["players"][0]["identity"] == ann_id
        with psycopg.connect(pg.url) as conn:
            row = conn.execute("SELECT count(*) FROM games WHERE room_id = %s", (room,)).fetchone()
            assert row == (1,)


async def test_a_server_without_a_database_ignores_the_handshake_credential(
    start_server: StartServer,
) -> None:
    server = start_server(env={"DATABASE_URL": "", "YAHTZEE_DATABASE": "off"})
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        assert (await http.get("/readyz")).json() == {"ready": True}
        reply = await http.post("/players", json={"name": "Ann"})
        assert (reply.status_code, reply.json()["code"]) == (503, "unavailable")
    client = await BearerClient(server.ws, "ypt_" + "x" * 43, "c").connect()
    try:
        room = (await client.ok("create_room", seats=1, public=True))["result"]["room"]
        await client.join(room, "Ann")  # anonymous, as before 1.3
        asked = await client.call("hello", player_token="ypt_" + "x" * 43)
        assert asked["code"] == "unsupported"
    finally:
        await client.close()


@pytest.mark.usefixtures("official_table")
async def test_archived_games_carry_each_players_accuracy(start_server: StartServer) -> None:
    """With the rules' strategy table loaded (a computer seat needs it), every seat of the
    archived game has its share of optimal decisions, and the profile averages it."""
    server = start_server(env={"YAHTZEE_COMPUTER_DELAY_MS": "0"})
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        ann_id, ann_token = await new_player(http, "Ann")
        ann = await BearerClient(server.ws, ann_token, "ann").connect()
        try:
            created = await ann.ok(
                "create_room",
                seats=2,
                public=True,
                computers=[{"level": "optimal"}],
                computer_delay_ms=0,
            )
            room = created["result"]["room"]
            await ann.join(room, "Ann")
            await ann.ok("start")
            await play_against_computers(ann)
        finally:
            await ann.close()
        game = await archived(http, f"/games/{room}")
        seats = {p["computer"] or "person": p for p in game["players"]}
        assert seats["optimal"]["accuracy"] == 1.0  # the optimal strategy is optimal
        assert 0.0 <= seats["person"]["accuracy"] <= 1.0
        profile = (await http.get(f"/players/{ann_id}")).json()
        assert profile["accuracy"] == seats["person"]["accuracy"]


async def play_against_computers(client: WsClient) -> None:
    """Play the client's turns until game over; the computers play theirs."""
    while True:
        await client.wait_for(
            lambda: any(e["type"] in ("turn_changed", "game_over") for e in client.events)
        )
        last = next(
            e for e in reversed(client.events) if e["type"] in ("turn_changed", "game_over")
        )
        if last["type"] == "game_over":
            return
        if last["player"] == client.player:
            scored = await play_turn(client, rolls=2)
            await client.wait_event(lambda e, s=scored["seq"]: e["seq"] >= s)
        else:
            seen = len(client.events)
            await client.wait_for(lambda n=seen: len(client.events) > n)


async def test_guests_are_rate_limited_per_address(start_server: StartServer) -> None:
    server = start_server(env={"YAHTZEE_PLAYERS_PER_HOUR": "3"})  # a burst of one
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        await new_player(http, "First")
        again = await http.post("/players", json={"name": "Second"})
        assert (again.status_code, again.json()["code"]) == (429, "rate_limited")


async def test_a_rematch_seat_belongs_to_the_same_remembered_player(
    start_server: StartServer, redis_url: str, redis_prefix: str
) -> None:
    server = start_server()
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        ann_id, ann_token = await new_player(http, "Ann Rematch")
        ann = await BearerClient(server.ws, ann_token, "ann").connect()
        try:
            room = (await ann.ok("create_room", seats=1, public=True))["result"]["room"]
            await ann.join(room, "Ann")
            await ann.ok("start")
            assert ann.player is not None
            await play_game({ann.player: ann}, ann)
            offer = (await ann.ok("offer_rematch"))["result"]
        finally:
            await ann.close()
        redis = aioredis.Redis.from_url(redis_url)
        try:
            fields = await redis.hgetall(f"{redis_prefix}{{room:{offer['room']}}}:seats")
        finally:
            await redis.aclose()
        assert fields[f"i:{offer['player']}".encode()] == ann_id.encode()
