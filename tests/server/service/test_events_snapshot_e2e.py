"""Events and snapshots agree: a room state built by applying the events a client received
equals the snapshot the server sends at the same ``seq``, field by field, in both encodings.

Hypothesis draws whole games (seats, rules and variants, turn timer, the encodings of the
player who follows the room and of the spectator who takes the snapshot, how each person
rolls, holds and scores, and computer players: their levels, whether they are seated by
``create_room.computers`` or by ``add_computer``, one added and removed again in the lobby,
their pause) and plays them against a real server. Computers move on their own, so the
spectator may arrive in the middle of their turns: the host's model is compared at the
spectator's seq exactly. The host's connection follows
the room from its join snapshot through :class:`clients.model.RoomModel` (the client library's
reducer, SPEC.md 10.7); after the drawn number of turns a spectator's snapshot is compared with
it, and with the HTTP API's snapshot. Every frame of either connection (and the HTTP snapshot)
also carries every field of its message type, nested objects included: absent never stands
for null (SPEC.md 4.4), so a field is present in an event exactly when it is present in the
snapshot (``player_joined.computer`` and ``players[].computer`` are both null for a person).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any

import httpx
import msgpack
import msgspec
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from procs import ServerProcess, StartServer
from wsclient import WsClient

from clients.model import RoomModel
from protocol import messages as pm
from protocol.codec import decode_server
from protocol.transport import Encoding

#: fields of the model that only events can tell (not in RoomState), and the spectator count,
#: which is coalesced and not tied to a seq (SPEC.md 8.13)
EVENT_ONLY = frozenset(
    {"yahtzee_bonus_pending", "turn_over", "roll_offs", "results", "dice_commitment", "seeds",
     "server_seed", "spectators"}
)  # fmt: skip


def raw(frame: bytes | str) -> Any:
    return json.loads(frame) if isinstance(frame, str) else msgpack.unpackb(frame)


def assert_complete(value: Any, typed: Any, where: str) -> None:
    """Every field of ``typed`` (a decoded message or object) is present in ``value`` (the same
    frame as plain JSON or MessagePack data), nested objects included."""
    if isinstance(typed, msgspec.Struct):
        assert isinstance(value, dict), where
        for info in msgspec.structs.fields(typed):
            if getattr(typed, info.name) is msgspec.UNSET:
                continue  # "absent when unused" (SPEC.md 4.4): never null, written when set
            assert info.encode_name in value, f"{where}: no {info.encode_name} in {value}"
            assert_complete(value[info.encode_name], getattr(typed, info.name), where)
    elif isinstance(typed, tuple | list):
        assert isinstance(value, list), where
        for item, typed_item in zip(value, typed, strict=True):
            assert_complete(item, typed_item, where)


def model_state(model: RoomModel) -> dict[str, Any]:
    fields = dataclasses.asdict(model)
    return {k: v for k, v in fields.items() if k not in EVENT_ONLY}


class Follower:
    """The room as one connection's events build it."""

    def __init__(self, client: WsClient) -> None:
        self.client = client
        self.encoding = Encoding(client.encoding)
        self.done = 0  # frames read so far
        self.model: RoomModel | None = None

    def sync(self, upto: int | None = None) -> RoomModel | None:
        """Apply the frames received since the last call; with ``upto``, stop before the first
        event above that seq (computers may have moved since), so the model is at ``upto``."""
        frames = self.client.frames
        while self.done < len(frames):
            frame = frames[self.done]
            message = decode_server(frame, self.encoding)
            if upto is not None and isinstance(message, pm.Event) and message.seq > upto:
                break
            self.done += 1
            assert_complete(raw(frame), message, f"{self.client.name} {message}")
            if isinstance(message, pm.Snapshot):
                self.model = RoomModel.from_snapshot(message)
            elif isinstance(message, pm.Event) and self.model is not None:
                self.model.apply(message)
        return self.model


PERSON = st.fixed_dictionaries(
    {
        "rolls": st.integers(1, 3),
        "holds": st.lists(st.integers(0, 31), min_size=2, max_size=2),
        "box": st.integers(0, 12),
    }
)
LEVELS = st.sampled_from([level.value for level in pm.Level])
GAMES = st.fixed_dictionaries(
    {
        "people": st.integers(1, 3),
        "computers": st.lists(LEVELS, max_size=2),
        "computers_by": st.sampled_from(["create_room", "add_computer"]),
        "computer_removed": st.booleans(),  # one more added, then removed in the lobby
        "computer_delay_ms": st.sampled_from([0, 30]),
        "rules": st.sampled_from(["yahtzee", "yatzy"]),
        "first_player": st.sampled_from(["roll_off", "seat_order", "random"]),
        "bonus_turn": st.sampled_from(["off", "on"]),
        "turn_seconds": st.sampled_from([0, 60]),
        "host_encoding": st.sampled_from(["json", "msgpack"]),
        "spectator_encoding": st.sampled_from(["json", "msgpack"]),
        "turns": st.lists(PERSON, max_size=40),
    }
).map(lambda plan: official_rules_with_computers(plan))


def official_rules_with_computers(plan: dict[str, Any]) -> dict[str, Any]:
    """Computers play from the strategy table of their room's rules; the session builds the
    official rules' table once (``official_table``), so a game with computers (seated or only
    added and removed) is played under them rather than waiting minutes for another table."""
    if plan["computers"] or plan["computer_removed"]:
        return {**plan, "rules": "yahtzee", "bonus_turn": "off"}
    return plan


async def play(server: ServerProcess, plan: dict[str, Any]) -> None:
    encodings = [plan["host_encoding"], "msgpack", "json"]
    people = [
        await WsClient(server.ws, encodings[i], f"p{i}").connect() for i in range(plan["people"])
    ]
    clients = list(people)
    try:
        host = people[0]
        at_create = plan["computers"] if plan["computers_by"] == "create_room" else []
        created = await host.ok(
            "create_room",
            seats=plan["people"] + len(plan["computers"]) + plan["computer_removed"],
            public=False,
            turn_seconds=plan["turn_seconds"],
            options={
                "rules": plan["rules"],
                "first_player": plan["first_player"],
                "bonus_turn": plan["bonus_turn"],
            },
            computers=[{"level": level, "name": None} for level in at_create],
            computer_delay_ms=plan["computer_delay_ms"],
        )
        room, invite = created["result"]["room"], created["result"]["invite_code"]
        await host.join(room, "P0", invite_code=invite, seed="seed 0")
        await seat_computers(host, plan)
        for i, person in enumerate(people[1:], start=1):
            await person.join(room, f"P{i}", invite_code=invite, seed=f"seed {i}")
        by_player = {p.player: p for p in people}
        follower = Follower(host)
        await host.ok("start")
        for turn in plan["turns"]:
            model = await host.wait_for(  # computers move on their own meanwhile
                lambda: (
                    (m := follower.sync()) is not None
                    and (m.current_player in by_player or m.status.value == "finished")
                    and m
                )
            )
            if model.status.value == "finished":
                break
            client = by_player[model.current_player]
            await play_turn(client, turn)
        spectator = await WsClient(server.ws, plan["spectator_encoding"], "watcher").connect()
        clients.append(spectator)
        watching = await spectator.ok("spectate", room=room, invite_code=invite)
        await spectator.wait_for(lambda: spectator.snapshots)
        seen = Follower(spectator)
        # the snapshot alone: computers' events after it may have arrived already
        snapshot_model = seen.sync(upto=watching["seq"])
        assert snapshot_model is not None
        assert snapshot_model.seq == watching["seq"]
        followed = await host.wait_for(
            lambda: (
                (m := follower.sync(upto=watching["seq"])) is not None
                and m.seq == watching["seq"]
                and m
            )
        )
        assert model_state(followed) == model_state(snapshot_model)
        levels = sorted(p.computer.value for p in followed.players if p.computer is not None)
        assert levels == sorted(plan["computers"])
        moved = {e["player"] for e in host.events if e["type"] == "rolled"} - set(by_player)
        event(f"computers that rolled: {len(moved)}")
        # the HTTP API's snapshot (13.3) carries the same fields and, at the same seq, the same
        # state
        async with httpx.AsyncClient() as http:
            answer = await http.get(
                f"{server.http}/rooms/{room}", headers={"X-Invite-Code": invite}
            )
        assert answer.status_code == 200, answer.text
        typed = decode_server(answer.text, Encoding.JSON)
        assert isinstance(typed, pm.Snapshot)
        assert_complete(answer.json(), typed, "GET /rooms/{id}")
        if typed.seq == snapshot_model.seq:
            assert model_state(RoomModel.from_snapshot(typed)) == model_state(snapshot_model)
    finally:
        for client in clients:
            await client.close()


async def seat_computers(host: WsClient, plan: dict[str, Any]) -> None:
    """The host seats the computers not seated by ``create_room`` and, if drawn, adds one more
    and removes it (its seat is freed, the players above move down: SPEC.md 6.17)."""
    if plan["computer_removed"]:
        added = await host.ok("add_computer", level="easy", name=None)
        await host.ok("remove_computer", player=added["result"]["player"])
    if plan["computers_by"] == "add_computer":
        for level in plan["computers"]:
            added = await host.ok("add_computer", level=level, name=None)
            assert added["result"]["player"] not in (None, host.player)


async def play_turn(client: WsClient, turn: dict[str, Any]) -> None:
    rolled: dict[str, Any] | None = None
    for n in range(turn["rolls"]):
        keep: list[int] = []
        if rolled is not None:
            mask = turn["holds"][n - 1]
            keep = [i for i in range(5) if mask >> i & 1]
            if len(keep) == 5:
                break
        reply = await client.call("roll", keep=keep)
        if reply["type"] == "error":  # the turn ended (timer) or rolls ran out
            return
        rolled = await client.wait_event(lambda e, s=reply["seq"]: e["seq"] == s)
    assert rolled is not None
    allowed = [p["box"] for p in rolled["preview"] if p["allowed"]]
    if allowed:
        await client.call("score", box=allowed[turn["box"] % len(allowed)])
    else:
        await client.call("take_bonus")


@pytest.fixture
def server(start_server: StartServer) -> ServerProcess:
    """One server for every example (each creates a room: no creation quota here)."""
    return start_server(env={"YAHTZEE_ROOMS_PER_MINUTE_PER_ADDRESS": "100000"})


@pytest.mark.usefixtures("official_table")
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(plan=GAMES)
def test_state_from_events_equals_the_snapshot(server: ServerProcess, plan: dict[str, Any]) -> None:
    asyncio.run(play(server, plan))
