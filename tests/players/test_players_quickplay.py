"""Quick play through two real server processes, real WebSockets, a real Redis and a real
PostgreSQL (for the remembered players quick play needs): matched across processes, nobody
matched twice under concurrency, a closed connection or a killed process leaves the queue,
computers fill the open seats after the wait, and the typed refusals."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import httpx
from procs import ServerProcess, StartServer
from wsclient import Msg, WsClient

TIMEOUT = 30.0
FAST = {"YAHTZEE_QUICK_PLAY_POLL_SECONDS": "0.1"}


async def guest(server: ServerProcess, name: str) -> WsClient:
    """A connection of a new remembered player (its token presented in `hello`)."""
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        reply = await http.post("/players", json={"name": name})
        assert reply.status_code == 201, reply.text
    client = await WsClient(server.ws, "json", name).connect()
    await client.ok("hello", player_token=reply.json()["token"])
    client.credential = reply.json()["token"]  # type: ignore[attr-defined]
    return client


async def matched(client: WsClient, within: float = TIMEOUT) -> Msg:
    found: Msg = await client.wait_for(
        lambda: next((m for m in client.messages if m["type"] == "quick_play_matched"), None),
        within,
    )
    return found


async def test_players_on_two_processes_are_matched_and_play_in_one_room(
    start_server: StartServer,
) -> None:
    one, two = start_server(FAST), start_server(FAST)
    ann, bob = await guest(one, "Ann Quick"), await guest(two, "Bob Quick")
    try:
        queued = await ann.ok("quick_play", seats=2, computers=False)
        assert queued["result"]["position"] == 1
        assert queued["result"]["rating"] is None  # no ratings wired: unrated
        assert queued["result"]["window"] == 400
        assert queued["result"]["computers_after_ms"] is None
        await bob.ok("quick_play", seats=2, computers=False)
        a, b = await matched(ann), await matched(bob)
        assert a["room"] == b["room"]
        assert {a["seat"], b["seat"]} == {0, 1}
        assert (a["opponents"], b["opponents"]) == (["Bob Quick"], ["Ann Quick"])
        assert a["computers"] == b["computers"] == []
        # the match is a seat as `join` gives it: rejoin with the token, and play
        for client, match in ((ann, a), (bob, b)):
            rejoined = await client.ok("rejoin", room=match["room"], token=match["token"])
            assert rejoined["result"]["player"] == match["player"]
        await ann.wait_for(lambda: any(
            m["type"] == "game_started" or (m["type"] == "snapshot" and m["state"]["status"]
                                             == "playing") for m in ann.messages))  # fmt: skip
        assert ann.snapshots[-1]["state"]["rated"] is True  # people only: a rated game
    finally:
        await ann.close()
        await bob.close()


async def test_nobody_is_matched_twice_when_many_queue_at_once_on_two_processes(
    start_server: StartServer,
) -> None:
    servers = [start_server(FAST), start_server(FAST)]
    clients = [await guest(servers[i % 2], f"Racer {i}") for i in range(12)]
    try:
        await asyncio.gather(*(c.ok("quick_play", seats=3, computers=False) for c in clients))
        matches = await asyncio.gather(*(matched(c) for c in clients))
        rooms = Counter(m["room"] for m in matches)
        assert sorted(rooms.values()) == [3, 3, 3, 3]
        seats = {(m["room"], m["seat"]) for m in matches}
        assert len(seats) == 12  # one seat each
        for client in clients:  # exactly one match each, however many processes tried
            assert sum(m["type"] == "quick_play_matched" for m in client.messages) == 1
    finally:
        for client in clients:
            await client.close()


async def test_computers_fill_the_open_seats_after_the_wait(start_server: StartServer) -> None:
    server = start_server({**FAST, "YAHTZEE_QUICK_PLAY_COMPUTER_AFTER_SECONDS": "0.5"})
    ann = await guest(server, "Ann Alone")
    try:
        queued = await ann.ok("quick_play", seats=3)
        assert queued["result"]["computers_after_ms"] == 500
        match = await matched(ann)
        assert match["opponents"] == []
        assert [c["level"] for c in match["computers"]] == ["medium", "medium"]  # 1500
        assert match["waited_ms"] >= 500
        await ann.ok("rejoin", room=match["room"], token=match["token"])
        snapshot = await ann.wait_for(lambda: ann.snapshots)
        computers = [p for p in snapshot[-1]["state"]["players"] if p["computer"]]
        assert len(computers) == 2
        assert snapshot[-1]["state"]["rated"] is False  # computers: a casual game
    finally:
        await ann.close()


async def test_refusals_are_typed(start_server: StartServer) -> None:
    one, two = start_server(FAST), start_server(FAST)
    anonymous = await WsClient(one.ws, "json", "anon").connect()
    ann = await guest(one, "Ann Twice")
    again = WsClient(two.ws, "json", "ann2")
    try:
        refused = await anonymous.call("quick_play", seats=2)
        assert (refused["type"], refused["code"]) == ("error", "identity_required")
        assert (await anonymous.call("quick_play", seats=5))["code"] == "out_of_range"
        assert (await anonymous.call("quick_play", rules="poker"))["code"] == "invalid_field"
        assert (await ann.call("cancel_quick_play"))["code"] == "not_queued"
        await ann.ok("quick_play", seats=4, computers=False)
        assert (await ann.call("quick_play", seats=4))["code"] == "already_queued"
        # the same player on another connection and process, in another queue
        await again.connect()
        await again.ok("hello", player_token=ann.credential)  # type: ignore[attr-defined]
        assert (await again.call("quick_play", seats=2))["code"] == "already_queued"
        await ann.ok("cancel_quick_play")
        assert (await again.ok("quick_play", seats=2))["result"]["position"] == 1
    finally:
        await again.close()  # (a failure must not leave a socket for a later test's GC)
        await anonymous.close()
        await ann.close()


async def queue_when_free(client: WsClient, within: float = TIMEOUT, **fields: object) -> Msg:
    """`quick_play` until the player's earlier ticket is gone (each try waits for its reply)."""
    deadline = time.monotonic() + within
    while True:
        reply = await client.call("quick_play", **fields)
        if reply["type"] == "ack":
            return reply
        # (rate_limited: the tries came faster than the connection's rate allows)
        assert reply["code"] in ("already_queued", "rate_limited"), reply
        assert time.monotonic() < deadline, "the earlier ticket never left the queue"
        # The ticket leaves at a time (its TTL): polled, a tenth of a second apart, so the
        # tries stay well under the message rate however long the machine takes.
        await asyncio.sleep(0.1)


async def test_a_closed_connection_leaves_the_queue(start_server: StartServer) -> None:
    one, two = start_server(FAST), start_server(FAST)
    ann = await guest(one, "Ann Leaves")
    token = ann.credential  # type: ignore[attr-defined]
    await ann.ok("quick_play", seats=2, computers=False)
    await ann.close()
    back = await WsClient(two.ws, "json", "ann-back").connect()
    bob = await guest(two, "Bob Stays")
    try:
        await back.ok("hello", player_token=token)
        await queue_when_free(back, seats=2, computers=False)
        await bob.ok("quick_play", seats=2, computers=False)
        assert (await matched(bob))["opponents"] == ["Ann Leaves"]
        await matched(back)
    finally:
        await back.close()
        await bob.close()


async def test_a_killed_process_s_players_expire_from_the_queue(
    start_server: StartServer,
) -> None:
    env = {**FAST, "YAHTZEE_QUICK_PLAY_TTL_SECONDS": "1"}
    doomed, alive = start_server(env), start_server(env)
    ann = await guest(doomed, "Ann Ghost")
    token = ann.credential  # type: ignore[attr-defined]
    await ann.ok("quick_play", seats=3, computers=False)
    doomed.kill()  # no cleanup: only the ticket's expiry takes her out
    back = await WsClient(alive.ws, "json", "ann-back").connect()
    try:
        await back.ok("hello", player_token=token)
        started = time.monotonic()
        await queue_when_free(back, seats=3, computers=False)
        assert time.monotonic() - started < 10
    finally:
        await back.close()
        await ann.close()


async def test_the_load_figure_at_tiny_size_matches_everyone_exactly_once(
    start_server: StartServer,
) -> None:
    from clients.bench.quickplay import run, simulated_rating, summarize
    from server.service.quickplay import simulated_rating as server_rating

    assert simulated_rating("p1a2b3") == server_rating("p1a2b3")  # the bench's formula
    env = {
        **FAST,
        "YAHTZEE_QUICK_PLAY_SIMULATED_RATINGS": "1",
        "YAHTZEE_QUICK_PLAY_COMPUTER_AFTER_SECONDS": "3",
        "YAHTZEE_PLAYERS_PER_HOUR": "100000",
    }
    one, two = start_server(env), start_server(env)
    outcomes = await run([one.ws, two.ws], players=16, seconds=2.0, seats=2)
    summary = summarize(outcomes, 2)
    print("\n".join(summary.lines()))
    assert [o.error for o in outcomes if o.error] == []
    assert summary.matched_once == 16
    assert summary.seat_collisions == 0
    assert summary.rooms_full == summary.rooms


async def test_entering_a_room_while_waiting_leaves_the_queue(start_server: StartServer) -> None:
    server = start_server(FAST)
    ann = await guest(server, "Ann Joins")
    other = await WsClient(server.ws, "json", "ann-other").connect()
    try:
        await ann.ok("quick_play", seats=2, computers=False)
        room = (await ann.ok("create_room", seats=2, public=True))["result"]["room"]
        await ann.join(room, "Ann")  # the join's ack comes after she left the queue
        await other.ok("hello", player_token=ann.credential)  # type: ignore[attr-defined]
        assert (await other.ok("quick_play", seats=2))["result"]["position"] == 1
    finally:
        await ann.close()
        await other.close()
