"""Duplicate tournaments through real server processes, real WebSocket clients, a real Redis and
a real PostgreSQL: entering (once, not after the end), the same dice for the same holds across
entries, nothing that leaks the seed before the close, a server killed mid-entry, the live and
the final standings, ``yahtzee verify`` on every entry (and a forged seed refused), the daily
tournament made once by two processes."""

from __future__ import annotations

import asyncio
import functools
import time
from typing import Any

import httpx
import pytest
from procs import ServerProcess, StartServer, scaled
from test_players_e2e import HTTP_VECTORS, new_player
from wsclient import Msg, WsClient

from clients import tournaments, verify
from protocol.duplicate import duplicate_roll
from protocol.fairdice import Status
from server.cli import main as cli_main
from server.solver import Table, computer_player
from server.solver.duplicate import total_on_dice

TIMEOUT = 30.0
ADMIN = "admin-secret-for-tests"
ENV = {
    "YAHTZEE_ADMIN_TOKEN": ADMIN,
    "YAHTZEE_DAILY_TOURNAMENT": "0",
    "YAHTZEE_TOURNAMENT_POLL_SECONDS": "0.2",
}
AS_ADMIN = {"Authorization": f"Bearer {ADMIN}"}


def fields_of(vector: str) -> set[str]:
    """The fields of the protocol's HTTP vector's body."""
    return set(HTTP_VECTORS[vector]["body"])


def row_fields_of(vector: str) -> set[str]:
    return set(HTTP_VECTORS[vector]["body"]["entries"][0])


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def bounded(check: Any, what: str, within: float = TIMEOUT) -> Any:
    """Poll ``check()`` (an awaitable factory) until it returns a truthy value (bounded)."""
    deadline = time.monotonic() + within
    while True:
        found = await check()
        if found:
            return found
        assert time.monotonic() < deadline, f"{what}: not in time"
        await asyncio.sleep(0.1)  # polling interval of a bounded wait


async def seated(server: ServerProcess, entry: dict[str, Any], name: str) -> WsClient:
    """A client that took back the entry's seat with its token (as after any reconnect)."""
    client = await WsClient(server.ws, "json", name).connect()
    reply = await client.ok("rejoin", room=entry["room"], token=entry["token"])
    client.player = reply["result"]["player"]
    await client.wait_for(lambda: client.snapshots)
    return client


def rolls_of(client: WsClient) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
    """(dice, held) of every ``rolled`` event the client saw, in order."""
    return [(tuple(e["dice"]), tuple(e["held"])) for e in client.events if e["type"] == "rolled"]


def first_throws(client: WsClient) -> list[tuple[int, ...]]:
    """The dice of the first throw of every turn the client saw."""
    firsts: list[tuple[int, ...]] = []
    turn_began = True
    for event in client.events:
        if event["type"] == "rolled" and turn_began:
            firsts.append(tuple(event["dice"]))
            turn_began = False
        elif event["type"] == "scored":
            turn_began = True
    return firsts


async def play_turns(client: WsClient, turns: range, reroll_all: bool = False) -> Msg:
    """Play ``turns`` deterministically: the holds depend only on the dice (keep the most
    common face; ``reroll_all``: keep nothing), then score the best box."""
    last: Msg = {}
    for turn in turns:
        rolled: Msg | None = None
        for _ in range(1 + turn % 3):
            keep: list[int] = []
            if rolled is not None and not reroll_all:
                dice = rolled["dice"]
                common = max(sorted(set(dice)), key=dice.count)
                keep = [i for i, d in enumerate(dice) if d == common]
                if len(keep) == 5:
                    break
            ack = await client.ok("roll", keep=keep)
            rolled = await client.wait_event(lambda e, s=ack["seq"]: e["seq"] == s)
        assert rolled is not None
        allowed = [p for p in rolled["preview"] if p["allowed"]]
        box = max(allowed, key=lambda p: (p["points"], p["box"]))["box"]
        ack = await client.ok("score", box=box)
        last = await client.wait_event(lambda e, s=ack["seq"]: e["seq"] == s)
    return last


@pytest.mark.usefixtures("official_table")
async def test_a_duplicate_tournament_from_entry_to_verified_results(
    start_server: StartServer, official_table: Table
) -> None:
    server = start_server(ENV)
    seen_before_close: list[str] = []  # every frame and HTTP answer before the end time
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:

        async def get(path: str, **kw: Any) -> httpx.Response:
            reply = await http.get(path, **kw)
            seen_before_close.append(reply.text)
            return reply

        now = int(time.time() * 1000)
        spec = {"name": "Test cup", "ends_ms": now + int(scaled(25) * 1000)}
        refused = await http.post("/tournaments", json=spec)
        assert refused.status_code == 403
        assert refused.json()["code"] == "not_allowed"
        made = await http.post("/tournaments", json=spec, headers=AS_ADMIN)
        assert made.status_code == 201, made.text
        cup = made.json()
        tid = cup["tournament"]
        assert cup["status"] == "open"
        assert set(cup) == fields_of("tournament_closed")
        assert cup["seed"] is None
        assert len(cup["dice_commitment"]) == 64

        people = {n: await new_player(http, n) for n in ("Ann", "Bob", "Cyd", "Dan", "Eve")}
        entries: dict[str, dict[str, Any]] = {}
        for name, (_, token) in people.items():
            reply = await http.post(f"/tournaments/{tid}/entries", headers=bearer(token))
            assert reply.status_code == 201, reply.text
            entries[name] = reply.json()
            assert entries[name]["dice_commitment"] == cup["dice_commitment"]
        again = await http.post(f"/tournaments/{tid}/entries", headers=bearer(people["Ann"][1]))
        assert again.status_code == 409
        assert again.json()["code"] == "already_entered"
        missing = await http.post("/tournaments/tNope/entries", headers=bearer(people["Ann"][1]))
        assert missing.json()["code"] == "tournament_not_found"

        clients = {n: await seated(server, entries[n], n) for n in ("Ann", "Bob", "Cyd", "Eve")}
        ann, bob, cyd, eve = (clients[n] for n in ("Ann", "Bob", "Cyd", "Eve"))
        hint = await ann.call("hint")
        assert hint["type"] == "error"
        assert hint["code"] == "hints_disabled"
        ann_over = await play_turns(ann, range(13))
        bob_over = await play_turns(bob, range(13))
        assert ann_over["type"] == bob_over["type"] == "game_over"
        assert ann_over.get("server_seed") is None  # revealed by the tournament, at its end
        # the same holds got the same dice, roll for roll
        assert rolls_of(ann) == rolls_of(bob)
        assert ann_over["results"][0]["total"] == bob_over["results"][0]["total"]
        # other holds: every first throw of a turn is the same five dice still
        await play_turns(cyd, range(13), reroll_all=True)
        assert first_throws(cyd) == first_throws(ann)
        assert len(first_throws(ann)) == 13
        await play_turns(eve, range(1))

        board = (await get(f"/tournaments/{tid}/standings")).json()
        assert board["status"] == "open"
        assert set(board) == fields_of("tournament_standings_open")
        assert all(
            set(row) == row_fields_of("tournament_standings_open") for row in board["entries"]
        )
        assert board["optimal_score"] is None
        by_name = {row["name"]: row for row in board["entries"]}
        assert by_name["Ann"]["score"] == ann_over["results"][0]["total"]
        assert by_name["Dan"]["score"] == 0
        assert all("room" not in row for row in board["entries"])  # no spectating before the end

        # Dan plays three turns, the server dies, another one serves the rest of his entry
        dan = await seated(server, entries["Dan"], "Dan")
        await play_turns(dan, range(3))
        for client in (*clients.values(), dan):
            seen_before_close.extend(str(f) for f in client.frames)
            await client.close()
        server.kill()
        server = start_server(ENV)
        # a new name: command ids ("<name>-<n>") must not repeat those of the first client
        dan = await seated(server, entries["Dan"], "Dan-again")
        dan_over = await play_turns(dan, range(3, 13))
        assert dan_over["type"] == "game_over"
        seen_before_close.extend(str(f) for f in dan.frames)
        await dan.close()

    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        for name in ("Ann", "Dan"):
            room = entries[name]["room"]
            seen_before_close.append((await http.get(f"/rooms/{room}")).text)
            seen_before_close.append((await http.get(f"/tournaments/{tid}")).text)

        async def closed() -> Any:
            body = (await http.get(f"/tournaments/{tid}/standings")).json()
            return body if body["final"] else None

        final = await bounded(closed, "the close", within=scaled(60))
        over = (await http.get(f"/tournaments/{tid}")).json()
        seed = over["seed"]
        assert over["status"] == "closed"
        assert set(over) == fields_of("tournament_closed")
        assert all(
            set(row) == row_fields_of("tournament_standings_final") for row in final["entries"]
        )
        assert isinstance(seed, str)
        assert not any(seed in text for text in seen_before_close)

        reference = computer_player("optimal", official_table)
        optimal = total_on_dice(reference, functools.partial(duplicate_roll, bytes.fromhex(seed)))
        assert final["optimal_score"] == over["optimal_score"] == optimal
        rows = {row["name"]: row for row in final["entries"]}
        assert rows["Ann"]["score"] == ann_over["results"][0]["total"]
        assert rows["Ann"]["place"] == rows["Bob"]["place"]
        assert rows["Eve"]["finished"] is False
        assert rows["Ann"]["finished"] is True
        assert 0.0 <= rows["Ann"]["accuracy"] <= 1.0
        places = [row["place"] for row in final["entries"]]
        assert places == sorted(places)

        for name in ("Ann", "Cyd", "Dan"):
            row = rows[name]
            code = verify.run(row["room"], server.http, row["invite_code"], tournament=tid)
            assert code == 0, name
        forged = "0" * 64
        code = verify.run(
            rows["Ann"]["room"],
            server.http,
            rows["Ann"]["invite_code"],
            tournament=tid,
            seed=forged,
        )
        assert code == 1

        # the Python library and `yahtzee tournament` read the same
        library = await asyncio.to_thread(tournaments.fetch_standings, server.http, tid)
        assert library == final
        verdict = await asyncio.to_thread(
            tournaments.verify, server.http, tid, rows["Bob"]["room"], rows["Bob"]["invite_code"]
        )
        assert verdict.status is Status.VERIFIED
        assert cli_main(["tournament", "standings", tid, "--url", server.http]) == 0

        late = await http.post(f"/tournaments/{tid}/entries", headers=bearer(people["Ann"][1]))
        assert late.status_code == 409
        assert late.json()["code"] == "tournament_closed"
        eve = await seated(server, entries["Eve"], "Eve-late")
        try:
            refused_roll = await eve.call("roll", keep=[])
            assert refused_roll["type"] == "error"
            assert refused_roll["code"] == "tournament_closed"
        finally:
            await eve.close()


async def test_two_processes_make_one_daily_tournament(start_server: StartServer) -> None:
    env = {**ENV, "YAHTZEE_DAILY_TOURNAMENT": "1"}
    first, second = start_server(env), start_server(env)
    async with httpx.AsyncClient(timeout=TIMEOUT) as http:

        async def dailies() -> Any:
            found = []
            for server in (first, second):
                body = (await http.get(f"{server.http}/tournaments")).json()
                found.append([t["tournament"] for t in body["tournaments"] if t["daily"]])
            return found if all(found) else None

        seen = await bounded(dailies, "the daily tournament")
        assert seen[0] == seen[1]
        assert len(seen[0]) == 1


async def test_refusals_limits_invites_and_who_may_create(start_server: StartServer) -> None:
    server = start_server({**ENV, "YAHTZEE_TOURNAMENTS_OPEN_TO": "identities"})
    async with httpx.AsyncClient(base_url=server.http, timeout=TIMEOUT) as http:
        (ann_id, ann), (_, bob) = await new_player(http, "Ann"), await new_player(http, "Bob")
        now = int(time.time() * 1000)
        hour = 3_600_000
        # any remembered player may create here; nobody anonymous
        anonymous = await http.post("/tournaments", json={"ends_ms": now + hour})
        assert anonymous.json()["code"] == "bad_player_token"
        bad = await http.post("/tournaments", json={"ends_ms": now - 1}, headers=bearer(ann))
        assert bad.status_code == 400
        assert bad.json()["code"] == "out_of_range"
        bonus = {"ends_ms": now + hour, "options": {"bonus_turn": "on"}}
        refused = await http.post("/tournaments", json=bonus, headers=bearer(ann))
        assert refused.json()["code"] == "invalid_field"

        later = {"starts_ms": now + hour, "ends_ms": now + 2 * hour}
        upcoming = (await http.post("/tournaments", json=later, headers=bearer(ann))).json()
        assert upcoming["status"] == "upcoming"
        early = await http.post(
            f"/tournaments/{upcoming['tournament']}/entries", headers=bearer(bob)
        )
        assert early.status_code == 409
        assert early.json()["code"] == "tournament_not_started"

        small = {"ends_ms": now + hour, "entry_limit": 1, "public": False}
        made = (await http.post("/tournaments", json=small, headers=bearer(ann))).json()
        tid, code = made["tournament"], made["invite_code"]
        assert (await http.get(f"/tournaments/{tid}")).json()["code"] == "tournament_not_found"
        invited = {"X-Invite-Code": code}
        assert (await http.get(f"/tournaments/{tid}", headers=invited)).status_code == 200
        listing = (await http.get("/tournaments")).json()
        assert listing["creation_open_to"] == "identities"  # Ann, a player, just created one
        listed = listing["tournaments"]
        assert tid not in {t["tournament"] for t in listed}  # invite-only: not listed
        assert upcoming["tournament"] in {t["tournament"] for t in listed}
        no_code = await http.post(f"/tournaments/{tid}/entries", headers=bearer(ann))
        assert no_code.json()["code"] == "tournament_not_found"
        first = await http.post(f"/tournaments/{tid}/entries", headers={**bearer(ann), **invited})
        assert first.status_code == 201
        full = await http.post(f"/tournaments/{tid}/entries", headers={**bearer(bob), **invited})
        assert full.status_code == 409
        assert full.json()["code"] == "tournament_full"
        board = (await http.get(f"/tournaments/{tid}/standings", headers=invited)).json()
        assert [row["name"] for row in board["entries"]] == ["Ann"]
        assert ann_id not in str(board)  # identities appear only in the final standings
