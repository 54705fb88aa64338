"""What a client author reads in SPEC.md is what the server does: the points a Go client's
author found unclear or contradicted (rejoin of a room that does not exist, spectator counts
and ``expect_seq``, ``last_seq: 0``, finished rooms in the lobby list, ``remove_computer`` of a
person)."""

from __future__ import annotations

from gameplay import play_game
from procs import StartServer
from wsclient import WsClient, get_json


async def _room(
    server_ws: str, people: int, public: bool = False
) -> tuple[str, str, list[WsClient]]:
    clients = [await WsClient(server_ws, "json", f"p{i}").connect() for i in range(people)]
    created = await clients[0].ok(
        "create_room",
        seats=people,
        public=public,
        turn_seconds=0,
        options={"first_player": "seat_order"},
    )
    room, invite = created["result"]["room"], created["result"]["invite_code"]
    for i, client in enumerate(clients):
        await client.join(room, f"P{i}", invite_code=invite)
    return room, invite, clients


async def test_rejoin_of_a_room_that_does_not_exist_is_room_not_found(
    start_server: StartServer,
) -> None:
    server = start_server()
    room, _, (host,) = await _room(server.ws, 1)
    stranger = await WsClient(server.ws, "json", "x").connect()
    try:
        missing = await stranger.call("rejoin", room="no-such-room", token="tk_whatever")
        assert missing["code"] == "room_not_found"
        wrong = await stranger.call("rejoin", room=room, token="tk_whatever")
        assert wrong["code"] == "bad_token"
    finally:
        await stranger.close()
        await host.close()


async def test_a_spectator_count_does_not_make_expect_seq_stale(start_server: StartServer) -> None:
    server = start_server()
    room, invite, (ann, bob) = await _room(server.ws, 2)
    watcher = await WsClient(server.ws, "json", "w").connect()
    try:
        started = await ann.ok("start")
        seen = started["seq"]  # ann's last seen seq: the game's last event
        await watcher.ok("spectate", room=room, invite_code=invite)
        counted = await ann.wait_event(lambda e: e["type"] == "spectators")
        assert counted["seq"] > seen  # the count took a seq after what ann decided on
        # ann decided on `seen`; only a spectator count came after it: the roll runs
        rolled = await ann.call("roll", keep=[], expect_seq=seen)
        assert rolled["type"] == "ack", rolled
        # bob has not seen ann's roll (a game event): stale, whatever counts came before it
        stale = await bob.call("roll", keep=[], expect_seq=counted["seq"])
        assert stale["code"] == "stale_state"
        assert stale["seq"] == rolled["seq"]
        # an expect_seq past the room's seq is stale too
        ahead = await ann.call("score", box="chance", expect_seq=rolled["seq"] + 1)
        assert ahead["code"] == "stale_state"
        assert (await ann.call("score", box="chance", expect_seq=rolled["seq"]))["type"] == "ack"
    finally:
        for client in (ann, bob, watcher):
            await client.close()


async def test_last_seq_zero_replays_the_room_from_its_first_event(
    start_server: StartServer,
) -> None:
    server = start_server()
    room, invite, (ann,) = await _room(server.ws, 1)
    watcher = await WsClient(server.ws, "json", "w").connect()
    try:
        await ann.ok("start")
        watching = await watcher.ok("spectate", room=room, invite_code=invite, last_seq=0)
        assert watching["result"]["resumed"] is True
        await watcher.wait_for(lambda: any(e["seq"] == watching["seq"] for e in watcher.events))
        assert watcher.snapshots == []
        seqs = [e["seq"] for e in watcher.events if e["seq"] <= watching["seq"]]
        assert seqs == list(range(1, watching["seq"] + 1))
        assert watcher.events[0]["type"] == "player_joined"
    finally:
        await ann.close()
        await watcher.close()


async def test_finished_public_rooms_are_listed_by_list_rooms_and_get_rooms(
    start_server: StartServer,
) -> None:
    server = start_server()
    room, _, (ann,) = await _room(server.ws, 1, public=True)
    try:
        await ann.ok("start")
        await play_game({str(ann.player): ann}, ann)
        listed = await ann.ok("list_rooms")
        statuses = {r["room"]: r["status"] for r in listed["result"]["rooms"]}
        assert statuses.get(room) == "finished"
        http = await get_json(f"{server.http}/rooms")
        assert {r["room"]: r["status"] for r in http["rooms"]}.get(room) == "finished"
    finally:
        await ann.close()


async def test_remove_computer_of_a_person_is_invalid_field(start_server: StartServer) -> None:
    server = start_server()
    _, _, (ann, bob) = await _room(server.ws, 2)
    try:
        refused = await ann.call("remove_computer", player=bob.player)
        assert refused["code"] == "invalid_field"
        assert refused["id"] is not None
    finally:
        await ann.close()
        await bob.close()
