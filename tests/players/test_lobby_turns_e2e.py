"""A lobby stream opened with a player token (SPEC.md 13.6): the player's turn list as ``turns``
events, through real server processes, a real Redis and a real PostgreSQL. Every step waits
for an event on the stream, never for time: the push of the process that committed the move
(a re-read interval of an hour cannot be what delivers it), and across processes the bounded
re-read."""

from __future__ import annotations

import itertools
from typing import Any

import httpx
from gameplay import play_turn
from lobbystreams import entry, lobby_streams
from procs import StartServer
from test_correspondence_e2e import TIMEOUT, bearer, seated_pair


def _listed(body: dict[str, Any]) -> dict[str, Any]:
    """A turn list without the server's clock (which moves on every read)."""
    return {key: value for key, value in body.items() if key != "server_time_ms"}


async def test_a_player_token_stream_pushes_the_turn_list_when_the_turn_becomes_mine(
    start_server: StartServer,
) -> None:
    # An hour between re-reads: only the push of the committing process can be in time.
    server = start_server(env={"YAHTZEE_LOBBY_TURNS_SECONDS": "3600", "YAHTZEE_LOG_LEVEL": "info"})
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        room, who = await seated_pair(server.ws, http)
        ann, bob = who["ann"], who["bob"]
        mine = bearer(who["bob_token"])
        try:
            async with (
                lobby_streams(server, headers=mine) as (stream,),
                lobby_streams(server) as (anonymous,),
            ):
                first = await stream.wait_turns(lambda body: True, within=5)  # at once
                assert first["player"] == who["bob_id"]
                assert first["turns"] == []
                assert [(e["room"], e["on_turn"], e["my_turn"]) for e in first["games"]] == [
                    (room, "Ann", False)
                ]
                await stream.wait_for(lambda rooms: entry(rooms, room) is not None)
                await anonymous.wait_for(lambda rooms: entry(rooms, room) is not None)

                await play_turn(ann)  # Ann scores: the turn becomes Bob's

                now = await stream.wait_turns(lambda body: body["turns"] != [])
                assert [(e["room"], e["on_turn"], e["my_turn"]) for e in now["turns"]] == [
                    (room, "Bob", True)
                ]
                assert now["games"] == []
                route = await http.get(f"/players/{who['bob_id']}/turns", headers=mine)
                assert _listed(now) == _listed(route.json())  # as the route answers it
                # A list is sent only when it changed; the anonymous stream has none.
                sent = [_listed(body) for body in stream.turns]
                assert all(a != b for a, b in itertools.pairwise(sent))
                assert set(anonymous.event_types) == {"rooms"}
                assert anonymous.turns == []

                await bob.ok("leave")  # Bob forfeits: the game leaves his list
                empty = {"player": who["bob_id"], "turns": [], "games": []}
                await stream.wait_turns(lambda body: _listed(body) == empty)
        finally:
            await ann.close()
            await bob.close()

        refused = await http.get("/lobby", headers=bearer("yzp_not-a-real-token-4711"))
        assert (refused.status_code, refused.json()["code"]) == (401, "bad_player_token")
        assert refused.headers["content-type"] == "application/json"

    log = server.log_path.read_text(errors="replace")
    assert '"GET /lobby HTTP/1.1" 200' in log  # the access log was written
    assert '"GET /lobby HTTP/1.1" 401' in log
    assert who["bob_token"] not in log
    assert "not-a-real-token-4711" not in log


async def test_a_move_on_another_process_reaches_the_stream_within_the_re_read_bound(
    start_server: StartServer,
) -> None:
    interval = 0.5
    watched = start_server(env={"YAHTZEE_LOBBY_TURNS_SECONDS": str(interval)})
    played = start_server()  # Ann and Bob play here: its commits wake nothing on `watched`
    async with httpx.AsyncClient(base_url=played.http, timeout=TIMEOUT) as http:
        room, who = await seated_pair(played.ws, http)
        ann, bob = who["ann"], who["bob"]
        try:
            async with lobby_streams(watched, headers=bearer(who["bob_token"])) as (stream,):
                first = await stream.wait_turns(lambda body: True, within=5)
                assert first["turns"] == []
                await play_turn(ann)
                # The bound: one re-read interval, plus generous room for a loaded machine.
                now = await stream.wait_turns(lambda body: body["turns"] != [], within=5)
                assert [(e["room"], e["my_turn"]) for e in now["turns"]] == [(room, True)]
        finally:
            await ann.close()
            await bob.close()
