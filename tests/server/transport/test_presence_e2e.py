"""Seats and presence against real server processes: leaving, crashes, absent players,
heartbeats, take-overs, clock and join keys."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time

import redis.asyncio as aioredis
from gameplay import play_game
from procs import BOTH_BACKENDS, ServerProcess, StartServer, scaled
from websockets.frames import Close, Frame, Opcode
from wsclient import WsClient, get_json, raw_client

FAST = {"YAHTZEE_PLAYER_LEASE_SECONDS": "1", "YAHTZEE_TIMER_POLL_SECONDS": "0.05"}


async def lobby(
    server: ServerProcess, seats: int, players: int | None = None, **room: object
) -> tuple[str, list[WsClient]]:
    count = seats if players is None else players
    clients = [await WsClient(server.ws, "json", f"P{i}").connect() for i in range(count)]
    created = await clients[0].ok("create_room", seats=seats, public=True, **room)
    room_id = created["result"]["room"]
    for i, client in enumerate(clients):
        await client.join(room_id, f"P{i}")
    return room_id, clients


@BOTH_BACKENDS
async def test_leave_revokes_the_seat_token(
    start_server: StartServer, redis_client: aioredis.Redis, redis_prefix: str
) -> None:
    server = start_server()
    room, (host, guest) = await lobby(server, 2)
    solo_room, (solo,) = await lobby(server, 1, options={"first_player": "seat_order"})
    other = await WsClient(server.ws, "json", "other").connect()
    try:
        assert guest.token is not None
        assert solo.token is not None
        await guest.ok("leave")
        refused = await other.call("rejoin", room=room, token=guest.token)
        assert refused["code"] == "bad_token"
        token_hash = hashlib.sha256(guest.token.encode()).hexdigest()
        seats = await redis_client.hgetall(f"{redis_prefix}{{room:{room}}}:seats")
        assert f"t:{token_hash}".encode() not in seats
        # after game over, leave still succeeds and the token is gone too
        await solo.ok("start")
        await play_game({str(solo.player): solo}, solo)
        await solo.ok("leave")
        refused = await other.call("rejoin", room=solo_room, token=solo.token)
        assert refused["code"] == "bad_token"
    finally:
        for client in (host, guest, solo, other):
            await client.close()


@BOTH_BACKENDS
async def test_players_of_a_killed_process_are_marked_disconnected(
    start_server: StartServer,
) -> None:
    doomed, survivor = start_server(env=FAST), start_server(env=FAST)
    stays = await WsClient(survivor.ws, "json", "stays").connect()
    dies = await WsClient(doomed.ws, "json", "dies").connect()
    try:
        room = (await stays.ok("create_room", seats=2, public=True))["result"]["room"]
        await stays.join(room, "Stays")
        await dies.join(room, "Dies")
        doomed.kill()
        gone = await stays.wait_event(lambda e: e["type"] == "player_disconnected", within=10)
        assert gone["player"] == dies.player
        # exactly once, and the survivor's own player is untouched
        await stays.ok("hello")
        log = (await get_json(f"{survivor.http}/rooms/{room}/events"))["events"]
        assert [e["player"] for e in log if e["type"] == "player_disconnected"] == [dies.player]
        snap = await get_json(f"{survivor.http}/rooms/{room}")
        connected = {p["player"]: p["connected"] for p in snap["state"]["players"]}
        assert connected == {stays.player: True, dies.player: False}
    finally:
        await stays.close()
        await dies.close()


@BOTH_BACKENDS
async def test_an_absent_player_on_turn_is_played_for(start_server: StartServer) -> None:
    server = start_server(env={**FAST, "YAHTZEE_ABSENT_TURN_SECONDS": "1"})
    room, (first, second) = await lobby(server, 2, options={"first_player": "seat_order"})
    try:
        await first.ok("start")
        await second.wait_event(lambda e: e["type"] == "turn_changed")
        await first.close()
        gone = await second.wait_event(lambda e: e["type"] == "player_disconnected")
        auto = await second.wait_event(lambda e: e["type"] == "scored", within=10)
        assert auto["player"] == first.player
        assert auto["automatic"] is True
        assert auto["seq"] > gone["seq"]
        turn = await second.wait_event(lambda e: e["type"] == "turn_changed" and e["round"] == 1
                                       and e["player"] == second.player)  # fmt: skip
        assert turn["deadline_ms"] is None  # no turn timer in this room
    finally:
        await first.close()
        await second.close()
    assert room


async def test_an_absent_host_does_not_block_the_lobby(start_server: StartServer) -> None:
    server = start_server(env={**FAST, "YAHTZEE_ABSENT_TURN_SECONDS": "1"})
    room, (host, guest) = await lobby(server, 2)
    again = await WsClient(server.ws, "json", "again").connect()
    try:
        await host.close()
        left = await guest.wait_event(lambda e: e["type"] == "player_left", within=10)
        assert left["player"] == host.player
        assert left["forfeited"] is False
        new_host = await guest.wait_event(lambda e: e["type"] == "host_changed")
        assert new_host["player"] == guest.player
        await guest.ok("start")
        assert host.token is not None
        assert (await again.call("rejoin", room=room, token=host.token))["code"] == "bad_token"
    finally:
        for client in (host, guest, again):
            await client.close()


async def test_heartbeat_timeout_closes_with_1011(start_server: StartServer) -> None:
    """A client that never answers the server's Pings is closed with 1011 within 2 x
    heartbeat_seconds (sans-I/O client on a raw stream: the Pongs it owes are never sent)."""
    server = start_server(env={"YAHTZEE_HEARTBEAT_SECONDS": "1"})
    client, reader, writer = await raw_client(server.ws)
    try:
        await writer.drain()
        texts: list[dict[str, object]] = []
        close: Close | None = None
        async with asyncio.timeout(scaled(10)):
            while close is None:
                data = await reader.read(65536)
                if not data:
                    break
                client.receive_data(data)
                for event in client.events_received():
                    if isinstance(event, Frame) and event.opcode is Opcode.TEXT:
                        texts.append(json.loads(event.data))
                        started = time.monotonic()
                    elif isinstance(event, Frame) and event.opcode is Opcode.CLOSE:
                        close = Close.parse(event.data)
                client.data_to_send()  # dropped: no Pong ever reaches the server
        assert texts[0]["type"] == "welcome"
        assert texts[0]["heartbeat_seconds"] == 1
        assert close is not None
        assert close.code == 1011
        assert time.monotonic() - started <= scaled(2 * 1 + 1.5)
    finally:
        writer.close()


async def test_a_client_answering_pings_is_pinged_every_interval_and_kept(
    start_server: StartServer,
) -> None:
    """The server's Pings (one timer for all connections) come every heartbeat_seconds and a
    client whose library answers them stays connected (sans-I/O client: it answers each Ping)."""
    server = start_server(env={"YAHTZEE_HEARTBEAT_SECONDS": "1"})
    client, reader, writer = await raw_client(server.ws)
    try:
        pings: list[float] = []
        async with asyncio.timeout(scaled(15)):
            while len(pings) < 4:  # the handshake's own Ping, then three of the heartbeat
                data = await reader.read(65536)
                assert data, "the server closed a connection that answered its Pings"
                client.receive_data(data)
                for event in client.events_received():
                    assert not (isinstance(event, Frame) and event.opcode is Opcode.CLOSE)
                    if isinstance(event, Frame) and event.opcode is Opcode.PING:
                        pings.append(time.monotonic())
                writer.write(b"".join(client.data_to_send()))  # the Pongs
        # two intervals between the first and the third of the heartbeat's Pings, not two
        # ticks' 0.2 s (the slack: a busy machine may read the first one late)
        assert pings[3] - pings[1] >= 1.0, pings
    finally:
        writer.close()


@BOTH_BACKENDS
async def test_rejoin_closes_the_old_connection_with_1000(start_server: StartServer) -> None:
    servers = [start_server(), start_server()]
    room, (first, second) = await lobby(servers[0], 2)
    here = await WsClient(servers[0].ws, "json", "here").connect()
    there = await WsClient(servers[1].ws, "json", "there").connect()
    try:
        assert first.token is not None
        assert second.token is not None
        await here.ok("rejoin", room=room, token=first.token, last_seq=first.last_seq())
        assert await first.wait_closed() == 1000  # same process
        await there.ok("rejoin", room=room, token=second.token, last_seq=second.last_seq())
        assert await second.wait_closed() == 1000  # another process
        await there.ok("hello")
        assert (await here.call("start"))["type"] == "ack"  # the new connection acts
        log = (await get_json(f"{servers[0].http}/rooms/{room}/events"))["events"]
        assert not [e for e in log if e["type"] == "player_disconnected"]
    finally:
        for client in (first, second, here, there):
            await client.close()


async def test_server_time_in_welcome_and_turn_changed(start_server: StartServer) -> None:
    server = start_server()
    before = int(time.time() * 1000)
    room, (player,) = await lobby(
        server, 1, options={"first_player": "seat_order"}, turn_seconds=30
    )
    try:
        welcome = next(m for m in player.messages if m["type"] == "welcome")
        await player.ok("start")
        turn = await player.wait_event(lambda e: e["type"] == "turn_changed")
        after = int(time.time() * 1000)
        assert before - 1000 <= welcome["server_time_ms"] <= after + 1000
        assert before - 1000 <= turn["server_time_ms"] <= after + 1000
        assert turn["deadline_ms"] - turn["server_time_ms"] == 30_000
    finally:
        await player.close()
    assert room


@BOTH_BACKENDS
async def test_a_repeated_join_key_returns_the_same_seat_with_a_new_token(
    start_server: StartServer,
) -> None:
    server = start_server()
    room, (host,) = await lobby(server, 3, players=1)
    lost = await WsClient(server.ws, "json", "lost").connect()
    retry = await WsClient(server.ws, "json", "retry").connect()
    other = await WsClient(server.ws, "json", "other").connect()
    try:
        first = await lost.ok("join", room=room, name="Ann", join_key="k-123")
        # the ack was "lost": the client joins again with the same key on a new connection
        second = await retry.ok("join", room=room, name="Ann", join_key="k-123")
        await retry.wait_for(lambda: retry.snapshots)
        assert second["result"]["player"] == first["result"]["player"]
        assert second["result"]["seat"] == first["result"]["seat"] == 1
        assert second["result"]["token"] != first["result"]["token"]
        assert await lost.wait_closed() == 1000  # the seat moved to the new connection
        players = retry.snapshots[0]["state"]["players"]
        assert [p["name"] for p in players] == ["P0", "Ann"]
        old = await other.call("rejoin", room=room, token=first["result"]["token"])
        assert old["code"] == "bad_token"
        new = await WsClient(server.ws, "json", "new").connect()
        try:
            await new.ok("rejoin", room=room, token=second["result"]["token"])
        finally:
            await new.close()
        # another key is another seat
        await other.ok("join", room=room, name="Bob", join_key="k-456")
    finally:
        for client in (host, lost, retry, other):
            await client.close()


async def test_welcome_follows_the_pong_of_the_ping_sent_with_the_handshake(
    start_server: StartServer,
) -> None:
    """The server writes a Ping with the 101 response and the welcome only once the client
    answered it (SPEC.md 3.4): a client never reads the welcome together with the response."""
    server = start_server(env={"YAHTZEE_HEARTBEAT_SECONDS": "60"})
    client, reader, writer = await raw_client(server.ws)
    try:
        frames: list[Frame] = []
        async with asyncio.timeout(scaled(10)):
            while not any(frame.opcode is Opcode.TEXT for frame in frames):
                data = await reader.read(65536)
                assert data, "closed before the welcome"
                client.receive_data(data)
                frames += [e for e in client.events_received() if isinstance(e, Frame)]
                writer.write(b"".join(client.data_to_send()))  # the Pong, as every client
        assert (frames[0].opcode, frames[0].data) == (Opcode.PING, b"yahtzee-hello")
        assert frames[1].opcode is Opcode.TEXT
        assert json.loads(frames[1].data)["type"] == "welcome"
    finally:
        writer.close()
