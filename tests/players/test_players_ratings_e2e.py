"""Rated rooms through real server processes, WebSocket clients, Redis and PostgreSQL: the
refusals (typed codes), a rated game told to its players with `ratings`, the leaderboards and
the profile over HTTP, and the leaderboards rebuilt by a new process from the database."""

from __future__ import annotations

import httpx
import redis.asyncio as aioredis
from gameplay import play_game
from procs import StartServer
from test_players_e2e import TIMEOUT, BearerClient, archived, new_player
from wsclient import WsClient


async def test_a_rated_game_is_told_ranked_and_shown(
    start_server: StartServer, redis_url: str, redis_prefix: str
) -> None:
    server = start_server()
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        ann_id, ann_token = await new_player(http, "Ann")
        bob_id, bob_token = await new_player(http, "Bob")
        ann = await BearerClient(server.ws, ann_token, "ann").connect()
        bob = await BearerClient(server.ws, bob_token, "bob").connect()
        cy = await WsClient(server.ws, "json", "cy").connect()  # anonymous
        try:
            refused = await cy.call("create_room", seats=2, public=True, rated=True)
            assert (refused["code"], refused["retryable"]) == ("identity_required", False)
            bots = await ann.call(
                "create_room", seats=2, public=True, rated=True, computers=[{"level": "easy"}]
            )
            assert bots["code"] == "rated_no_computers"
            room = (await ann.ok("create_room", seats=2, public=True, rated=True))["result"]["room"]
            assert (await cy.call("join", room=room, name="Cy"))["code"] == "identity_required"
            await ann.join(room, "Ann")
            await bob.join(room, "Bob")
            listed = (await http.get(f"/rooms/{room}")).json()
            assert listed["state"]["rated"] is True
            await ann.ok("start")
            over = await play_game({c.player: c for c in (ann, bob) if c.player}, ann)
            told = await ann.wait_event(lambda e: e["type"] == "ratings")
            assert told["seq"] > over["seq"]
            assert (await bob.wait_event(lambda e: e["type"] == "ratings")) == told
        finally:
            for client in (ann, bob, cy):
                await client.close()

        lines = {line["identity"]: line for line in told["players"]}
        assert set(lines) == {ann_id, bob_id}
        assert all(line["before"] == 1500 and line["provisional"] for line in lines.values())
        places = {r["player"]: r["place"] for r in over["results"]}
        by_identity = {ann_id: ann.player, bob_id: bob.player}
        first, second = sorted(lines, key=lambda i: places[by_identity[i]])
        if places[by_identity[first]] < places[by_identity[second]]:
            assert lines[first]["after"] > 1500 > lines[second]["after"]

        game = await archived(http, f"/games/{room}")
        assert game["rated"] is True
        board = (await http.get("/leaderboards/result", params={"limit": 1})).json()
        assert (board["players"], len(board["rows"])) == (2, 1)
        top = max(line["after"] for line in lines.values())
        [row] = board["rows"]
        assert lines[row["player"]]["after"] == top  # either of two after a tie
        assert row == {
            "rank": 1,
            "player": row["player"],
            "name": "Ann" if row["player"] == ann_id else "Bob",
            "value": top,
            "provisional": True,
        }
        near = (await http.get("/leaderboards/result", params={"around": second})).json()
        rows = [r["player"] for r in near["rows"]]
        assert sorted(rows) == sorted([first, second])
        assert [lines[p]["after"] for p in rows] == sorted(
            (lines[p]["after"] for p in rows), reverse=True
        )
        today = (await http.get("/leaderboards/best_score?period=today")).json()
        totals = {r["player"]: r["total"] for r in over["results"]}
        assert {r["player"]: r["value"] for r in today["rows"]} == {
            ann_id: totals[ann.player],
            bob_id: totals[bob.player],
        }
        for path, status, code in (
            ("/leaderboards/luck", 404, "unknown_board"),
            ("/leaderboards/result?period=month", 400, "unknown_period"),
            ("/leaderboards/result?family=poker", 400, "unknown_period"),
            ("/leaderboards/result?limit=0", 400, "out_of_range"),
            ("/leaderboards/result?limit=x", 400, "invalid_field"),
        ):
            reply = await http.get(path)
            assert (reply.status_code, reply.json()["code"]) == (status, code), path
        profile = (await http.get(f"/players/{first}")).json()
        assert profile["ratings"]["yahtzee"]["rating"] == lines[first]["after"]
        assert profile["ratings"]["yahtzee"]["rated_games"] == 1

    # the leaderboards lost from Redis come back from PostgreSQL with the next process
    client = aioredis.Redis.from_url(redis_url)
    try:
        keys = [k async for k in client.scan_iter(match=f"{redis_prefix}{{lb}}*")]
        assert keys
        await client.delete(*keys)
    finally:
        await client.aclose()
    server.kill()
    again = start_server()
    async with httpx.AsyncClient(base_url=again.http, timeout=TIMEOUT) as http:
        rebuilt = (await http.get("/leaderboards/result", params={"limit": 1})).json()
        assert rebuilt["rows"] == board["rows"]
