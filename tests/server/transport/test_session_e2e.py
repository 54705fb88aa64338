"""Protocol behaviour of one connection against a real server process."""

from __future__ import annotations

import asyncio
import json

import msgpack
import pytest
import websockets
from gameplay import best_box, play_turn
from procs import BOTH_BACKENDS, ServerProcess, StartServer
from wsclient import WsClient, get_json, http_get


async def solo_room(server: ServerProcess, seats: int = 2) -> tuple[str, list[WsClient]]:
    """A started seat-order game with ``seats`` players."""
    clients = [await WsClient(server.ws, "json", f"P{i}").connect() for i in range(seats)]
    created = await clients[0].ok(
        "create_room", seats=seats, public=True, options={"first_player": "seat_order"}
    )
    room = created["result"]["room"]
    for i, client in enumerate(clients):
        await client.join(room, f"P{i}")
    await clients[0].ok("start")
    await clients[0].wait_event(lambda e: e["type"] == "turn_changed")
    return room, clients


@pytest.fixture
def server(start_server: StartServer) -> ServerProcess:
    return start_server()


async def test_typed_errors(server: ServerProcess) -> None:
    room, (first, second) = await solo_room(server)
    try:
        out_of_turn = await second.call("roll")
        assert out_of_turn["type"] == "error"
        assert out_of_turn["code"] == "not_your_turn"
        before_roll = await first.call("score", box="chance")
        assert before_roll["code"] == "must_roll_first"
        for _ in range(3):
            await first.ok("roll")
        fourth = await first.call("roll")
        assert fourth["code"] == "no_rolls_left"
        assert fourth["retryable"] is False
        await first.ok("score", box="chance")
        await second.wait_event(
            lambda e: e["type"] == "turn_changed" and e["player"] == second.player
        )
        ack = await second.ok("roll")
        rolled = await second.wait_event(lambda e: e["seq"] == ack["seq"])
        assert rolled["player"] == second.player
        await second.ok("score", box=best_box(rolled))
        await first.wait_event(lambda e: e["type"] == "turn_changed" and e["round"] == 2)
        await first.ok("roll")
        taken = await first.call("score", box="chance")
        assert taken["code"] == "category_taken"
        # every error carries the room's current seq
        seq_now = (await get_json(f"{server.http}/rooms/{room}"))["seq"]
        assert taken["seq"] == seq_now
    finally:
        await first.close()
        await second.close()


@BOTH_BACKENDS
async def test_retried_command_id_is_applied_once(server: ServerProcess) -> None:
    room, (first,) = await solo_room(server, 1)
    other = await WsClient(server.ws, "msgpack", "again").connect()
    try:
        reply = await first.call("roll", command_id="same")
        await first.wait_event(lambda e: e["type"] == "rolled")
        again = await first.call("roll", command_id="same")
        assert again == reply
        # the same id from a new connection of the same seat (after a reconnect)
        assert first.token is not None
        await other.ok("rejoin", room=room, token=first.token, last_seq=first.last_seq())
        third = await other.call("roll", command_id="same")
        assert third["type"] == "ack"
        assert third["seq"] == reply["seq"]
        rolls = [e for e in first.events if e["type"] == "rolled"]
        assert len(rolls) == 1
    finally:
        await first.close()
        await other.close()


@BOTH_BACKENDS
async def test_spectators_cannot_act_and_private_rooms(server: ServerProcess) -> None:
    host = await WsClient(server.ws, "json", "H").connect()
    watcher = await WsClient(server.ws, "json", "W").connect()
    try:
        created = await host.ok("create_room", seats=2, public=False)
        room, invite = created["result"]["room"], created["result"]["invite_code"]
        assert invite
        denied = await watcher.call("spectate", room=room)
        assert denied["code"] == "invite_required"
        assert (await watcher.call("roll"))["code"] == "not_in_room"
        await watcher.ok("spectate", room=room, invite_code=invite)
        await watcher.wait_for(lambda: watcher.snapshots)
        for kind, fields in [("roll", {}), ("start", {}), ("score", {"box": "chance"})]:
            reply = await watcher.call(kind, **fields)
            assert reply["code"] == "spectator_cannot_act"
        bad = await host.call("join", room=room, name="H")
        assert bad["code"] == "invite_required"
        await host.join(room, "H", invite_code=invite)
        listed = await get_json(f"{server.http}/rooms")
        assert room not in [r["room"] for r in listed["rooms"]]
        assert (await http_get(f"{server.http}/rooms/{room}")).status_code == 403
    finally:
        await host.close()
        await watcher.close()


async def test_malformed_frames_get_typed_errors_while_a_game_goes_on(
    server: ServerProcess,
) -> None:
    room, clients = await solo_room(server, 2)
    by_id = {c.player: c for c in clients}
    bad = await WsClient(server.ws, "json", "bad").connect()
    bad_mp = await WsClient(server.ws, "msgpack", "badmp").connect()

    async def garbage() -> list[str]:
        codes = []
        cases: list[tuple[WsClient, bytes | str]] = [
            (bad, "{not json"),
            (bad, b"\x81\xa4type\xa4ping"),  # binary frame on the json subprotocol
            (bad, json.dumps({"type": "fly", "id": "x1"})),
            (bad, json.dumps({"type": "join", "id": "x2"})),
            (bad, json.dumps({"type": "roll", "id": "x3", "keep": [9]})),
            (bad, json.dumps({"type": "ping", "id": "x4", "pad": "x" * 20000})),
            (bad, json.dumps([1, 2, 3])),
            (bad_mp, b"\xc1"),
            (bad_mp, msgpack.packb({"type": "score", "id": "m1", "box": 7})),
        ]
        for client, frame in cases:
            before = len(client.messages)
            await client.send_raw(frame)
            await client.wait_for(lambda c=client, n=before: len(c.messages) > n)
            reply = client.messages[-1]
            assert reply["type"] == "error", reply
            codes.append(reply["code"])
        return codes

    async def carry_on() -> None:
        for _ in range(4):
            current = next(e for e in reversed(clients[0].events) if e["type"] == "turn_changed")
            scored = await play_turn(by_id[current["player"]])
            await clients[0].wait_event(lambda e, s=scored["seq"]: e["seq"] >= s)

    try:
        codes, _ = await asyncio.gather(garbage(), carry_on())
        assert codes == [
            "malformed",
            "wrong_frame_type",
            "unknown_type",
            "missing_field",
            "out_of_range",
            "frame_too_large",
            "malformed",
            "malformed",
            "invalid_field",
        ]
        assert (await bad.call("ping"))["type"] == "pong"  # still connected
        assert room
    finally:
        for client in [*clients, bad, bad_mp]:
            await client.close()


@BOTH_BACKENDS
async def test_rate_limit(start_server: StartServer) -> None:
    server = start_server(env={"YAHTZEE_RATE_BURST": "5", "YAHTZEE_RATE_PER_SECOND": "1"})
    client = await WsClient(server.ws, "json", "R").connect()
    try:
        ids = [await client.send("hello") for _ in range(12)]
        replies = [await client.wait_for(lambda i=i: client.replies.get(i)) for i in ids]
        codes = [r.get("code") for r in replies]
        # the burst goes through; after it every refusal pauses the connection for one token's
        # time (SPEC 11.3), so the frames behind it alternate: run, refused, run, ...
        assert codes[:5] == [None] * 5
        assert codes[5] == "rate_limited"
        assert codes.count("rate_limited") >= 3
        assert all(r["retryable"] for r in replies if r["type"] == "error")
    finally:
        await client.close()


async def test_refuses_unknown_subprotocol(server: ServerProcess) -> None:
    with pytest.raises(websockets.InvalidStatus) as err:
        await websockets.connect(server.ws, subprotocols=["yahtzee.v9.xml"])  # type: ignore[list-item]
    assert err.value.response.status_code == 400
    assert b"supported" in err.value.response.body


@BOTH_BACKENDS
async def test_http_rooms_and_metrics(server: ServerProcess) -> None:
    room, clients = await solo_room(server, 1)
    try:
        listed = await get_json(f"{server.http}/rooms")
        entry = next(r for r in listed["rooms"] if r["room"] == room)
        assert entry["status"] == "playing"
        assert entry["players"] == ["P0"]
        text = (await http_get(f"{server.http}/metrics")).text
        for name in (
            "yahtzee_connections",
            'yahtzee_rooms{status="playing"}',
            'yahtzee_commands_total{outcome="ok",type="join"}',
            "yahtzee_command_seconds_bucket",
            "yahtzee_redis_errors",
        ):
            assert name in text
    finally:
        await clients[0].close()


async def test_sigterm_closes_with_service_restart(server: ServerProcess) -> None:
    _room, clients = await solo_room(server, 1)
    assert server.process is not None
    server.process.terminate()
    code = await clients[0].wait_closed()
    assert code == 1012
    assert await asyncio.to_thread(server.process.wait, 15) in (0, -15)


@BOTH_BACKENDS
async def test_presence_and_resume_with_last_seq(server: ServerProcess) -> None:
    room, (first, second) = await solo_room(server, 2)
    watcher = await WsClient(server.ws, "json", "W").connect()
    resumed: list[WsClient] = []
    try:
        await watcher.ok("spectate", room=room, last_seq=0)
        seen = await watcher.wait_event(lambda e: e["type"] == "turn_changed")
        # a player drops: the room is told
        await second.close()
        gone = await first.wait_event(lambda e: e["type"] == "player_disconnected")
        assert gone["player"] == second.player
        # the spectator drops, misses events, and resumes from its last seq
        await watcher.wait_event(lambda e: e["seq"] >= gone["seq"])
        await watcher.close()
        last = watcher.last_seq()
        await first.ok("roll")
        roll = await first.ok("hold", dice=[0])
        back = await WsClient(server.ws, "msgpack", "W2").connect()
        resumed.append(back)
        await back.ok("spectate", room=room, last_seq=last)
        await back.wait_event(lambda e: e["seq"] >= roll["seq"])
        assert back.snapshots == []
        # exactly the missed events (the spectator count is coalesced: no event per watcher)
        assert [e["seq"] for e in back.events][:2] == [last + 1, last + 2]
        stream = watcher.events + back.events
        assert [e["seq"] for e in stream] == list(range(1, len(stream) + 1))
        assert stream[0]["type"] == "player_joined"
        assert seen in stream
        # the player comes back with its token: the room is told, and it gets what it missed
        wrong = await WsClient(server.ws, "json", "X").connect()
        resumed.append(wrong)
        assert (await wrong.call("rejoin", room=room, token="nope"))["code"] == "bad_token"
        again = await WsClient(server.ws, "json", "B2").connect()
        resumed.append(again)
        assert second.token is not None
        reply = await again.ok("rejoin", room=room, token=second.token, last_seq=second.last_seq())
        # `resumed` (protocol 1.1) is not set by this server yet: it sends null.
        assert reply["result"] | {"resumed": None} == {
            "command": "rejoin",
            "player": second.player,
            "seat": 1,
            "resumed": None,
        }
        back_again = await first.wait_event(lambda e: e["type"] == "player_reconnected")
        assert back_again["player"] == second.player
        await again.wait_event(lambda e: e["seq"] >= back_again["seq"])
        stream = second.events + again.events
        start = second.snapshots[0]["seq"]
        assert [e["seq"] for e in stream] == list(range(start + 1, start + 1 + len(stream)))
    finally:
        for client in [first, second, watcher, *resumed]:
            await client.close()


async def test_serves_the_web_client(server: ServerProcess) -> None:
    page = await http_get(f"{server.http}/")
    assert page.status_code == 200
    assert "<html" in page.text.lower()
    assert (await http_get(f"{server.http}/static/app.js")).status_code == 200


async def test_leaving_a_game_is_final(server: ServerProcess) -> None:
    room, (first, second) = await solo_room(server, 2)
    again = await WsClient(server.ws, "json", "again").connect()
    try:
        left = await second.ok("leave")
        event = await first.wait_event(lambda e: e["type"] == "player_left")
        assert event["forfeited"] is True
        assert event["seq"] <= left["seq"]
        assert second.token is not None
        refused = await again.call("rejoin", room=room, token=second.token, last_seq=0)
        assert refused["code"] == "bad_token"
        assert (await second.call("roll"))["code"] == "not_in_room"
    finally:
        for client in (first, second, again):
            await client.close()


@BOTH_BACKENDS
async def test_expect_seq_stale_state_and_joker_field(server: ServerProcess) -> None:
    room, (first, second) = await solo_room(server)
    watcher = await WsClient(server.ws, "msgpack", "watch").connect()
    try:
        await watcher.ok("spectate", room=room)
        await watcher.wait_for(lambda: watcher.snapshots)
        assert watcher.snapshots[0]["state"]["joker"] is False
        # the spectator count is announced (coalesced) shortly after: let it land first
        await watcher.wait_event(lambda e: e["type"] == "spectators")
        seq = (await get_json(f"{server.http}/rooms/{room}"))["seq"]
        log_before = (await get_json(f"{server.http}/rooms/{room}/events"))["events"]
        # an outdated expect_seq (before the last event that is not a spectator count, which
        # does not make it stale: SPEC.md 10.8): refused before any rules check, nothing changes
        game_seq = max(e["seq"] for e in log_before if e["type"] != "spectators")
        assert game_seq < seq
        for kind, fields in (("roll", {}), ("hold", {"dice": [0]}), ("score", {"box": "chance"})):
            stale = await first.call(kind, expect_seq=game_seq - 1, **fields)
            assert stale["type"] == "error", stale
            assert (stale["code"], stale["retryable"], stale["seq"]) == ("stale_state", False, seq)
        ahead = await first.call("roll", expect_seq=seq + 5)
        assert ahead["code"] == "stale_state"
        assert (await get_json(f"{server.http}/rooms/{room}/events"))["events"] == log_before
        assert (await get_json(f"{server.http}/rooms/{room}"))["seq"] == seq
        # the current seq: applied; the roll reports joker false (no Yahtzee box filled yet)
        ack = await first.call("roll", command_id="roll-now", expect_seq=seq)
        assert ack["type"] == "ack"
        assert ack["seq"] == seq + 1
        rolled = await watcher.wait_event(lambda e: e["seq"] == ack["seq"])
        assert rolled["type"] == "rolled"
        assert rolled["joker"] is False
        # resending the executed command (same id, now old expect_seq): the remembered ack
        assert await first.call("roll", command_id="roll-now", expect_seq=seq) == ack
        # hold with the seq before the roll is stale; with ack.seq it applies
        late = await first.call("hold", dice=[0], expect_seq=seq)
        assert late["code"] == "stale_state"
        held = await first.ok("hold", dice=[0], expect_seq=ack["seq"])
        assert held["seq"] == ack["seq"] + 1
        # the other player's stale command is stale_state even though it is not their turn
        assert (await second.call("roll", expect_seq=seq))["code"] == "stale_state"
        assert (await second.call("roll", expect_seq=held["seq"]))["code"] == "not_your_turn"
        snap = await get_json(f"{server.http}/rooms/{room}")
        assert snap["state"]["joker"] is False
        scored = await first.ok("score", box=best_box(rolled), expect_seq=held["seq"])
        assert scored["seq"] > held["seq"]
    finally:
        for client in (first, second, watcher):
            await client.close()
