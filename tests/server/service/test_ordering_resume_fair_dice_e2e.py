"""Protocol 1.1 on a real server: the order of acks and events, `resumed`, `create_key`, the
fair dice end to end (checked by `yahtzee verify`), a v1.0 client's frames still served."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from gameplay import play_game
from procs import ServerProcess, StartServer
from wsclient import WsClient, get_json

from clients import verify
from protocol import fairdice
from protocol.codec import decode_server
from protocol.transport import PROTOCOL_MINOR

VECTORS = Path(__file__).resolve().parents[3] / "protocol" / "vectors" / "v1.0" / "client.json"


def index_of(client: WsClient, predicate: Any) -> int:
    return next(i for i, m in enumerate(client.messages) if predicate(m))


async def test_welcome_announces_the_minor_version(start_server: StartServer) -> None:
    server = start_server()
    client = await WsClient(server.ws, "json", "W").connect()
    try:
        welcome = client.messages[0]
        assert (welcome["protocol_version"], welcome["protocol_minor"]) == (1, PROTOCOL_MINOR)
    finally:
        await client.close()


async def test_play_events_come_before_their_ack_and_entering_acks_before_the_catch_up(
    start_server: StartServer,
) -> None:
    server = start_server()
    host = await WsClient(server.ws, "msgpack", "H").connect()
    try:
        room = (
            await host.ok(
                "create_room", seats=1, public=True, options={"first_player": "seat_order"}
            )
        )["result"]["room"]
        joined = await host.ok("join", room=room, name="Host")
        await host.wait_for(lambda: host.snapshots)
        ack_at = index_of(host, lambda m: m.get("id") == joined["id"])
        snap_at = index_of(host, lambda m: m["type"] == "snapshot")
        assert ack_at < snap_at  # join: the ack, then the snapshot covering its seq
        assert host.snapshots[0]["seq"] == joined["seq"]
        start = await host.ok("start")
        roll = await host.ok("roll")
        for reply in (start, roll):
            ack_at = index_of(host, lambda m, r=reply: m.get("id") == r["id"])
            caused = [i for i, m in enumerate(host.messages) if m.get("seq") == reply["seq"]
                      and m["type"] not in ("ack", "error")]  # fmt: skip
            assert caused
            assert max(caused) < ack_at  # its own events first, then the ack
    finally:
        await host.close()


async def test_rejoin_and_spectate_say_whether_they_resumed(start_server: StartServer) -> None:
    server = start_server()
    host = await WsClient(server.ws, "json", "H").connect()
    back = await WsClient(server.ws, "json", "B").connect()
    watcher = await WsClient(server.ws, "json", "S").connect()
    try:
        room = (await host.ok("create_room", seats=2, public=True))["result"]["room"]
        await host.join(room, "Host")
        token, last = host.token, host.last_seq()
        await host.close()
        resumed = await back.ok("rejoin", room=room, token=token, last_seq=last)
        assert resumed["result"]["resumed"] is True
        assert back.snapshots == []
        fresh = await watcher.ok("spectate", room=room)
        assert fresh["result"]["resumed"] is False
        await watcher.wait_for(lambda: watcher.snapshots)
    finally:
        for c in (host, back, watcher):
            await c.close()


async def test_a_retried_create_key_gives_the_same_room(start_server: StartServer) -> None:
    server = start_server()
    first = await WsClient(server.ws, "json", "A").connect()
    second = await WsClient(server.ws, "json", "B").connect()
    try:
        key = "k" * 20
        one = await first.ok("create_room", seats=2, public=False, create_key=key)
        two = await second.ok("create_room", seats=2, public=False, create_key=key)
        assert one["result"] == two["result"]
        other = await first.ok("create_room", seats=2, public=False, create_key="x" * 20)
        assert other["result"]["room"] != one["result"]["room"]
    finally:
        await first.close()
        await second.close()


async def test_joining_a_finished_room_answers_game_over(start_server: StartServer) -> None:
    server = start_server()
    host = await WsClient(server.ws, "json", "H").connect()
    late = await WsClient(server.ws, "json", "L").connect()
    try:
        room = (await host.ok("create_room", seats=1, public=True))["result"]["room"]
        await host.join(room, "Host", seed="host-seed")
        await host.ok("start")
        await play_game({host.player: host}, host)
        refused = await late.call("join", room=room, name="Late")
        assert refused["code"] == "game_over"
    finally:
        await host.close()
        await late.close()


async def game_log(server: ServerProcess, room: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    after: int | None = 0
    while after is not None:
        page = await get_json(f"{server.http}/rooms/{room}/events?after={after}&limit=100")
        events += page["events"]
        after = page["next_after"]
    return events


async def test_the_dice_of_a_live_game_verify(start_server: StartServer) -> None:
    server = start_server()
    players = [await WsClient(server.ws, "json", f"P{i}").connect() for i in range(2)]
    try:
        room = (await players[0].ok("create_room", seats=2, public=True))["result"]["room"]
        for i, p in enumerate(players):
            await p.join(room, f"P{i}", seed=f"my own seed {i}")
        await players[0].ok("start")
        await play_game({p.player: p for p in players}, players[1])
        log = await game_log(server, room)
        verdict = fairdice.verify_log(log)
        assert verdict.status == "verified", verdict.describe()
        assert verdict.committed_before_seeds
        assert next(e for e in log if e["type"] == "game_started")["seeds"] == [
            "my own seed 0",
            "my own seed 1",
        ]
        assert await asyncio.to_thread(verify.run, room, server.http) == 0
    finally:
        for p in players:
            await p.close()


async def test_a_v1_0_client_s_frames_are_still_served(start_server: StartServer) -> None:
    server = start_server()
    client = await WsClient(server.ws, "json", "old").connect()
    try:
        vectors = json.loads(VECTORS.read_text())["vectors"]
        for vector in vectors:
            await client.send_raw(vector["json"])
        ids = [v["value"]["id"] for v in vectors]
        await client.wait_for(lambda: all(i in client.replies for i in ids))
        for frame in client.frames:
            decode_server(frame, "json")  # every answer is a valid 1.1 message
        codes = {client.replies[i].get("code") for i in ids}
        assert "internal_error" not in codes
    finally:
        await client.close()
