"""Protocol 1.3 for the web page, end to end against real server processes and real WebSocket
clients: rooms that start when full, the computers' delay shown, rematches, the away
countdown and ghost rooms leaving the lobby."""

from __future__ import annotations

import asyncio
import time

import pytest
from gameplay import play_game, play_turn
from lobbystreams import entry, lobby_streams
from procs import ServerProcess, StartServer
from wsclient import Msg, WsClient, get_json, http_get

pytestmark = pytest.mark.usefixtures("official_table")

FAST = {"YAHTZEE_PLAYER_LEASE_SECONDS": "1", "YAHTZEE_TIMER_POLL_SECONDS": "0.05"}


@pytest.fixture
def fast(start_server: StartServer) -> ServerProcess:
    """A server whose computers move without delay."""
    return start_server({"YAHTZEE_COMPUTER_DELAY_MS": "0"})


def turn_of(events: list[Msg]) -> str | None:
    for event in reversed(events):
        if event["type"] == "game_over":
            return None
        if event["type"] == "turn_changed":
            return str(event["player"])
    return None


async def play_with_computers(people: dict[str, WsClient], observer: WsClient) -> Msg:
    """Play the people's turns (one roll, the best box) until game over; returns it."""
    while True:
        await observer.wait_for(
            lambda: (
                any(e["type"] == "game_over" for e in observer.events)
                or turn_of(observer.events) in people
            ),
            within=60,
        )
        over = [e for e in observer.events if e["type"] == "game_over"]
        if over:
            return over[0]
        last = await play_turn(people[str(turn_of(observer.events))], rolls=1)
        await observer.wait_event(lambda e, s=last["seq"]: e["seq"] >= s)


async def test_an_auto_start_room_starts_when_the_last_seat_is_taken(fast: ServerProcess) -> None:
    ann = await WsClient(fast.ws, "json", "Ann").connect()
    bob = await WsClient(fast.ws, "msgpack", "Bob").connect()
    solo = await WsClient(fast.ws, "json", "Solo").connect()
    try:
        created = await ann.ok(
            "create_room", seats=2, public=True, auto_start=True, computer_delay_ms=250,
            options={"first_player": "seat_order"},
        )  # fmt: skip
        room = created["result"]["room"]
        listed = entry((await ann.ok("list_rooms"))["result"]["rooms"], room)
        assert listed is not None
        assert (listed["auto_start"], listed["computer_delay_ms"]) == (True, 250)
        http_listed = entry((await get_json(f"{fast.http}/rooms"))["rooms"], room)
        assert http_listed == listed
        await ann.join(room, "Ann")
        state = ann.snapshots[-1]["state"]
        assert (state["auto_start"], state["computer_delay_ms"], state["rematch_room"]) == (
            True,
            250,
            None,
        )
        assert not any(e["type"] == "game_started" for e in ann.events)
        joined = await bob.join(room, "Bob")  # the last seat: nobody sends start
        started = await ann.wait_event(lambda e: e["type"] == "game_started")
        assert started["order"] == [ann.player, bob.player]
        turn = await ann.wait_event(lambda e: e["type"] == "turn_changed")
        assert turn["player"] == ann.player
        assert joined["seq"] >= turn["seq"]  # the join's ack covers the start it caused
        # a room without auto_start still waits for its host; the default delay is shown
        plain = (await solo.ok("create_room", seats=1, public=True))["result"]["room"]
        await solo.join(plain, "Solo")
        assert solo.snapshots[-1]["state"]["auto_start"] is False
        assert solo.snapshots[-1]["state"]["computer_delay_ms"] == 0  # the server's default
        await solo.ok("hello")
        assert not any(e["type"] == "game_started" for e in solo.events)
    finally:
        for client in (ann, bob, solo):
            await client.close()


async def test_a_computer_seated_by_the_host_can_fill_an_auto_start_room(
    fast: ServerProcess,
) -> None:
    host = await WsClient(fast.ws, "json", "Host").connect()
    try:
        created = await host.ok(
            "create_room", seats=2, public=True, auto_start=True,
            options={"first_player": "seat_order"},
        )  # fmt: skip
        room = created["result"]["room"]
        await host.join(room, "Host")
        added = await host.ok("add_computer", level="easy")
        started = await host.wait_event(lambda e: e["type"] == "game_started")
        assert started["order"] == [host.player, added["result"]["player"]]
        assert added["seq"] > started["seq"]
    finally:
        await host.close()


async def test_a_rematch_is_made_once_with_the_same_room_and_seats_everyone_who_offers(
    fast: ServerProcess,
) -> None:
    ann = await WsClient(fast.ws, "json", "Ann").connect()
    bob = await WsClient(fast.ws, "msgpack", "Bob").connect()
    try:
        created = await ann.ok(
            "create_room", seats=3, public=True, computers=[{"level": "easy", "name": "Greedy"}],
            computer_delay_ms=0, hints=False, options={"first_player": "seat_order",
                                                        "upper_first": "on"},
        )  # fmt: skip
        old = created["result"]["room"]
        await ann.join(old, "Ann")
        await bob.join(old, "Bob")
        refused = await ann.call("offer_rematch")
        assert refused["code"] == "wrong_phase"  # not before game over
        await ann.ok("start")
        await play_with_computers({str(ann.player): ann, str(bob.player): bob}, ann)
        # both offer at once: one rematch room, one rematch_offered
        first, second = await asyncio.gather(ann.ok("offer_rematch"), bob.ok("offer_rematch"))
        rematch = first["result"]["room"]
        assert second["result"]["room"] == rematch
        assert first["result"]["invite_code"] is None  # public like the old room
        offered = await bob.wait_event(lambda e: e["type"] == "rematch_offered")
        assert offered["rematch_room"] == rematch
        assert offered["invite_code"] is None
        assert offered["player"] in (ann.player, bob.player)
        await ann.wait_event(lambda e: e["type"] == "rematch_offered")
        log = (await get_json(f"{fast.http}/rooms/{old}/events"))["events"]
        assert [e["type"] for e in log].count("rematch_offered") == 1
        old_state = (await get_json(f"{fast.http}/rooms/{old}"))["state"]
        assert old_state["rematch_room"] == rematch
        # the same settings and computers, auto_start on; both people seated: it started
        new = (await get_json(f"{fast.http}/rooms/{rematch}"))["state"]
        assert new["options"] == old_state["options"]
        assert (new["max_seats"], new["hints"], new["computer_delay_ms"]) == (3, False, 0)
        assert (new["auto_start"], new["public"], new["status"]) == (True, True, "playing")
        players = {p["name"]: p for p in new["players"]}
        assert set(players) == {"Greedy", "Ann", "Bob"}
        assert players["Greedy"]["computer"] == "easy"
        assert players["Ann"]["player"] == first["result"]["player"]
        assert players["Ann"]["connected"] is False  # until Ann rejoins there
        # an offer again: the same room, the same seat, a new token
        again = await ann.ok("offer_rematch")
        assert again["result"]["room"] == rematch
        assert again["result"]["player"] == first["result"]["player"]
        assert again["result"]["token"] != first["result"]["token"]
        # the player moves over: leave the finished room, rejoin the rematch with the token
        await ann.ok("leave")
        stale = await ann.call("rejoin", room=rematch, token=first["result"]["token"])
        assert stale["code"] == "bad_token"
        back = await ann.ok("rejoin", room=rematch, token=again["result"]["token"])
        assert back["result"]["player"] == first["result"]["player"]
        shown = {p["player"]: p for p in ann.snapshots[-1]["state"]["players"]}
        assert ann.snapshots[-1]["room"] == rematch  # the snapshot covers the reconnection
        assert shown[back["result"]["player"]]["connected"] is True
        assert shown[back["result"]["player"]]["away_deadline_ms"] is None
    finally:
        await ann.close()
        await bob.close()


async def test_a_private_rematch_has_a_fresh_code_and_no_seat_once_it_is_full(
    start_server: StartServer,
) -> None:
    server = start_server()
    ann = await WsClient(server.ws, "json", "Ann").connect()
    bob = await WsClient(server.ws, "json", "Bob").connect()
    eve = await WsClient(server.ws, "json", "Eve").connect()
    try:
        created = await ann.ok(
            "create_room", seats=2, public=False, options={"first_player": "seat_order"}
        )
        old, code = created["result"]["room"], created["result"]["invite_code"]
        await ann.join(old, "Ann", invite_code=code)
        await bob.join(old, "Bob", invite_code=code)
        await ann.ok("start")
        await play_game({str(ann.player): ann, str(bob.player): bob}, ann)
        offer = (await ann.ok("offer_rematch"))["result"]
        rematch, fresh = offer["room"], offer["invite_code"]
        assert fresh is not None
        assert fresh != code
        offered = await bob.wait_event(lambda e: e["type"] == "rematch_offered")
        assert (offered["rematch_room"], offered["invite_code"]) == (rematch, fresh)
        assert (await http_get(f"{server.http}/rooms/{rematch}")).status_code == 403  # private
        # a stranger with the new code takes the last seat: the game starts, Bob has no seat
        await eve.join(rematch, "Eve", invite_code=fresh)
        assert eve.snapshots[-1]["state"]["status"] == "playing"  # the join started it
        late = (await bob.ok("offer_rematch"))["result"]
        assert (late["room"], late["invite_code"]) == (rematch, fresh)
        assert (late["player"], late["seat"], late["token"]) == (None, None, None)
        # spectators cannot offer
        await eve.ok("leave")
        await eve.ok("spectate", room=old, invite_code=code)
        refused = await eve.call("offer_rematch")
        assert refused["code"] == "spectator_cannot_act"
    finally:
        for client in (ann, bob, eve):
            await client.close()


async def test_player_disconnected_tells_when_the_absent_player_s_turns_are_played(
    start_server: StartServer,
) -> None:
    server = start_server({**FAST, "YAHTZEE_ABSENT_TURN_SECONDS": "30"})
    ann = await WsClient(server.ws, "json", "Ann").connect()
    bob = await WsClient(server.ws, "json", "Bob").connect()
    try:
        room = (await ann.ok("create_room", seats=2, public=True))["result"]["room"]
        await ann.join(room, "Ann")
        await bob.join(room, "Bob")
        before = int(time.time() * 1000)
        await bob.close()
        gone = await ann.wait_event(lambda e: e["type"] == "player_disconnected")
        after = int(time.time() * 1000)
        deadline = gone["away_deadline_ms"]
        assert before + 30_000 <= deadline <= after + 30_000
        state = (await get_json(f"{server.http}/rooms/{room}"))["state"]
        views = {p["player"]: p for p in state["players"]}
        assert views[bob.player]["away_deadline_ms"] == deadline
        assert views[ann.player]["away_deadline_ms"] is None
        # under a turn timer the timer plays for everyone: no away deadline
        timed = (await ann.ok("create_room", seats=2, public=True, turn_seconds=60))["result"]
        late = await WsClient(server.ws, "json", "Late").connect()
        await ann.ok("leave")
        await ann.join(timed["room"], "Ann")
        await late.join(timed["room"], "Late")
        await late.close()
        away = await ann.wait_event(
            lambda e: e["type"] == "player_disconnected" and e["room"] == timed["room"]
        )
        assert away["away_deadline_ms"] is None
    finally:
        await ann.close()
        await bob.close()


async def test_a_lobby_whose_people_are_all_gone_leaves_the_lobby_until_one_is_back(
    start_server: StartServer,
) -> None:
    server = start_server({**FAST, "YAHTZEE_ABSENT_TURN_SECONDS": "1"})
    ann = await WsClient(server.ws, "json", "Ann").connect()
    again = await WsClient(server.ws, "json", "Again").connect()
    try:
        room = (await ann.ok("create_room", seats=3, public=True))["result"]["room"]
        await ann.join(room, "Ann")
        async with lobby_streams(server) as (stream,):
            await stream.wait_for(lambda rooms: entry(rooms, room) is not None)
            await ann.close()
            # disconnected (a pushed list shows the change), then gone once the grace is over
            await stream.wait_for(lambda rooms: entry(rooms, room) is None, within=20)
            listed = (await again.ok("list_rooms"))["result"]["rooms"]
            assert entry(listed, room) is None
            assert entry((await get_json(f"{server.http}/rooms"))["rooms"], room) is None
            # still there for whoever has its id; a player back puts it in the list again
            assert ann.token is not None
            seen = len(stream.lists)
            await again.ok("rejoin", room=room, token=ann.token)
            await stream.wait_for(
                lambda rooms: (
                    entry(rooms, room) is not None and any(r is rooms for r in stream.lists[seen:])
                )
            )
    finally:
        await ann.close()
        await again.close()
