"""Several server processes sharing one Redis: races, crashes and timers."""

from __future__ import annotations

import asyncio
from collections import Counter

import websockets
from gameplay import assert_gap_free, play_game, play_turn, replay, totals_of
from procs import BOTH_BACKENDS, ServerProcess, StartServer
from wsclient import WsClient, get_json

from server import game


async def seated_room(
    servers: list[ServerProcess], seats: int, **room: object
) -> tuple[str, list[WsClient]]:
    """Players alternate between ``servers``; returns the room id and the players in seat order."""
    clients = [
        await WsClient(servers[i % len(servers)].ws, "json", f"P{i}").connect()
        for i in range(seats)
    ]
    created = await clients[0].ok("create_room", seats=seats, public=True, **room)
    room_id = created["result"]["room"]
    for i, client in enumerate(clients):
        await client.join(room_id, f"Player{i}")
    return room_id, clients


@BOTH_BACKENDS
async def test_two_processes_finish_a_game(start_server: StartServer) -> None:
    servers = [start_server(), start_server()]
    room, players = await seated_room(servers, 4)
    watchers = [await WsClient(s.ws, "msgpack", f"S{i}").connect() for i, s in enumerate(servers)]
    try:
        for watcher in watchers:
            await watcher.ok("spectate", room=room, last_seq=0)
        await players[0].ok("start")
        by_id = {c.player: c for c in players}
        over = await play_game(by_id, watchers[1])
        for client in [*players, *watchers]:
            await client.wait_for(lambda c=client: c.last_seq() >= over["seq"])
        # the same stream up to the game's end; each process announces the spectator count on
        # a timer of its own, so a count may still follow a quick game's end
        until_over = [[e for e in w.events if e["seq"] <= over["seq"]] for w in watchers]
        assert until_over[0] == until_over[1]
        assert_gap_free(watchers[0].events, 0)
        state = replay(until_over[0], game.RuleOptions(), 4)
        assert totals_of(over) == {p: game.totals(state, p).grand for p in by_id}
    finally:
        for client in [*players, *watchers]:
            await client.close()


@BOTH_BACKENDS
async def test_racing_rolls_on_one_seat_make_at_most_three_rolls(
    start_server: StartServer,
) -> None:
    """The seat is taken over by a connection on another process while both fire rolls: the
    old connection is closed with 1000 and the room sees at most three rolls."""
    servers = [start_server(), start_server()]
    room, (first,) = await seated_room(servers, 1, options={"first_player": "seat_order"})
    twin = await WsClient(servers[1].ws, "msgpack", "twin").connect()

    async def storm(client: WsClient) -> list[str]:
        ids = []
        for _ in range(25):
            try:
                ids.append(await client.send("roll"))
            except websockets.ConnectionClosed:
                break
        return ids

    async def take_over() -> list[str]:
        assert first.token is not None
        rejoin = await twin.send("rejoin", room=room, token=first.token, last_seq=0)
        return [rejoin, *await storm(twin)]

    try:
        await first.ok("start")
        await first.wait_event(lambda e: e["type"] == "turn_changed")
        first_ids, twin_ids = await asyncio.gather(storm(first), take_over())
        assert await first.wait_closed() == 1000
        twin_replies = [await twin.wait_for(lambda i=i: twin.replies.get(i)) for i in twin_ids]
        assert twin_replies[0]["type"] == "ack"
        replies = [first.replies[i] for i in first_ids if i in first.replies] + twin_replies[1:]
        acks = [r for r in replies if r["type"] == "ack"]
        errors = Counter(r["code"] for r in replies if r["type"] == "error")
        assert len(acks) <= 3
        assert set(errors) <= {"no_rolls_left", "rate_limited", "conflict", "not_in_room"}
        log = await get_json(f"{servers[0].http}/rooms/{room}/events")
        rolls = [e for e in log["events"] if e["type"] == "rolled"]
        assert len(acks) <= len(rolls) <= 3
        assert [r["roll_number"] for r in rolls] == list(range(1, len(rolls) + 1))
    finally:
        await first.close()
        await twin.close()


@BOTH_BACKENDS
async def test_sigkill_one_process_players_finish_on_the_other(
    start_server: StartServer,
) -> None:
    doomed, survivor = start_server(), start_server()
    room, players = await seated_room([doomed, survivor], 2)
    by_id = {c.player: c for c in players}
    try:
        await players[0].ok("start")
        current = await players[1].wait_event(lambda e: e["type"] == "turn_changed")
        for _ in range(3):
            current = await play_turn(by_id[current["player"]])
            for client in players:
                await client.wait_event(lambda e, s=current["seq"]: e["seq"] >= s)
        before = list(players[0].events)
        snapshot_seq = players[0].snapshots[0]["seq"]

        doomed.kill()
        await players[0].wait_closed()
        # it reconnects to the surviving process with its token and the last seq it saw
        moved = WsClient(survivor.ws, "msgpack", "P0b")
        await moved.connect()
        moved.player, moved.token = players[0].player, players[0].token
        await moved.ok("rejoin", room=room, token=players[0].token, last_seq=players[0].last_seq())
        by_id[moved.player] = moved
        over = await play_game(by_id, players[1])
        await moved.wait_for(lambda: moved.last_seq() >= over["seq"])

        assert moved.snapshots == []  # nothing was lost: the missed events were replayed
        stream = before + moved.events
        assert_gap_free(stream, snapshot_seq)
        log = await get_json(f"{survivor.http}/rooms/{room}/events")
        assert stream == log["events"][snapshot_seq:]
        assert players[1].events == log["events"][players[1].snapshots[0]["seq"] :]
        state = replay(log["events"], game.RuleOptions(), 2)
        assert totals_of(over) == {p: game.totals(state, p).grand for p in by_id}
    finally:
        for client in [*players, *by_id.values()]:
            await client.close()


@BOTH_BACKENDS
async def test_expired_turn_timer_fires_exactly_once(start_server: StartServer) -> None:
    env = {"YAHTZEE_TIMER_POLL_SECONDS": "0.02"}
    servers = [start_server(env=env), start_server(env=env)]
    room, (first, second) = await seated_room(
        servers, 2, turn_seconds=2, options={"first_player": "seat_order"}
    )
    try:
        await first.ok("start")
        turn = await first.wait_event(lambda e: e["type"] == "turn_changed")
        assert turn["deadline_ms"] is not None
        # nobody plays: the first turn is played by the server, once
        auto = await second.wait_event(lambda e: e["type"] == "scored", within=10)
        assert auto["automatic"] is True
        assert auto["player"] == first.player
        nxt = await second.wait_event(
            lambda e: e["type"] == "turn_changed" and e["seq"] > auto["seq"]
        )
        assert nxt["player"] == second.player
        # the second player plays in time; then everyone leaves (game over, no more timers)
        await play_turn(second, rolls=1)
        await second.ok("leave")
        await first.ok("leave")
        log = (await get_json(f"{servers[0].http}/rooms/{room}/events"))["events"]
        turns = Counter((e["player"], e["round"]) for e in log if e["type"] == "turn_changed")
        scored_turns = [e["player"] for e in log if e["type"] == "scored"]
        assert all(n == 1 for n in turns.values())
        assert [e["type"] for e in log].count("rolled") >= 2
        rolled_players = [e["player"] for e in log if e["type"] == "rolled"]
        assert rolled_players.count(first.player) == 1  # one automatic roll, not two
        assert scored_turns[:2] == [first.player, second.player]
        automatic = [e for e in log if e["type"] == "scored" and e["automatic"]]
        assert len(automatic) <= 2
        assert automatic[0] == auto
    finally:
        await first.close()
        await second.close()
