"""The sandbox (``yahtzee serve --sandbox``, SPEC.md 13.15) against a real server process:
seeded dice replay, rooms that start at a position (the Joker, the last turn), typed refusals
of impossible positions, and no sandbox route at all on a normal server."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from typing import Any

import httpx
import pytest
from procs import ServerProcess, StartServer, sandbox_example
from wsclient import WsClient

Msg = dict[str, Any]

BLANK = {"name": "Ann"}
JOKER_CARD = {"yahtzee": 50, "fives": 15, "aces": 3, "twos": 6}


@pytest.fixture
def sandbox(start_server: StartServer) -> ServerProcess:
    return start_server(args=["--sandbox"])


async def create(server: ServerProcess, body: Msg, status: int = 201) -> Msg:
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{server.http}/sandbox/rooms", json=body)
    assert answer.status_code == status, answer.text
    found: Msg = answer.json()
    return found


async def take_seat(server: ServerProcess, room: Msg, seat: int = 0) -> WsClient:
    """A connection that took a position room's seat with ``rejoin`` (its snapshot read)."""
    client = await WsClient(server.ws, "json", f"seat{seat}").connect()
    token = room["seats"][seat]["token"]
    await client.ok("rejoin", room=room["room"], token=token)
    await client.wait_for(lambda: client.snapshots)
    client.player = room["seats"][seat]["player"]
    return client


async def roll(client: WsClient, keep: list[int]) -> Msg:
    reply = await client.ok("roll", keep=keep)
    return await client.wait_event(lambda e: e["type"] == "rolled" and e["seq"] == reply["seq"])


async def three_rolls(server: ServerProcess, seed: str) -> list[list[int]]:
    room = await create(server, {"seed": seed, "position": {"players": [BLANK]}})
    client = await take_seat(server, room)
    try:
        first = await roll(client, [])
        second = await roll(client, [0, 1])
        third = await roll(client, [4])
        return [first["dice"], second["dice"], third["dice"]]
    finally:
        await client.close()


async def lobby_game_first_roll(server: ServerProcess, seed: str) -> list[int]:
    room = await create(server, {"seed": seed, "seats": 1})
    client = await WsClient(server.ws, "msgpack", "ann").connect()
    try:
        await client.join(room["room"], "Ann", invite_code=room["invite_code"], seed="ann")
        await client.ok("start")
        rolled = await roll(client, [])
        dice: list[int] = rolled["dice"]
        return dice
    finally:
        await client.close()


def test_the_same_seed_and_commands_give_the_same_dice(sandbox: ServerProcess) -> None:
    async def scenario() -> None:
        again = await asyncio.gather(three_rolls(sandbox, "seed-1"), three_rolls(sandbox, "seed-1"))
        assert again[0] == again[1]
        other = await three_rolls(sandbox, "seed-2")
        assert other != again[0]  # 15 dice equal by chance: 6**-15
        # a lobby room too: the seats' join.seed is part of the same commands
        lobby = [await lobby_game_first_roll(sandbox, "lobby") for _ in range(2)]
        assert lobby[0] == lobby[1]

    asyncio.run(scenario())


def test_a_position_room_plays_the_forced_joker(sandbox: ServerProcess) -> None:
    """Ann has 50 in YAHTZEE and her FIVES filled, and rolled five 5s: the extra Yahtzee pays
    +100 and, the upper box being taken, any lower box takes it at full value."""

    async def scenario() -> None:
        position = {
            "players": [{"name": "Ann", "scores": JOKER_CARD}, {"name": "Bob"}],
            "turn": 0,
            "dice": [5, 5, 5, 5, 5],
            "rolls_used": 1,
        }
        room = await create(sandbox, {"seed": "joker", "position": position})
        assert [s["name"] for s in room["seats"]] == ["Ann", "Bob"]
        ann = await take_seat(sandbox, room)
        try:
            state = ann.snapshots[0]["state"]
            me = state["players"][0]
            assert me["scorecard"]["yahtzee"] == 50
            assert me["scorecard"]["fives"] == 15
            assert state["status"] == "playing"
            assert state["current_player"] == ann.player
            assert state["dice"] == [5, 5, 5, 5, 5]
            assert state["rolls_left"] == 2
            reply = await ann.ok("score", box="full_house")
            scored = await ann.wait_event(
                lambda e: e["type"] == "scored" and e["seq"] <= reply["seq"] and not e["automatic"]
            )
            assert (scored["points"], scored["joker"], scored["yahtzee_bonus"]) == (25, True, 100)
            turn = await ann.wait_event(
                lambda e: (
                    e["type"] == "turn_changed"
                    and e["seq"] > 0
                    and e["player"] == room["seats"][1]["player"]
                )
            )
            assert turn["round"] == 1
        finally:
            await ann.close()

    asyncio.run(scenario())


def test_the_position_is_in_the_log_as_events_a_client_knows(sandbox: ServerProcess) -> None:
    """``scored`` (automatic) for each box of the position, ``turn_changed``, ``rolled``: the
    events from seq 1 end at the snapshot's seq."""

    async def scenario() -> None:
        position = {"players": [{"name": "Ann", "scores": JOKER_CARD}], "dice": [2, 2, 3, 3, 3],
                    "rolls_used": 2, "held": [2, 3, 4]}  # fmt: skip
        room = await create(sandbox, {"seed": "log", "position": position})
        ann = await WsClient(sandbox.ws, "json", "ann").connect()
        try:
            token = room["seats"][0]["token"]
            rejoined = await ann.ok("rejoin", room=room["room"], token=token, last_seq=0)
            assert rejoined["result"]["resumed"] is True
            await ann.wait_for(lambda: any(e["seq"] == rejoined["seq"] for e in ann.events))
            assert not ann.snapshots
            log = [e for e in ann.events if e["type"] not in ("spectators",)]
            scored = {e["box"]: e["points"] for e in log if e["type"] == "scored"}
            assert scored == JOKER_CARD
            assert all(e["automatic"] for e in log if e["type"] == "scored")
            rolled = next(e for e in log if e["type"] == "rolled")
            assert rolled["dice"] == [2, 2, 3, 3, 3]
            assert rolled["held"] == [2, 3, 4]
            assert rolled["rolls_left"] == 1
            full_house = next(p for p in rolled["preview"] if p["box"] == "full_house")
            assert full_house["points"] == 25
        finally:
            await ann.close()

    asyncio.run(scenario())


def test_a_position_at_the_last_turn_ends_the_game(sandbox: ServerProcess) -> None:
    async def scenario() -> None:
        card = {"aces": 3, "twos": 6, "threes": 9, "fours": 12, "fives": 15, "sixes": 18,
                "three_of_a_kind": 20, "four_of_a_kind": 0, "full_house": 25,
                "small_straight": 30, "large_straight": 40, "yahtzee": 0}  # fmt: skip
        position = {"players": [{"name": "Ann", "scores": card}], "dice": [6, 6, 5, 4, 1],
                    "rolls_used": 3}  # fmt: skip
        room = await create(sandbox, {"seed": "last", "position": position})
        ann = await take_seat(sandbox, room)
        try:
            assert ann.snapshots[0]["state"]["rolls_left"] == 0
            await ann.ok("score", box="chance")
            over = await ann.wait_event(lambda e: e["type"] == "game_over")
            # 63 in the upper boxes: +35; 115 in the lower ones; 22 in chance
            assert over["results"][0]["total"] == 63 + 35 + 115 + 22
        finally:
            await ann.close()

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"position": {"players": [BLANK]}}, "missing_field"),
        ({"seed": "s", "position": {"players": [{"name": "A", "scores": {"fives": 7}}]}},
         "invalid_field"),
        ({"seed": "s", "position": {"players": [{"name": "A", "yahtzee_bonus": 100}]}},
         "invalid_field"),
        ({"seed": "s", "position": {"players": [BLANK], "dice": [1, 2, 3, 4, 5]}},
         "invalid_field"),
        ({"seed": "s", "position": {"players": [BLANK], "turn": 1}}, "invalid_field"),
        ({"seed": "s", "position": {"players": [BLANK], "rolls_used": 4}}, "out_of_range"),
        ({"seed": "s", "seats": 9}, "out_of_range"),
    ],
)  # fmt: skip
def test_an_impossible_request_is_refused_with_a_typed_code(
    sandbox: ServerProcess, body: Msg, code: str
) -> None:
    answer = asyncio.run(create(sandbox, body, status=400))
    assert answer["code"] == code


def test_a_normal_server_has_no_sandbox(start_server: StartServer) -> None:
    server = start_server()
    answer = httpx.post(f"{server.http}/sandbox/rooms", json={"seed": "s"})
    assert answer.status_code == 404


def test_the_spec_python_example_runs_against_the_sandbox(sandbox: ServerProcess) -> None:
    code = sandbox_example("python").replace("127.0.0.1:8000", f"127.0.0.1:{sandbox.port}")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-3000:]
