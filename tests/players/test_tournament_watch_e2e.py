"""Watching live tournament entries (SPEC.md 13.23) through a real server process, real
WebSocket play, a real Redis and a real PostgreSQL.

Nobody waits a minute here: to make an entry's events a minute old, the test moves their
recorded commit times a minute back in Redis, as the passing of time would make them (the
server's clock is the wall clock)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import redis.asyncio as aioredis
from procs import StartServer, scaled
from test_players_e2e import new_player
from test_tournaments_e2e import AS_ADMIN, ENV, TIMEOUT, bearer, bounded, play_turns, seated

from clients import tournaments

DELAY = 60


async def age_commits(redis_url: str, prefix: str, tid: str, room: str, seconds: int) -> None:
    """Date every recorded commit of the entry ``seconds`` earlier (as if that time passed)."""
    key = f"{prefix}{{t:{tid}}}:commits:{room}"
    client = aioredis.Redis.from_url(redis_url)
    try:
        commits = await client.zrange(key, 0, -1, withscores=True)
        assert commits, "no commit time recorded"
        await client.zadd(key, {seq: at - seconds * 1000 for seq, at in commits})
    finally:
        await client.aclose()


async def test_a_live_entry_is_watched_a_delay_late_and_never_with_its_secrets(
    start_server: StartServer, redis_url: str, redis_prefix: str
) -> None:
    server = start_server(ENV)
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        now = int(time.time() * 1000)
        spec = {"name": "Watched cup", "ends_ms": now + 3_600_000, "watch_delay_seconds": DELAY}
        made = await http.post("/tournaments", json=spec, headers=AS_ADMIN)
        assert made.status_code == 201, made.text
        tid = made.json()["tournament"]
        assert (await http.get(f"/tournaments/{tid}")).json()["watch_delay_seconds"] == DELAY

        _, ann_token = await new_player(http, "Ann")
        entry = (await http.post(f"/tournaments/{tid}/entries", headers=bearer(ann_token))).json()
        room = entry["room"]
        ann = await seated(server, entry, "Ann")
        await play_turns(ann, range(2))
        played = max(event["seq"] for event in ann.events)
        await ann.close()

        board = (await http.get(f"/tournaments/{tid}/standings")).json()
        assert [row["room"] for row in board["entries"]] == [room]
        assert all("invite_code" not in row for row in board["entries"])

        path = f"/tournaments/{tid}/entries/{room}/events"
        fresh = await http.get(path)
        assert fresh.status_code == 200, fresh.text
        assert fresh.json() == {"tournament": tid, "room": room, "events": [], "next_after": None}

        await age_commits(redis_url, redis_prefix, tid, room, DELAY + 1)
        shown = await asyncio.to_thread(tournaments.watch_entry, server.http, tid, room)
        seqs = [event["seq"] for event in shown]
        assert seqs == list(range(1, len(seqs) + 1))
        assert seqs[-1] >= played  # every move Ann made, now a minute old
        assert any(event["type"] == "rolled" for event in shown)
        answer = (await http.get(path)).text
        assert entry["token"] not in answer

        refusals = {
            f"/tournaments/tNope/entries/{room}/events": (404, "tournament_not_found"),
            f"/tournaments/{tid}/entries/no-such-room/events": (404, "room_not_found"),
            f"{path}?limit=0": (400, "out_of_range"),
            f"{path}?after=x": (400, "invalid_field"),
        }
        for url, (status, code) in refusals.items():
            refused = await http.get(url)
            assert (refused.status_code, refused.json()["code"]) == (status, code), url


async def test_without_a_delay_an_entry_is_shown_only_after_the_end(
    start_server: StartServer,
) -> None:
    server = start_server(ENV)
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        ends = int(time.time() * 1000) + int(scaled(8) * 1000)
        made = await http.post("/tournaments", json={"ends_ms": ends}, headers=AS_ADMIN)
        tid = made.json()["tournament"]
        assert made.json()["watch_delay_seconds"] is None
        _, bob_token = await new_player(http, "Bob")
        entry = (await http.post(f"/tournaments/{tid}/entries", headers=bearer(bob_token))).json()
        bob = await seated(server, entry, "Bob")
        await play_turns(bob, range(1))
        await bob.close()

        path = f"/tournaments/{tid}/entries/{entry['room']}/events"
        refused = await http.get(path)
        assert refused.status_code == 409
        assert refused.json()["code"] == "watch_not_allowed"

        async def final_standings() -> Any:
            body = (await http.get(f"/tournaments/{tid}/standings")).json()
            return body if body["final"] else None

        final = await bounded(final_standings, "the close", within=scaled(60))
        after_end = await http.get(path)
        assert after_end.status_code == 200
        log = (
            await http.get(
                f"/rooms/{entry['room']}/events",
                headers={"X-Invite-Code": final["entries"][0]["invite_code"]},
            )
        ).json()
        assert after_end.json()["events"] == log["events"]
        assert final["entries"][0]["invite_code"] not in after_end.text
        assert entry["token"] not in after_end.text
